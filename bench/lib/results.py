"""Where a benchmark's figures go, and how they are written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the tree measured (its govsi is crawled)
RESULTS = ROOT / "bench" / "results"  # gitignored


def write_result(path: Path, result: dict[str, Any]) -> None:
    """A benchmark's figures as JSON (values JSON lacks, such as paths, as text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n")
    print(f"wrote {path}", flush=True)
