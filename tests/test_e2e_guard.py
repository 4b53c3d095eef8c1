"""End-to-end: the address guard cannot be gone around. Under the plain Twisted reactor
(where Scrapy installs its resolver after the spider opened, over the guard) a host
resolving to a private address is refused with the reason and never retried, and a host
whose name rebinds to one after the first answer is fetched at its pinned address only;
with a proxy in the environment the crawl does not start."""

from __future__ import annotations

from pathlib import Path

from testkit.crawl import query, run_crawl, start_crawl
from testkit.simweb.hostileweb import Listener, page, robots
from testkit.simweb.server import Host, SimWeb

V, ZS, RB = "http://www.varno.gov.si", "http://zasebni.gov.si", "http://prevara.gov.si"
PLAIN_REACTOR = "twisted.internet.epollreactor.EPollReactor"


def _web() -> tuple[SimWeb, str]:
    allow = robots("User-agent: *", "Allow: /")
    web = SimWeb([
        Host("www.varno.gov.si", 0, {"/robots.txt": allow,
                                     "/": page("Varno", [f"{ZS}/", f"{RB}/"])}),
        Host("prevara.gov.si", 1, {"/robots.txt": allow, "/": page("Prevara", ["/druga"]),
                                   "/druga": page("Druga", [])}),
    ])  # fmt: skip
    a, b = web.prefix.split(".")[1:3]
    private_ip = f"127.{a}.{int(b) % 250 + 1}.9"  # loopback outside the allowed /24
    web.names["zasebni.gov.si"] = private_ip
    return web, private_ip


def test_under_the_plain_reactor_the_guard_holds_from_the_first_request(tmp_path: Path) -> None:
    web, private_ip = _web()
    listener = Listener(private_ip)
    web.start()
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    # prevara.gov.si answers its address once (the scheduler's lookup, pinned), then the
    # private one: a connection that asks DNS again instead of using the pin reaches it.
    hosts: dict[str, str | list[str]] = {**web.hosts_map()}
    hosts["prevara.gov.si"] = [web.ip_of("prevara.gov.si"), private_ip]
    try:
        run = start_crawl(web, db_url, tmp_path, [f"{V}/", f"{ZS}/"], hosts=hosts,
                          TWISTED_REACTOR=PLAIN_REACTOR).wait(120)  # fmt: skip
    finally:
        web.stop()
        listener.close()
    assert run.returncode == 0 and "Traceback" not in run.log, run.log[-3000:]
    assert PLAIN_REACTOR.rsplit(".", 1)[1] in run.log  # the reactor asked for
    assert listener.connections == []
    rows = dict(query(db_url, "SELECT url, coalesce(fetch_error, page_type_code) FROM page"))
    assert "zasebni.gov.si resolves to" in rows[f"{ZS}/"]
    assert "loopback address" in rows[f"{ZS}/"]
    assert rows[f"{RB}/"] == rows[f"{RB}/druga"] == rows[f"{V}/"] == "HTML"
    assert run.stats.get("retry/count", 0) == 0


def test_a_proxy_in_the_environment_stops_the_crawl_before_any_request(tmp_path: Path) -> None:
    web, _ = _web()
    web.start()
    try:
        run = run_crawl(web, f"sqlite:///{tmp_path / 'crawldb.sqlite3'}", tmp_path, [f"{V}/"],
                        env={"http_proxy": f"http://{web.ip_of('www.varno.gov.si')}:80"},
                        timeout=60)  # fmt: skip
    finally:
        web.stop()
    assert run.returncode != 0
    assert "a proxy is configured (http_proxy); the crawl does not start" in run.log
    assert web.requested() == []
