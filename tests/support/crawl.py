"""Run ``scrapy crawl govsi`` for real, in a subprocess, against a simulated web."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.simweb.server import SimWeb

ROOT = Path(__file__).resolve().parents[2]

# What every test crawl needs: the simulated web's name resolution and no delay.
BASE_SETTINGS = {
    "TWISTED_DNS_RESOLVER": "tests.simweb.resolver.SimWebResolver",
    "DEFAULT_CRAWL_DELAY": "0",
    "DOWNLOAD_TIMEOUT": "15",
    "LOG_LEVEL": "INFO",
}


@dataclass
class CrawlRun:
    returncode: int
    log: str
    stats: dict[str, object]


def run_crawl(
    web: SimWeb,
    db_url: str,
    workdir: Path,
    seeds: list[str],
    timeout: float = 300,
    **settings: object,
) -> CrawlRun:
    workdir.mkdir(parents=True, exist_ok=True)
    log_file = workdir / "crawl.log"
    stats_file = workdir / "stats.json"
    merged = {
        **BASE_SETTINGS,
        "SEED_URLS": ",".join(seeds),
        "CRAWLDB_URL": db_url,
        "LOG_FILE": str(log_file),
        "STATS_FILE": str(stats_file),
        "DB_SPILL_DIR": str(workdir),
    }
    merged.update({k: str(v) for k, v in settings.items()})
    cmd = [sys.executable, "-m", "scrapy", "crawl", "govsi"]
    for k, v in merged.items():
        cmd += ["-s", f"{k}={v}"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "SCRAPY_SETTINGS_MODULE": "govsi.settings",
        "GOVSI_TEST_HOSTS": json.dumps(web.hosts_map()),
    }
    env.pop("CRAWLDB_URL", None)
    proc = subprocess.run(
        cmd, cwd=workdir, env=env, timeout=timeout, capture_output=True, text=True
    )
    log = log_file.read_text(encoding="utf-8") if log_file.exists() else ""
    log += proc.stdout + proc.stderr
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    return CrawlRun(proc.returncode, log, stats)
