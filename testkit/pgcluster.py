"""A throwaway PostgreSQL cluster for the test suite (real server, no mock).

PostgreSQL refuses to run as root and the test machines run as root, so when we are
root the cluster is created and run as the unprivileged ``postgres`` account.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_BIN_CANDIDATES = ("/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin")


def find_pg_bin() -> Path | None:
    env = os.environ.get("PG_BIN")
    for d in ([env] if env else []) + list(PG_BIN_CANDIDATES):
        if (Path(d) / "initdb").exists() and (Path(d) / "pg_ctl").exists():
            return Path(d)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgCluster:
    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.port = free_port()
        self.tmp = Path(tempfile.mkdtemp(prefix="govsi-pg-"))
        self.data = self.tmp / "data"
        self.user: str | None = "postgres" if os.geteuid() == 0 else None
        if self.user:
            pw = pwd.getpwnam(self.user)
            os.chown(self.tmp, pw.pw_uid, pw.pw_gid)

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=self.tmp)

    def start(self) -> None:
        self._run(
            str(self.bin_dir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "govsi",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
        )
        self.start_server()

    def start_server(self) -> None:
        opts = (
            f"-p {self.port} -k {self.tmp} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=100"
        )
        log = str(self.tmp / "server.log")
        self._run(
            self._pg_ctl, "-D", str(self.data), "-o", opts, "-l", log, "-w", "-t", "60", "start"
        )

    def stop_server(self) -> None:
        """Stop the server, keeping its data (the database "goes away" for a while)."""
        self._run(self._pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop")

    def freeze(self, frozen: bool) -> None:
        """Stop (or let go on) every process of the server: connections stay open and
        the kernel still answers TCP, but no query is answered (a network partition, as
        the crawler sees it)."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                                  text=True).stdout.split()  # fmt: skip
        sig = signal.SIGSTOP if frozen else signal.SIGCONT
        for pid in [postmaster, *map(int, children)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    @property
    def _pg_ctl(self) -> str:
        return str(self.bin_dir / "pg_ctl")

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql+psycopg2://govsi@127.0.0.1:{self.port}/{dbname}"

    def create_database(
        self, name: str, folder: Path | None = None, template: str | None = None
    ) -> str:
        """A new, empty database (a copy of the database ``template`` if given); its tables
        in ``folder`` (a tablespace there) if given."""
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user="govsi", dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}"')
            copy = "" if template is None else f' TEMPLATE "{template}"'
            if folder is None:
                cur.execute(f'CREATE DATABASE "{name}"{copy}')
            else:
                cur.execute(f"CREATE TABLESPACE {name} LOCATION '{folder}'")
                cur.execute(f'CREATE DATABASE "{name}" TABLESPACE {name}')
        conn.close()
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop the database ``name`` and the tablespace of that name if it has one, its
        connections closed first."""
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user="govsi", dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            cur.execute(f"DROP TABLESPACE IF EXISTS {name}")
        conn.close()

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run(self._pg_ctl, "-D", str(self.data), "-m", "immediate", "stop")
        time.sleep(0.1)
        # Removed by a process of its own, not waited for: by the suite's end the cluster's
        # databases take gigabytes of small files, ~17 s of every worker's last teardown.
        subprocess.Popen(["rm", "-rf", "--", str(self.tmp)], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
