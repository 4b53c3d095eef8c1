"""What a fresh interpreter has imported after running some code: the tests that keep a
process's memory free of a library it never uses."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from testkit.crawl import project_env


def loaded_after(code: str, modules: Iterable[str], cwd: Path | None = None) -> list[str]:
    """Which of ``modules`` are in ``sys.modules`` once a new Python (as a ``scrapy`` command
    of the project runs) has run ``code``; the code failing fails the test with its stderr."""
    wanted = sorted(modules)
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {wanted!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, env=project_env()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout.splitlines()[-1]))
