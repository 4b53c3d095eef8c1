"""Time, CPU and memory of processes, read from /proc (Linux): the one reader the
benchmarks use, and what they build on it."""

from __future__ import annotations

import os
import resource
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from testkit.crawl import descendants

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (ppid is [1], utime [11]);
    None once the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _kb(path: Path, *names: str) -> dict[str, int]:
    """The ``Name: 123 kB`` lines asked for of a /proc file (status, smaps_rollup), in kB;
    none once the process is gone."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    found = {}
    for line in lines:
        name, _, value = line.partition(":")
        if name in names:
            found[name] = int(value.split()[0])
    return found


def memory_mb(pid: int) -> tuple[float, float] | None:
    """(VmRSS, VmHWM) of a live process, in MB; None once it is gone or a zombie."""
    kb = _kb(Path(f"/proc/{pid}/status"), "VmRSS", "VmHWM")
    if "VmRSS" not in kb:
        return None
    return kb["VmRSS"] / 1024, kb.get("VmHWM", 0) / 1024


def rss_kb(pid: int) -> int:
    """Resident memory of a process in kB; 0 once it is gone."""
    return _kb(Path(f"/proc/{pid}/status"), "VmRSS").get("VmRSS", 0)


def pss_kb(pid: int) -> int:
    """Proportional set size of a process in kB (its shared pages divided among the
    processes sharing them); 0 once it is gone."""
    return _kb(Path(f"/proc/{pid}/smaps_rollup"), "Pss").get("Pss", 0)


def cpu_seconds(pid: int, with_children: bool = False) -> float:
    """utime+stime (and the reaped children's) of a process, in seconds; 0 once it is gone."""
    f = _stat(pid)
    if f is None:
        return 0.0
    ticks = int(f[11]) + int(f[12]) + ((int(f[13]) + int(f[14])) if with_children else 0)
    return ticks / TICK


def system_cpu() -> tuple[float, float]:
    """CPU seconds all CPUs spent busy, and stolen by the hypervisor, since boot."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    # user nice system idle iowait irq softirq steal
    return (f[0] + f[1] + f[2] + f[5] + f[6]) / TICK, f[7] / TICK


def per_core_busy() -> list[float]:
    """CPU seconds each CPU spent busy since boot (the ``cpuN`` lines of /proc/stat)."""
    busy = []
    for line in Path("/proc/stat").read_text().splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name != "cpu":
            f = [int(x) for x in fields]
            busy.append((f[0] + f[1] + f[2] + f[5] + f[6]) / TICK)
    return busy


# The crawler's own helper processes, by what their command line names; any other
# process below the crawler is the browser or its driver.
# The worker pool's older names: govsi.spiders.workerloop before the pool moved to
# govsi/workers/, multiprocessing before da5b1a2.
HELPERS = {
    "worker_pool": (b"govsi.workers.loop", b"govsi.spiders.workerloop", b"multiprocessing"),
    "crawldb_writer": (b"govsi.store.writerprocess",),
    "archive": (b"govsi.archive.child",),
}


def helper_of(pid: int) -> str | None:
    """Which of HELPERS process ``pid`` is; None for any other (or a gone) process."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return next((name for name, marks in HELPERS.items() if any(m in cmdline for m in marks)),
                None)  # fmt: skip


def browser_processes(marks: tuple[bytes, ...] = (b"chromium",)) -> Iterator[int]:
    """The machine's processes whose command line has one of ``marks``."""
    return (pid for pid, _ in processes_with(marks))


def processes_with(marks: tuple[bytes, ...]) -> Iterator[tuple[int, bytes]]:
    """(pid, command line) of the machine's processes whose command line has one of
    ``marks``."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if any(m in cmd for m in marks):
            yield int(proc.name), cmd


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares dy/dx; None for fewer than two points or no spread in x."""
    n = len(points)
    if n < 2:
        return None
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else None


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
            pg = cpu_seconds(pg_pid, True) + sum(cpu_seconds(c) for c in descendants(pg_pid))
        own_s = own.ru_utime + own.ru_stime
        return cls(kids.ru_utime + kids.ru_stime, own_s, pg, *system_cpu())

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


class ProcessMeter:
    """What a run costs the machine, sampled every ``interval`` s from /proc while the
    crawl lives (its last moments of shutting down are missed): peak resident memory of the
    crawl's process and every process below it (a browser included); CPU of the crawl's own
    process (all its threads), of the processes below it (Chromium and Playwright's
    driver), and of this process (the simulated web's server)."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        self.pid = pid
        self.peak_rss_mb = 0.0
        self._before = CpuSnapshot.take()
        self._own = 0.0
        self._below: dict[int, float] = {}
        # The crawler's helper processes (HELPERS) by pid.
        self._helpers: dict[int, str] = {}
        self._cores = per_core_busy()
        self._started = time.monotonic()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(interval,), daemon=True)
        self._thread.start()

    def _watch(self, interval: float) -> None:
        while not self._done.wait(interval):
            below = descendants(self.pid)
            rss = rss_kb(self.pid) + sum(rss_kb(kid) for kid in below)
            self.peak_rss_mb = max(self.peak_rss_mb, rss / 1024)
            self._own = max(self._own, cpu_seconds(self.pid))
            for kid in below:
                if kid not in self._below and (helper := helper_of(kid)) is not None:
                    self._helpers[kid] = helper
                self._below[kid] = max(self._below.get(kid, 0.0), cpu_seconds(kid))

    def stop(self) -> dict[str, float]:
        """Stop sampling; the CPU figures."""
        self._done.set()
        self._thread.join()
        wall = time.monotonic() - self._started
        cores = [b - a for a, b in zip(self._cores, per_core_busy(), strict=True)]
        helpers = dict.fromkeys(HELPERS, 0.0)
        for pid, seconds in self._below.items():
            if pid in self._helpers:
                helpers[self._helpers[pid]] += seconds
        return {
            "crawler_s": round(self._own, 2),
            **{f"{name}_s": round(seconds, 2) for name, seconds in helpers.items()},
            "browser_and_driver_s": round(sum(self._below.values()) - sum(helpers.values()), 2),
            "web_server_s": CpuSnapshot.take().since(self._before)["simweb_server"],
            # Each core's busy share of the run, whatever kept it busy.
            "per_core_busy": [round(c / wall, 2) for c in cores] if wall > 0 else [],
        }
