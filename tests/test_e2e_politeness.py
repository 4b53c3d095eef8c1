"""The per-host delay of this stage (DEFAULT_CRAWL_DELAY through Scrapy's download slots),
checked from the simulated web's log of request arrival times; and seeds given with -a."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from pathlib import Path

from tests.simweb import govweb
from tests.simweb.server import SimWeb
from tests.support.crawl import run_crawl

DELAY = 1.0
# Scrapy starts the delay when a request leaves the host's queue; the server sees it after
# the connection is made, and the first request to a host also pays for the TLS handshake
# that later ones reuse. So arrivals can be that much closer than the delay.
CONNECT_SLACK = 0.1


def test_requests_to_one_host_are_spaced_by_the_delay(gov_web: SimWeb, tmp_path: Path) -> None:
    gov_web.reset_log()
    run = run_crawl(
        gov_web,
        f"sqlite:///{tmp_path / 'crawldb.sqlite3'}",
        tmp_path,
        govweb.SEEDS,
        spider_args={"seeds": "https://e-uprava.gov.si/"},
        DEFAULT_CRAWL_DELAY=DELAY,
        DEPTH_LIMIT=1,
    )
    assert run.returncode == 0, run.log[-3000:]
    arrivals: dict[str, list[float]] = defaultdict(list)
    for hit in gov_web.requested():
        arrivals[hit.host].append(hit.time)
    # The -a seeds argument replaced SEED_URLS: only e-uprava and what it links to.
    assert set(arrivals) == {"e-uprava.gov.si", "www.gov.si"}
    assert len(arrivals["e-uprava.gov.si"]) >= 4
    for host, times in arrivals.items():
        times.sort()
        gaps = [b - a for a, b in pairwise(times)]
        assert min(gaps) >= DELAY - CONNECT_SLACK, (host, gaps)
