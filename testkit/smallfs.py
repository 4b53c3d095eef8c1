"""A small filesystem of a test's own (a tmpfs it mounts), filled to the last byte with a
ballast file and freed again: the full disks of tests/test_e2e_full_disk.py.

Mounting takes root, or user, mount and network namespaces where the test runs as root
(``unshare --user --map-root-user --mount --net``): ``mount_refused`` says why this process
cannot mount, ``namespace_refused`` why no namespace can be made, and ``in_namespace``
runs a pytest module again in one."""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["SmallFs", "in_namespace", "mount_refused", "small_fs"]

# Set in the pytest a user namespace runs, so that it does not start another.
NAMESPACE_ENV = "GOVSI_TEST_NAMESPACE"


class SmallFs:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.ballast = path / "ballast"

    def fill(self) -> int:
        """Take every free byte (a ballast file written until the disk is full); how
        many were taken."""
        fd = os.open(self.ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        block = b"\0" * 65536
        taken = 0
        try:
            for size in (65536, 4096, 1):  # to the last byte
                with contextlib.suppress(OSError):
                    while True:
                        taken += os.write(fd, block[:size])
        finally:
            os.close(fd)
        return taken

    def free(self) -> None:
        self.ballast.unlink(missing_ok=True)

    def is_full(self) -> bool:
        try:
            fd = os.open(self.path / ".probe", os.O_WRONLY | os.O_CREAT, 0o600)
        except OSError as e:
            return e.errno == errno.ENOSPC
        try:
            os.write(fd, b"\0" * 4096)
        except OSError as e:
            return e.errno == errno.ENOSPC
        finally:
            os.close(fd)
            (self.path / ".probe").unlink()
        return False


@contextlib.contextmanager
def small_fs(path: Path, size: str, owner: str | None = None) -> Iterator[SmallFs]:
    """A tmpfs of ``size`` (as mount(8) reads it: "8m") mounted at ``path`` meanwhile, its
    root owned by the user ``owner`` (default: this process's)."""
    path.mkdir(parents=True, exist_ok=True)
    options = f"size={size},mode=0700"
    if owner is not None:
        account = pwd.getpwnam(owner)
        options += f",uid={account.pw_uid},gid={account.pw_gid}"
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
    try:
        yield SmallFs(path)
    finally:
        subprocess.run(["umount", "--lazy", str(path)], check=False)


def mount_refused() -> str | None:
    """Why this process cannot mount a tmpfs; None when it can (root)."""
    if os.geteuid() == 0 and shutil.which("mount"):
        return None
    return "mounting a tmpfs needs root"


def namespace_refused() -> str | None:
    """Why a user namespace cannot run the tests as root; None when it can."""
    if os.environ.get(NAMESPACE_ENV):
        return "already in a user namespace"
    if not shutil.which("unshare"):
        return "no unshare(1)"
    probe = ["unshare", "--user", "--map-root-user", "--mount", "--net", "ip", "link", "set",
             "lo", "up"]  # fmt: skip
    if subprocess.run(probe, capture_output=True).returncode != 0:
        return "user namespaces are not allowed here (unshare --user --map-root-user failed)"
    return None


def in_namespace(module: str, timeout: float, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the pytest ``module`` (with ``args``) again as root of user, mount and network
    namespaces of its own."""
    # A network namespace too: the simulated web serves on ports 80 and 443 of loopback,
    # which only its root may bind.
    unshare = ["unshare", "--user", "--map-root-user", "--mount", "--net"]
    boot = ["sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    pytest = [sys.executable, "-m", "pytest", module, "-q", "-p", "no:cacheprovider", *args]
    cmd = [*unshare, *boot, *pytest]
    env = {**os.environ, NAMESPACE_ENV: "1"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
