"""The simulated webs the benchmarks crawl, deterministic for a seed, built of ``parts``:

- ``tree``: ``build_web``, a large web of template sites (``crawl_speed``, ``scaleout``,
  ``soak``);
- ``delays``: webs where politeness sets the pace (``politeness``, ``scaleout``,
  ``render_cost``, ``soak``), with the delay each host must be asked at;
- ``endless``: ``memory_web``, endless pages of 50 new links each (``memory``,
  ``outage_memory``);
- ``scripted``: pages whose scripts add links, or need a user (the rendering benchmarks).
"""

from bench.lib.webs.delays import (
    BenchWeb,
    many_web,
    mix_in_javascript,
    skewed_web,
    tree_bench_web,
)
from bench.lib.webs.endless import FANOUT, MEM_HOSTS, mem_links, mem_node, mem_path, memory_web
from bench.lib.webs.parts import robots_txt, text
from bench.lib.webs.scripted import (
    ADD,
    HEAD,
    endless_js_web,
    js_page,
    js_web,
    quiet_web,
    site_template,
)
from bench.lib.webs.tree import DISALLOWED, build_web

__all__ = [
    "ADD",
    "DISALLOWED",
    "FANOUT",
    "HEAD",
    "MEM_HOSTS",
    "BenchWeb",
    "build_web",
    "endless_js_web",
    "js_page",
    "js_web",
    "many_web",
    "mem_links",
    "mem_node",
    "mem_path",
    "memory_web",
    "mix_in_javascript",
    "quiet_web",
    "robots_txt",
    "site_template",
    "skewed_web",
    "text",
    "tree_bench_web",
]
