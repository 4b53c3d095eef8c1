"""A real scrapyd on loopback, with the project deployed to it by scrapyd-deploy."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from testkit.crawl import ROOT

# What goes into the copy scrapyd-deploy builds the egg from: what a deploying user has.
PROJECT_FILES = ("govsi", "setup.py", "scrapy.cfg")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ScrapydNode:
    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "scrapyd.conf").write_text(
            "[scrapyd]\n"
            f"bind_address = 127.0.0.1\nhttp_port = {self.port}\n"
            "eggs_dir = eggs\nlogs_dir = logs\ndbs_dir = dbs\nitems_dir =\n"
            "poll_interval = 0.5\nmax_proc = 2\n"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scrapyd"],
            cwd=workdir,
            env=env,
            stdout=(workdir / "scrapyd.out").open("w"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.get("daemonstatus.json")["status"] == "ok":
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((workdir / "scrapyd.out").read_text())
            time.sleep(0.2)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    # -- the HTTP API ------------------------------------------------------------------------
    def get(self, endpoint: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(self.url + endpoint + query, timeout=30) as r:
            return json.loads(r.read())

    def post(self, endpoint: str, fields: list[tuple[str, str]]) -> Any:
        data = urllib.parse.urlencode(fields).encode()
        with urllib.request.urlopen(self.url + endpoint, data=data, timeout=30) as r:
            return json.loads(r.read())

    # -- what a user does --------------------------------------------------------------------
    def deploy(self, scratch: Path) -> str:
        """``scrapyd-deploy`` from a copy of the project whose [deploy] target is this node."""
        project = scratch / "project"
        for name in PROJECT_FILES:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, project / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, project / name)
        cfg = (project / "scrapy.cfg").read_text()
        (project / "scrapy.cfg").write_text(cfg.replace("http://localhost:6800/", self.url))
        out = subprocess.run(
            [sys.executable, "-m", "scrapyd_client", "deploy", "local", "-p", "govsi"],
            cwd=project, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout + out.stderr

    def schedule(self, settings: dict[str, object], **args: str) -> str:
        fields = [("project", "govsi"), ("spider", "govsi")]
        fields += [("setting", f"{k}={v}") for k, v in settings.items()]
        fields += list(args.items())
        answer = self.post("schedule.json", fields)
        assert answer["status"] == "ok", answer
        return str(answer["jobid"])

    def state(self, job: str) -> str:
        return str(self.get("status.json", job=job, project="govsi")["currstate"])

    def wait(self, job: str, timeout: float = 300) -> str:
        deadline = time.monotonic() + timeout
        while (state := self.state(job)) != "finished":
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job} still {state} after {timeout} s")
            time.sleep(0.5)
        return self.log(job)

    def log(self, job: str) -> str:
        path = self.workdir / "logs" / "govsi" / "govsi" / f"{job}.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""
