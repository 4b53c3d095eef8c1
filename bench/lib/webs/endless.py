"""``memory_web``: 8 hosts of endless generated pages, each linking to 50 new pages, so
that the URLs a crawl knows grow ~50x faster than the pages it fetches."""

from __future__ import annotations

import random
import re
import zlib

from bench.lib.webs.parts import ASCII_WORDS, SECTION_SLUGS, ascii_text, link_page
from testkit.simweb.server import Host, Resource, SimWeb

FANOUT = 50
MEM_HOSTS = 8
_ID = re.compile(r"-(\d+)\.html$")


def mem_host(i: int) -> str:
    return f"mem-{i}.gov.si"


def mem_path(node: int) -> str:
    """A realistic-length path for a node id, deterministic."""
    h = zlib.crc32(str(node).encode())
    section = SECTION_SLUGS[h % len(SECTION_SLUGS)]
    a, b = ASCII_WORDS[(h >> 8) % len(ASCII_WORDS)], ASCII_WORDS[(h >> 16) % len(ASCII_WORDS)]
    return f"/{section}/{2015 + h % 10}/{a}-{b}-{node}.html"


def mem_node(target: str) -> int | None:
    """The node id a path of the memory web names (0 for its root), None for another."""
    if target == "/":
        return 0
    m = _ID.search(target.split("?")[0])
    return None if m is None else int(m.group(1))


def mem_links(host: int, node: int) -> list[str]:
    """The links of node ``node`` on host number ``host``: its host's root, then its 50
    children. Child j of a node on host h lives on host (h + j) % MEM_HOSTS, with id
    50*node + j: each (host, id) has exactly one parent, so every link is to a URL not
    seen before."""
    return ["/"] + [
        f"http://{mem_host((host + j) % MEM_HOSTS)}{mem_path(FANOUT * node + j)}"
        for j in range(1, FANOUT + 1)
    ]


def _mem_page(host: int, target: str) -> Resource | None:
    node = mem_node(target)
    if node is None:
        return None
    links = mem_links(host, node)
    rng = random.Random(node)
    return link_page(f"{mem_host(host)} {node}", ascii_text(rng, 120), links, [])


def memory_web() -> tuple[SimWeb, list[str]]:
    hosts = [
        Host(mem_host(i), i, {}, dynamic=lambda t, i=i: _mem_page(i, t)) for i in range(MEM_HOSTS)
    ]
    return SimWeb(hosts), [f"http://{mem_host(i)}/" for i in range(MEM_HOSTS)]
