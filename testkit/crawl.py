"""Run ``scrapy crawl govsi`` for real, in a subprocess, against a simulated web."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from sqlalchemy import create_engine, text

from testkit.simweb.server import SimWeb

ROOT = Path(__file__).resolve().parents[1]

# What every test crawl needs: the simulated web's name resolution and no delay.
BASE_SETTINGS = {
    "TWISTED_DNS_RESOLVER": "testkit.simweb.resolver.SimWebResolver",
    "DEFAULT_CRAWL_DELAY": "0",
    "DOWNLOAD_TIMEOUT": "15",
    "LOG_LEVEL": "INFO",
    # Tests about other things crawl without a browser; tests/test_e2e_render.py sets the
    # mode (and tells Chromium where the simulated hosts are).
    "RENDER_JS": "off",
}


@dataclass
class CrawlRun:
    returncode: int
    log: str
    stats: dict[str, object]


class RunningCrawl:
    """A ``scrapy crawl govsi`` subprocess; ``wait()`` collects its log and final stats."""

    def __init__(self, proc: subprocess.Popen[str], workdir: Path) -> None:
        self.proc = proc
        self.workdir = workdir

    def wait(self, timeout: float = 300) -> CrawlRun:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # A crawl left running would take a core from every test and benchmark after.
            for pid in [self.proc.pid, *descendants(self.proc.pid)]:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            self.proc.communicate()
            raise
        log_file = self.workdir / "crawl.log"
        stats_file = self.workdir / "stats.json"
        log = log_file.read_text(encoding="utf-8") if log_file.exists() else ""
        stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
        return CrawlRun(self.proc.returncode, log + out + err, stats)


def start_crawl(
    web: SimWeb,
    db_url: str,
    workdir: Path,
    seeds: list[str],
    spider_args: dict[str, str] | None = None,
    hosts: dict[str, str | list[str]] | None = None,
    env: dict[str, str] | None = None,
    **settings: object,
) -> RunningCrawl:
    """``hosts``: what this process's DNS answers, instead of the web's own map (two
    addresses: the first once, then the second); ``env``: more environment."""
    workdir.mkdir(parents=True, exist_ok=True)
    merged = {
        **BASE_SETTINGS,
        "SEED_URLS": ",".join(seeds),
        "CRAWLDB_URL": db_url,
        "LOG_FILE": str(workdir / "crawl.log"),
        "STATS_FILE": str(workdir / "stats.json"),
        "DB_SPILL_DIR": str(workdir),
        "ALLOWED_PRIVATE_NETWORKS": web.network,
    }
    merged.update({k: str(v) for k, v in settings.items()})
    cmd = [sys.executable, "-m", "scrapy", "crawl", "govsi"]
    for k, v in merged.items():
        cmd += ["-s", f"{k}={v}"]
    for k, v in (spider_args or {}).items():
        cmd += ["-a", f"{k}={v}"]
    environ = {**project_env(), **(env or {}),
               "GOVSI_TEST_HOSTS": json.dumps(hosts or web.hosts_map())}  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=workdir, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return RunningCrawl(proc, workdir)


def project_env() -> dict[str, str]:
    """The environment a ``scrapy`` command of this project runs in: the checkout on the
    path, its settings, and no CRAWLDB_URL (each run names its database) or proxy from
    outside."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "SCRAPY_SETTINGS_MODULE": "govsi.settings",
    }
    env.pop("CRAWLDB_URL", None)
    # A proxy of the machine's would stop every crawl at start (the address guard), and
    # the simulated web is never reached through one.
    for name in [n for n in env if n.lower().endswith("_proxy")]:
        del env[name]
    return env


def run_report(
    db_url: str, out: Path, *args: str, timeout: float | None = 300
) -> subprocess.CompletedProcess[str]:
    """``scrapy report`` of ``db_url`` into the folder ``out``, as a user runs it."""
    cmd = [sys.executable, "-m", "scrapy", "report", "-o", str(out), "-s", f"CRAWLDB_URL={db_url}"]
    return subprocess.run(
        [*cmd, *args], cwd=ROOT, env=project_env(), capture_output=True, text=True, timeout=timeout
    )


def run_changes(db_url: str, *args: str, timeout: float | None = 300) -> list[dict[str, Any]]:
    """``scrapy changes --json`` of ``db_url`` with ``args``, as a user runs it: its list."""
    cmd = [sys.executable, "-m", "scrapy", "changes", "--json", "-s", f"CRAWLDB_URL={db_url}"]
    done = subprocess.run(
        [*cmd, *args], cwd=ROOT, env=project_env(), capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


def run_warc_pack(
    db_url: str, warc_dir: Path, *args: str, timeout: float | None = 300
) -> subprocess.CompletedProcess[str]:
    """``scrapy warc pack`` of the archive in ``warc_dir`` and crawldb ``db_url``."""
    cmd = [sys.executable, "-m", "scrapy", "warc", "pack", "-s", f"CRAWLDB_URL={db_url}",
           "-s", f"WARC_DIR={warc_dir}"]  # fmt: skip
    return subprocess.run(
        [*cmd, *args], cwd=ROOT, env=project_env(), capture_output=True, text=True, timeout=timeout
    )


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Chromium's zygote and renderers are grandchildren of
    the crawl); none when ``pid`` is gone."""
    try:
        return [kid.pid for kid in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def browser_pids(pid: int) -> list[int]:
    """The Chromium processes below ``pid`` (not those of anything else on the machine)."""
    found = []
    for kid in descendants(pid):
        try:
            if b"chrom" in Path(f"/proc/{kid}/cmdline").read_bytes().lower():
                found.append(kid)
        except OSError:
            continue
    return found


def kill_browsers(crawl: RunningCrawl) -> int:
    """SIGKILL one crawl's Chromium processes; how many were killed."""
    killed = 0
    for pid in browser_pids(crawl.proc.pid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
    return killed


def wait_for_requests(web: SimWeb, n: int, timeout: float = 60) -> None:
    """Block until the simulated web has served ``n`` requests (a crawl is under way)."""
    deadline = time.monotonic() + timeout
    while len(web.requested()) < n:
        if time.monotonic() > deadline:
            raise AssertionError(f"the crawl never got going ({len(web.requested())} requests)")
        time.sleep(0.02)


def run_crawl(
    web: SimWeb,
    db_url: str,
    workdir: Path,
    seeds: list[str],
    timeout: float = 300,
    spider_args: dict[str, str] | None = None,
    **settings: object,
) -> CrawlRun:
    return start_crawl(web, db_url, workdir, seeds, spider_args, **settings).wait(timeout)


def query(db_url: str, sql: str) -> list[Any]:
    """Rows of plain SQL, unqualified table names on either back end, as users write it."""
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                conn.execute(text("SET search_path TO crawldb"))
            return list(conn.execute(text(sql)))
    finally:
        engine.dispose()


@dataclass
class Snapshot:
    """The parts of crawldb that a crawl's outcome is judged by, keyed by URL, not id."""

    pages: dict[str, tuple[str, int | None]]
    links: set[tuple[str, str]]
    images: set[tuple[str, str, str, str | None]]
    # Near copies, kept whole and flagged: the page each resembles.
    near: dict[str, str]


def snapshot(db_url: str) -> Snapshot:
    url_of = dict(query(db_url, "SELECT id, url FROM page"))
    return Snapshot(
        pages={
            u: (t, s)
            for u, t, s in query(db_url, "SELECT url, page_type_code, http_status_code FROM page")
        },
        links={
            (url_of[a], url_of[b]) for a, b in query(db_url, "SELECT from_page, to_page FROM link")
        },
        images={
            (url_of[p], u, f, c)
            for p, u, f, c in query(
                db_url, "SELECT page_id, url, filename, content_type FROM image"
            )
        },
        near={
            url: url_of[other]
            for url, other in query(
                db_url, "SELECT url, near_duplicate_of FROM page WHERE near_duplicate_of > 0"
            )
        },
    )
