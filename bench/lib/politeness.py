"""How polite a crawl was, from the simulated web's log of requests (timed on arrival):

- violations: consecutive requests to one host closer than its delay (max of the default
  and its Crawl-delay), and to one IP address closer than the default delay;
- efficiency = ideal / actual, ideal = the largest of (requests to a host - 1) x its delay
  and (requests to an address - 1) x the default delay; actual = first to last request.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from bench.lib.webs import BenchWeb
from testkit.simweb.server import Hit

Need = Callable[[Hit, Hit], float]  # the gap a request must leave before the next one


def _gaps(hits: list[Hit], need: Need, rule: str, key: str) -> tuple[list[dict[str, Any]], float]:
    """Violations among time-ordered ``hits`` (``need(a, b)``: the gap a->b must have), and
    the idle time beyond what the rules require."""
    bad: list[dict[str, Any]] = []
    slack = 0.0
    for a, b in pairwise(hits):
        gap, required = b.time - a.time, need(a, b)
        slack += max(0.0, gap - required)
        if gap < required:
            pair = {"first": f"{a.host}{a.target}", "second": f"{b.host}{b.target}"}
            bad.append({"rule": rule, "key": key, "gap": round(gap, 4), "required": required})
            bad[-1].update(pair)
    return bad, slack


def analyse(hits: list[Hit], bw: BenchWeb) -> dict[str, Any]:
    hits = sorted(hits, key=lambda h: h.time)
    if not hits:
        return {"requests": 0}
    default = bw.default_delay
    by_host: dict[str, list[Hit]] = defaultdict(list)
    by_ip: dict[str, list[Hit]] = defaultdict(list)
    for h in hits:
        by_host[h.host].append(h)
        by_ip[h.ip].append(h)

    def host_need(a: Hit, b: Hit) -> float:
        return bw.host_delay.get(a.host, default)

    def ip_need(a: Hit, b: Hit) -> float:
        return max(default, host_need(a, b)) if a.host == b.host else default

    violations: list[dict[str, Any]] = []
    work: list[dict[str, Any]] = []  # the ideal's candidates, with where time went
    first, last = hits[0].time, hits[-1].time
    for kind, groups, rule_need in (("host", by_host, host_need), ("ip", by_ip, ip_need)):
        for key, hs in groups.items():
            delay = bw.host_delay.get(key, default) if kind == "host" else default
            bad, slack = _gaps(hs, rule_need if kind == "ip" else host_need, kind, key)
            violations += bad
            work.append({
                "kind": kind, "key": key, "requests": len(hs), "delay": delay,
                "ideal": round((len(hs) - 1) * delay, 3),
                "starts_after": round(hs[0].time - first, 3),
                "ends_before": round(last - hs[-1].time, 3),
                "idle_beyond_rules": round(slack, 3),
                "hosts": sorted({h.host for h in hs}) if kind == "ip" else None,
            })  # fmt: skip
    work.sort(key=lambda w: -w["ideal"])
    ideal = work[0]["ideal"]
    span = last - first
    counts = Counter((h.host, h.target) for h in hits)
    targets = Counter(
        "page" if k in bw.pages else
        "robots" if k[1] == "/robots.txt" else
        "sitemap" if "sitemap" in k[1] else
        "image" if k[1].endswith(".png") else "other"
        for k in (((h.host, h.target)) for h in hits)
    )  # fmt: skip
    pages = {k for k in counts if k in bw.pages and k[0] in bw.host_delay}
    global_gaps = sorted((b.time - a.time for a, b in pairwise(hits)), reverse=True)
    return {
        "requests": len(hits),
        "requests_by_kind": dict(targets),
        "pages_fetched": len(pages),
        "pages_in_web": len(bw.pages),
        "urls_requested_twice_or_more": sum(1 for n in counts.values() if n > 1),
        "first_to_last_request_s": round(span, 3),
        "ideal_s": ideal,
        "efficiency": round(ideal / span, 3) if span else None,
        "violations_host": sum(1 for v in violations if v["rule"] == "host"),
        "violations_ip": sum(1 for v in violations if v["rule"] == "ip"),
        "violation_examples": sorted(violations, key=lambda v: v["gap"] / v["required"])[:10],
        "min_gap_ratio_host": _min_ratio(by_host, host_need),
        "min_gap_ratio_ip": _min_ratio(by_ip, ip_need),
        "critical_path": work[:3],
        "largest_gaps_between_any_requests_s": [round(g, 3) for g in global_gaps[:5]],
    }


def _min_ratio(groups: dict[str, list[Hit]], need: Need) -> float | None:
    ratios = [(b.time - a.time) / need(a, b) for hs in groups.values() for a, b in pairwise(hs)]
    return round(min(ratios), 3) if ratios else None
