"""Where a benchmark's figures go, and how they are written."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.lib.sysinfo import code, machine

ROOT = Path(__file__).resolve().parents[2]  # the tree measured (its govsi is crawled)
RESULTS = ROOT / "bench" / "results"  # gitignored


def write_result(path: Path, result: dict[str, Any]) -> None:
    """A benchmark's figures as JSON (values JSON lacks, such as paths, as text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n")
    print(f"wrote {path}", flush=True)


def write_run(path: Path, args: argparse.Namespace, results: list[dict[str, Any]]) -> None:
    """A run's results with the machine, the code measured and the arguments, as JSON."""
    write_result(path, {
        "machine": machine(),
        "code": code(ROOT),
        "arguments": {k: str(v) for k, v in vars(args).items()},
        "results": results,
    })  # fmt: skip
