"""What a benchmark run measured on: the machine, the crawler's code, and where CPU went."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")


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
        "git_modified": git("status", "--porcelain", "--", "govsi", "tests").splitlines(),
        "govsi_sha256": digest.hexdigest()[:16],
    }


def _system_cpu() -> tuple[float, float]:
    """CPU seconds all CPUs spent busy, and stolen by the hypervisor, since boot."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    # user nice system idle iowait irq softirq steal
    return (f[0] + f[1] + f[2] + f[5] + f[6]) / TICK, f[7] / TICK


def proc_cpu(pid: int, with_children: bool = False) -> float:
    """utime+stime (and the reaped children's) of a process, in seconds; 0 once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    f = stat.rsplit(")", 1)[1].split()
    ticks = int(f[11]) + int(f[12]) + ((int(f[13]) + int(f[14])) if with_children else 0)
    return ticks / TICK


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d.name))
            except (OSError, IndexError, ValueError):
                continue
    return out


def postmaster_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None


@dataclass
class CpuSnapshot:
    children: float  # this process's reaped children: the crawl subprocess
    own: float  # this process: the simulated web's server threads
    postgres: float  # the postmaster, its reaped and its live backends
    system: float  # every process on the machine
    steal: float  # time the hypervisor gave our virtual CPUs to someone else

    @classmethod
    def take(cls, pg_pid: int | None = None) -> CpuSnapshot:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = resource.getrusage(resource.RUSAGE_SELF)
        pg = 0.0
        if pg_pid:
            pg = proc_cpu(pg_pid, True) + sum(proc_cpu(c) for c in _children(pg_pid))
        own_s = own.ru_utime + own.ru_stime
        return cls(kids.ru_utime + kids.ru_stime, own_s, pg, *_system_cpu())

    def since(self, before: CpuSnapshot) -> dict[str, float]:
        crawler = self.children - before.children
        server = self.own - before.own
        pg = self.postgres - before.postgres
        system = self.system - before.system
        return {
            "crawler": round(crawler, 2),
            "simweb_server": round(server, 2),
            "postgres": round(pg, 2),
            "everything_else": round(max(0.0, system - crawler - server - pg), 2),
            "stolen_by_hypervisor": round(self.steal - before.steal, 2),
        }


def run_at_commit(commit: str, argv: list[str]) -> int:
    """Run this benchmark on a ``git archive`` export of ``commit`` (with the bench code
    of the working tree), so that edits to the tree during the run change nothing."""
    here = Path(__file__).resolve().parent
    repo = here.parent
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
        (tree / "bench").mkdir(exist_ok=True)
        for f in here.glob("*.py"):
            shutil.copy2(f, tree / "bench" / f.name)
        env = {**os.environ, "PYTHONPATH": str(tree), "GOVSI_BENCH_COMMIT": sha}
        cmd = [sys.executable, "-m", "bench.crawl_speed", *argv]
        return subprocess.run(cmd, cwd=tree, env=env, check=False).returncode
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def write_result(path: Path, result: dict[str, Any]) -> None:
    """A benchmark's figures as JSON (values JSON lacks, such as paths, as text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n")
    print(f"wrote {path}", flush=True)
