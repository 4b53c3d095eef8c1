"""The reactor's thread keeps a CPU and the crawl's helper processes, grandchildren
included, get the others (govsi/health/cpus.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from govsi.health.cpus import split_cpus
from testkit.crawl import project_env


@pytest.mark.parametrize(
    ("allowed", "wanted", "current", "expected"),
    [
        ({0, 1}, "auto", 1, (1, {0})),
        ({0, 1, 2, 3}, "auto", 2, (2, {0, 1, 3})),
        ({0, 1, 2, 3}, "3", 0, (3, {0, 1, 2})),
        ({0}, "auto", 0, None),  # one CPU: nothing to share
        ({0, 1}, "off", 0, None),
        ({0, 1}, "5", 0, None),  # a CPU this process may not use
        ({2, 3}, "auto", 0, None),  # running elsewhere than allowed: unknown, left alone
        ({0, 1}, "auto", None, None),
    ],
)
def test_split_cpus(
    allowed: set[int], wanted: str, current: int | None, expected: tuple[int, set[int]] | None
) -> None:
    assert split_cpus(allowed, wanted, current) == expected


PROBE = """
import json, os, subprocess, sys
from govsi.health.cpus import CpuSharing
allowed = os.sched_getaffinity(0)
sharing = CpuSharing("auto", 10, 60.0)
sharing.spider_opened()
reactor = os.sched_getaffinity(0)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
# A process below a helper (as Chromium's renderers are below the browser).
SLEEP = [sys.executable, "-c", "import time; time.sleep(30)"]
parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                           f"p = subprocess.Popen({SLEEP!r}); print(p.pid, flush=True); "
                           "time.sleep(30)"], stdout=subprocess.PIPE)
grandchild = int(parent.stdout.readline())
import threading, time
thread = threading.Thread(target=time.sleep, args=(30,), daemon=True)
thread.start()
inherited = os.sched_getaffinity(child.pid)
changed = sharing.place_helpers()
placed = os.sched_getaffinity(child.pid)
grandchild_placed = os.sched_getaffinity(grandchild)
own_thread = os.sched_getaffinity(thread.native_id)
seen = {"allowed": sorted(allowed), "reactor": sorted(reactor), "inherited": sorted(inherited),
        "placed": sorted(placed), "grandchild": sorted(grandchild_placed), "changed": changed,
        "own_thread": sorted(own_thread),
        "nice": [os.getpriority(os.PRIO_PROCESS, 0), os.getpriority(os.PRIO_PROCESS, child.pid)],
        "again": sharing.place_helpers()}
sharing.spider_closed()
seen["after"] = sorted(os.sched_getaffinity(0))
print(json.dumps(seen))
for pid in (grandchild, parent.pid, child.pid):
    os.kill(pid, 9)
"""


@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux and two CPUs",
)
def test_the_reactor_keeps_its_cpu_and_the_helpers_yield_to_it() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], env=project_env(), check=True,
                         capture_output=True, text=True)  # fmt: skip
    seen = json.loads(out.stdout)
    (cpu,) = seen["reactor"]
    assert cpu in seen["allowed"]
    # A process the reactor's thread starts shares its CPU until it is placed: then it
    # has every CPU, at a priority 10 below the crawl's.
    assert seen["inherited"] == [cpu]
    assert seen["placed"] == seen["allowed"] and seen["changed"] >= 1
    assert seen["grandchild"] == seen["allowed"]
    own, child = seen["nice"]
    assert child == min(19, own + 10)
    assert seen["again"] == 0  # placed once
    # The crawl's own threads share the reactor's CPU (the GIL passes within it).
    assert seen["own_thread"] == [cpu]
    # After the crawl, the thread has every CPU back (the index update runs there).
    assert seen["after"] == seen["allowed"]
