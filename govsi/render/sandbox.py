"""Running Chromium inside its own sandbox, also when the crawler runs as root.

Chromium refuses to start as root unless its sandbox is switched off (``--no-sandbox``),
and a browser running scripts from the web unsandboxed, as root, is the widest door the
crawler could open. So when we are root, Chromium is started through a small wrapper that
hands the profile Playwright made to an unprivileged account and becomes that account
before starting Chromium; Chromium's namespace sandbox then starts as it would for any
user. Where even that is impossible (no such account, no ``setpriv``, no user
namespaces), the browser is never started: rendering is switched off for the crawl
(fail closed, ``govsi.render.browser``), never run with ``--no-sandbox``.

The same wrapper makes the browser join its memory cgroup (``govsi.render.limits``) before
it starts, so every process of its tree is in it; a browser that cannot join does not
start.
"""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import tempfile
from dataclasses import dataclass

__all__ = ["Launch", "sandbox_problem", "sandboxed_launch"]


@dataclass(frozen=True)
class Launch:
    executable: str
    sandbox: bool
    # Why the browser cannot run sandboxed, so must not run at all (None: it can).
    problem: str | None = None


_HEADER = """#!/bin/sh
# Written by govsi (govsi/render/sandbox.py): Chromium sandboxed{why}.
"""
_JOIN = """echo $$ > {procs} || {{ echo "govsi: cannot join the browser's cgroup" >&2; exit 1; }}
"""
_AS_USER = """home=/tmp
for arg in "$@"; do
  case "$arg" in
    --user-data-dir=*) home="${{arg#--user-data-dir=}}"; chown -R {uid}:{gid} "$home" ;;
  esac
done
export HOME="$home" XDG_CONFIG_HOME="$home" XDG_CACHE_HOME="$home"
exec {setpriv} --reuid={uid} --regid={gid} --clear-groups --inh-caps=-all -- {chromium} "$@"
"""
_DIRECT = """exec {chromium} "$@"
"""


def sandbox_problem(user: str, euid: int | None = None) -> str | None:
    """Why Chromium cannot be started sandboxed here (None: it can), without starting it:
    the crawl says so once at start, before any page needs the browser."""
    if (os.geteuid() if euid is None else euid) != 0:
        return None
    if shutil.which("setpriv") is None:
        return "running as root and setpriv (util-linux) is missing"
    try:
        account = pwd.getpwnam(user)
    except KeyError:
        return f"running as root and there is no account {user!r} (RENDER_BROWSER_USER)"
    if account.pw_uid == 0:
        return f"RENDER_BROWSER_USER {user!r} is root"
    return None


def sandboxed_launch(
    chromium: str, user: str, euid: int | None = None, cgroup: str | None = None
) -> Launch:
    """How to start ``chromium`` with its sandbox on: directly when we are not root and
    there is no ``cgroup`` to join, else through a wrapper that joins it and, as root,
    becomes ``user`` (RENDER_BROWSER_USER)."""
    root = (os.geteuid() if euid is None else euid) == 0
    if not root and cgroup is None:
        return Launch(chromium, sandbox=True)
    if root:
        problem = sandbox_problem(user, euid=0)
        if problem is not None:
            return Launch(chromium, False, problem)
    script = _HEADER.format(why=f", as {user}" if root else "")
    if cgroup is not None:
        script += _JOIN.format(procs=shlex.quote(os.path.join(cgroup, "cgroup.procs")))
    if root:
        account = pwd.getpwnam(user)
        script += _AS_USER.format(
            uid=account.pw_uid,
            gid=account.pw_gid,
            setpriv=shlex.quote(shutil.which("setpriv") or "setpriv"),
            chromium=shlex.quote(chromium),
        )
    else:
        script += _DIRECT.format(chromium=shlex.quote(chromium))
    folder = tempfile.mkdtemp(prefix="govsi-chromium-")
    path = os.path.join(folder, "chromium")
    with open(path, "w", encoding="utf-8") as f:
        f.write(script)
    os.chmod(path, 0o700)
    return Launch(path, sandbox=True)
