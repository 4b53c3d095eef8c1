"""The browser's memory limits (govsi.render.limits, sandbox): a V8 heap cap on every
page, and a cgroup v2 memory limit on its whole process tree where one can be made; where
none can, the reason is said, nothing fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from govsi.render.engine import launch_options
from govsi.render.limits import MIB, browser_cgroup, js_heap_args, remove_cgroup
from govsi.render.sandbox import sandboxed_launch

V1_ONLY = "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"


def hierarchy(tmp: Path, controllers: str = "cpu memory", subtree: str = "") -> str:
    """A cgroup v2 mount at ``tmp`` with the crawler in /crawl; its /proc/mounts text."""
    own = tmp / "crawl"
    own.mkdir()
    (own / "cgroup.controllers").write_text(controllers + "\n")
    (own / "cgroup.subtree_control").write_text(subtree + "\n")
    return f"proc /proc proc rw 0 0\ncgroup2 {tmp} cgroup2 rw,nsdelegate 0 0\n"


def test_a_child_cgroup_gets_the_limit_and_the_memory_controller(tmp_path: Path) -> None:
    mounts = hierarchy(tmp_path)
    limit = browser_cgroup(300, "govsi-browser-1", mounts=mounts, proc_cgroup="0::/crawl\n")
    child = tmp_path / "crawl" / "govsi-browser-1"
    assert limit.cgroup == str(child)
    assert (child / "memory.max").read_text() == str(300 * MIB)
    assert (tmp_path / "crawl" / "cgroup.subtree_control").read_text() == "+memory"
    assert "300 MiB" in limit.said
    (child / "memory.max").unlink()  # cgroupfs removes its files with the directory
    remove_cgroup(limit)
    assert not child.exists()


@pytest.mark.parametrize(
    ("limit_mb", "mounts", "controllers", "why"),
    [
        (0, None, "memory", "RENDER_MEMORY_MB is 0"),
        (300, V1_ONLY, "memory", "no cgroup v2 hierarchy"),
        (300, None, "cpu io", "the memory controller is not delegated"),
    ],
)
def test_where_no_cgroup_can_be_made_the_reason_is_said(
    tmp_path: Path, limit_mb: int, mounts: str | None, controllers: str, why: str
) -> None:
    v2 = hierarchy(tmp_path, controllers)
    limit = browser_cgroup(limit_mb, "b", mounts=mounts or v2, proc_cgroup="0::/crawl\n")
    assert limit.cgroup is None and limit.said.startswith(why)


def test_a_cgroup_that_cannot_be_written_is_said_not_raised(tmp_path: Path) -> None:
    mounts = hierarchy(tmp_path)
    # As the kernel refuses +memory while the crawler's cgroup has processes of its own.
    (tmp_path / "crawl" / "cgroup.subtree_control").unlink()
    (tmp_path / "crawl" / "cgroup.subtree_control").mkdir()
    (tmp_path / "crawl" / "cgroup.controllers").write_text("memory\n")
    limit = browser_cgroup(300, "b", mounts=mounts, proc_cgroup="0::/crawl\n")
    assert limit.cgroup is None and limit.said.startswith("cannot make a memory cgroup")


def test_this_systems_answer_never_raises() -> None:
    limit = browser_cgroup(300, f"govsi-test-{os.getpid()}")
    remove_cgroup(limit)
    assert limit.said


def test_the_v8_heap_cap_is_the_last_switch_and_no_setting_replaces_it() -> None:
    assert js_heap_args(0) == []
    added = ["--lang=sl", "--js-flags=--max-old-space-size=99999"]
    args = launch_options("/c", "127.0.0.1:1", added, js_heap_mb=256)["args"]
    assert args[-1] == "--js-flags=--max-old-space-size=256"
    assert "--lang=sl" in args and "--js-flags=--max-old-space-size=99999" not in args


@pytest.mark.parametrize("euid", [1000, 0])
def test_the_browser_joins_its_cgroup_before_it_starts(euid: int) -> None:
    if euid == 0 and os.geteuid() != 0:
        pytest.skip("the wrapper becomes another account only under root")
    # Reachable by the unprivileged account (pytest's tmp_path is root's alone).
    folder = Path(tempfile.mkdtemp(prefix="govsi-test-"))
    folder.chmod(0o755)
    fake = folder / "fake-chromium"
    fake.write_text('#!/bin/sh\necho "$$"\n')
    fake.chmod(0o755)
    cgroup = folder / "cgroup"
    cgroup.mkdir()
    (cgroup / "cgroup.procs").write_text("")
    launch = sandboxed_launch(str(fake), "nobody", euid=euid, cgroup=str(cgroup))
    try:
        assert launch.sandbox and launch.executable != str(fake)
        out = subprocess.run([launch.executable], capture_output=True, text=True, check=True)
        # Chromium's own process (the wrapper's, exec'd) is in the cgroup, so its tree is.
        assert (cgroup / "cgroup.procs").read_text().strip() == out.stdout.strip()
        # A cgroup it cannot join: the browser does not start.
        shutil.rmtree(cgroup)
        failed = subprocess.run([launch.executable], capture_output=True, text=True)
        assert failed.returncode == 1 and failed.stdout == ""
        assert "cannot join the browser's cgroup" in failed.stderr
    finally:
        shutil.rmtree(os.path.dirname(launch.executable))
        shutil.rmtree(folder)


def test_without_a_cgroup_a_user_runs_chromium_itself() -> None:
    launch = sandboxed_launch("/usr/lib/chromium/chromium", "nobody", euid=1000, cgroup=None)
    assert launch.executable == "/usr/lib/chromium/chromium"
