"""What a benchmark run measured on: the machine and the crawler's code."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def machine() -> dict[str, Any]:
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def code(root: Path) -> dict[str, Any]:
    """Which crawler was measured: the tree the crawl subprocess imports govsi from."""
    digest = hashlib.sha256()
    for f in sorted((root / "govsi").rglob("*.py")):
        digest.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())

    def git(*a: str) -> str:
        cmd = ["git", "-C", str(root), *a]
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()

    return {
        "root": str(root),
        # A --commit run measures a git export, which has no .git of its own.
        "git_commit": os.environ.get("GOVSI_BENCH_COMMIT") or git("rev-parse", "--short", "HEAD"),
        "git_modified": git(
            "status", "--porcelain", "--", "govsi", "testkit", "tests"
        ).splitlines(),
        "govsi_sha256": digest.hexdigest()[:16],
    }


def run_at_commit(commit: str, module: str, argv: list[str]) -> int:
    """Run ``python -m module argv`` on a ``git archive`` export of ``commit`` (with the
    bench code of the working tree, and its testkit where ``commit`` has none), so that
    edits to the tree during the run change nothing."""
    bench = Path(__file__).resolve().parents[1]
    repo = bench.parent
    sha = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", commit],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    tree = Path(tempfile.mkdtemp(prefix=f"govsi-bench-{sha}-"))
    try:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", sha], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        skip = shutil.ignore_patterns("results", "__pycache__")
        shutil.copytree(bench, tree / "bench", ignore=skip, dirs_exist_ok=True)
        # Before testkit, the harness the benchmarks import lived in tests/.
        if not (tree / "testkit").exists():
            shutil.copytree(repo / "testkit", tree / "testkit", ignore=skip)
        env = {**os.environ, "PYTHONPATH": str(tree), "GOVSI_BENCH_COMMIT": sha}
        cmd = [sys.executable, "-m", module, *argv]
        return subprocess.run(cmd, cwd=tree, env=env, check=False).returncode
    finally:
        shutil.rmtree(tree, ignore_errors=True)
