"""End-to-end revisits: crawl a simulated web, change it (``testkit.simweb.revisitweb``), then
run ``scrapy crawl govsi -s REVISIT=all``: with the SQLite default (rendering on), with
PostgreSQL, and with three workers sharing PostgreSQL. Judged at the servers (what was
asked for, how, and when) and in crawldb (what changed, the history, the current copy). A
run killed half way through its revisits is finished without repeats and without losing
history."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from govsi.changes.query import change_detail
from govsi.search.index import SearchIndex
from govsi.search.searcher import Searcher
from govsi.store.database import make_engine
from testkit.clock import move_clock
from testkit.crawl import (
    CrawlRun,
    query,
    run_changes,
    run_crawl,
    start_crawl,
)
from testkit.simweb import revisitweb
from testkit.simweb.expected import E2E_SETTINGS
from testkit.simweb.revisitweb import A, J, M, U
from testkit.simweb.server import Hit, SimWeb

DELAY = 0.05  # DEFAULT_CRAWL_DELAY; urad.gov.si asks for more (revisitweb.CRAWL_DELAY)
SETTINGS = {**E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": DELAY, "LEASE_TTL": 3,
            "LEASE_SCAN_INTERVAL": 1}  # fmt: skip
NOT_PAGES = {"/robots.txt", "/sitemap.xml"}


def key(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else "")


@dataclass
class Revisited:
    variant: str
    db_url: str
    web: SimWeb
    first: list[Hit]
    second: list[Hit]
    runs: list[CrawlRun]  # the second round's (one per worker)
    stored: set[tuple[str, str]]  # pages (not FRONTIER) and pictures after the first crawl
    validators: dict[tuple[str, str], tuple[str | None, str | None]]  # (ETag, Last-Modified)
    first_done: str  # the first crawl's last visit
    copies_first: set[tuple[str, str]]  # DUPLICATE pages after the first crawl
    warc: Path | None  # the WARC archive both rounds wrote (the sqlite variant)
    # The search index both rounds brought up to date as they ended (not with three
    # workers), and the version of each page it held after the first.
    search_index: Path | None = None
    indexed_first: dict[str, str] | None = None

    def stat(self, name: str) -> int:
        return sum(int(run.stats.get(name, 0)) for run in self.runs)  # type: ignore[call-overload]

    def asked(self) -> Counter[tuple[str, str]]:
        return Counter(
            (h.host, h.target)
            for h in self.second
            if h.target not in NOT_PAGES and (h.host, h.target) not in revisitweb.SUBRESOURCES
        )


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "three workers"])
def revisited(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Revisited]:
    variant = request.param
    work = tmp_path_factory.mktemp("revisit")
    if variant == "sqlite":
        db_url = f"sqlite:///{work / 'crawldb.sqlite3'}"
        # The default: rendering on (auto), where a page needs it; and an archive.
        settings: dict[str, Any] = {**SETTINGS, "RENDER_JS": "auto", "RENDER_TIMEOUT": 20,
                                    "WARC_DIR": str(work / "warc")}  # fmt: skip
    else:
        db_url = request.getfixturevalue("pg_cluster").create_database(
            "revisit" + variant.replace(" ", "")
        )
        settings = dict(SETTINGS)
    index = work / "search-index" if variant != "three workers" else None
    if index is not None:
        settings["SEARCH_INDEX"] = str(index)
    web = revisitweb.build().start()
    try:
        first = run_crawl(web, db_url, work / "first", revisitweb.SEEDS, **settings)
        assert first.returncode == 0, first.log[-3000:]
        first_hits = web.requested()
        rows = query(db_url, "SELECT url, page_type_code, etag, last_modified FROM page")
        images = query(db_url, "SELECT url, etag, last_modified FROM image "
                               "WHERE accessed_time IS NOT NULL")  # fmt: skip
        stored = {key(u) for u, t, _, _ in rows if t != "FRONTIER"} | {key(u) for u, *_ in images}
        validators = {key(u): (e, lm) for u, t, e, lm in rows if t != "FRONTIER"}
        validators |= {key(u): (e, lm) for u, e, lm in images}
        [(first_done,)] = query(db_url, "SELECT max(accessed_time) FROM page")
        copies_first = {key(u) for u, t, _, _ in rows if t == "DUPLICATE"}
        indexed_first = indexed(db_url, index) if index is not None else None

        revisitweb.change(web)
        web.reset_log()
        workers = 3 if variant == "three workers" else 1
        running = [
            start_crawl(
                web, db_url, work / f"second{i}", revisitweb.SEEDS, REVISIT="all", **settings
            )
            for i in range(workers)
        ]
        runs = [r.wait() for r in running]
        for run in runs:
            assert run.returncode == 0, run.log[-3000:]
            assert "Traceback" not in run.log, run.log[-5000:]
        warc = work / "warc" if "WARC_DIR" in settings else None
        yield Revisited(variant, db_url, web, first_hits, web.requested(), runs, stored,
                        validators, str(first_done), copies_first, warc, index,
                        indexed_first)  # fmt: skip
    finally:
        web.stop()


def test_every_stored_url_the_rules_allow_is_asked_for_once(revisited: Revisited) -> None:
    r = revisited
    asked = r.asked()
    twice = {k: n for k, n in asked.items() if n > 1}
    assert not twice, twice
    stored_pages = {k for k in r.stored if k[0] != J or r.variant == "sqlite"}
    # Every stored URL but those robots.txt now forbids, and the new ones: from links, a
    # redirect and the sitemap.
    assert set(asked) == (r.stored - revisitweb.FORBIDDEN) | revisitweb.NEW
    assert stored_pages >= revisitweb.FORBIDDEN
    assert not [h for h in r.second if "/arhiv/" in h.target or "/zasebno/" in h.target]
    # robots.txt read again before each host's revisits, and the sitemap before agencija's.
    for host in (M, U, A, J):
        own = [h.target for h in r.second if h.host == host]
        # (Each worker that takes the host reads it once.)
        assert own[0] == "/robots.txt" and own.count("/robots.txt") <= len(r.runs), (host, own)
    assert "/sitemap.xml" in [h.target for h in r.second if h.host == A]
    assert r.stat("govsi/revisit/sent") == len(r.stored - revisitweb.FORBIDDEN)


def test_revisits_are_conditional_and_unchanged_resources_cost_no_body(
    revisited: Revisited,
) -> None:
    r = revisited
    with_validators = {k for k, v in r.validators.items() if any(v)}
    # Every 200 resource of the hosts that send validators has them stored.
    served = {(h.host, h.target) for h in r.first if h.status == 200 and h.host in (M, U, J)}
    assert served - revisitweb.SUBRESOURCES - {(h, "/robots.txt") for h in (M, U, J)} <= (
        with_validators
    )
    unchanged = 0
    for hit in r.second:
        k = (hit.host, hit.target)
        if k not in with_validators:
            continue
        etag, last_modified = r.validators[k]
        # Sent back verbatim (nginx's if_modified_since exact).
        assert hit.header("If-None-Match") == etag, k
        assert hit.header("If-Modified-Since") == last_modified, k
        same = (
            k not in revisitweb.CHANGED | revisitweb.TEMPLATE_CHANGED
            and k not in revisitweb.REPLACED_PICTURES
        )
        if same:
            assert (hit.status, hit.bytes_sent) == (304, 0), k
            unchanged += 1
        else:
            assert hit.status != 304, k
    assert unchanged > 40
    # A host that sends no validators is asked unconditionally, and answers in full.
    for hit in r.second:
        if hit.host == A:
            assert hit.header("If-None-Match") is None and hit.header("If-Modified-Since") is None


def test_the_archive_keeps_each_304_as_a_server_not_modified_revisit(
    revisited: Revisited,
) -> None:
    r = revisited
    if r.warc is None:
        pytest.skip("the archive is written by the sqlite variant")
    kinds: Counter[tuple[str, str, str]] = Counter()
    for path in r.warc.glob("*.warc.gz"):
        with open(path, "rb") as f:
            for record in ArchiveIterator(f):
                if record.rec_type not in ("response", "revisit"):
                    continue
                h = record.rec_headers
                profile = (h.get_header("WARC-Profile") or "").rsplit("/", 1)[-1]
                host, target = key(h.get_header("WARC-Target-URI"))
                kinds[(host, target, profile or record.http_headers.get_statuscode())] += 1
    not_modified = Counter((h.host, h.target) for h in r.second if h.status == 304)
    assert not_modified
    for (host, target), n in not_modified.items():
        assert kinds[(host, target, "server-not-modified")] == n, (host, target)
    # Nothing else is a server-not-modified revisit.
    assert sum(n for k, n in kinds.items() if k[2] == "server-not-modified") == sum(
        not_modified.values()
    )


def indexed(db_url: str, index: Path) -> dict[str, str]:
    """The URL and version mark of every page the search index holds."""
    with sqlite3.connect(index / "state.sqlite3") as state:
        marks = dict(state.execute("SELECT page_id, mark FROM indexed"))
    return {url: marks[pid] for pid, url in query(db_url, "SELECT id, url FROM page")
            if pid in marks}  # fmt: skip


def test_the_search_index_follows_the_revisits(revisited: Revisited) -> None:
    """The crawl's end brought the index up to date: changed pages and documents indexed
    again, pages gone or moved dropped, steady ones (a new footer is no change) left as
    they were; a changed page is found by its new text."""
    r = revisited
    if r.search_index is None or r.indexed_first is None:
        pytest.skip("three workers share no index folder")
    now = indexed(r.db_url, r.search_index)
    findable = query(r.db_url, "SELECT p.url, t.extracted_at, t.text FROM page_text t JOIN page "
                               "p ON p.id = t.page_id WHERE t.status = 'ok'")  # fmt: skip
    assert now == {u: str(mark) for u, mark, _ in findable}
    first = {key(u): m for u, m in r.indexed_first.items()}
    later = {key(u): m for u, m in now.items()}
    for k in (revisitweb.MAIN_CHANGED | revisitweb.REPLACED_DOCUMENTS) & set(first):
        assert later[k] != first[k], k
    assert not (revisitweb.GONE | revisitweb.MOVED) & set(later)
    for k in revisitweb.TEMPLATE_CHANGED & set(first):
        assert later[k] == first[k], k
    url, _, body = next(f for f in findable if key(f[0]) in revisitweb.MAIN_CHANGED)
    phrase = '"' + " ".join(body.split()[:6]) + '"'
    index = SearchIndex.open(r.search_index)
    try:
        urls = [h.url for h in Searcher(index).search(phrase, limit=50).hits]
    finally:
        index.close()
    assert url in urls


def test_changed_is_exactly_what_changed(revisited: Revisited) -> None:
    r = revisited
    rows = query(r.db_url, "SELECT p.url, p.changed_time, p.accessed_time, "
                           "(SELECT count(*) FROM page_version v WHERE v.page_id = p.id) "
                           "FROM page p WHERE p.page_type_code != 'FRONTIER'")  # fmt: skip
    first = r.stored
    versions = {key(u): n for u, _, _, n in rows}
    changed_since = {key(u) for u, changed, _, _ in rows if str(changed) > r.first_done}
    expected = revisitweb.CHANGED & first
    # Precision and recall of "changed" are 1.0, for pages and for documents: each changed,
    # gone or moved URL has its previous version, no steady one has one.
    assert {k for k, n in versions.items() if n} == expected
    assert all(versions[k] == 1 for k in expected)
    assert changed_since & first == expected
    assert (
        expected >= revisitweb.REPLACED_DOCUMENTS and expected >= revisitweb.GONE | revisitweb.MOVED
    )
    # A template change (footer date, view counter, CSRF token, banner) is no change, yet
    # the stored HTML is the latest.
    assert not revisitweb.TEMPLATE_CHANGED & changed_since
    # What each visit found, as the report counts it.
    outcome = {key(u): o for u, o in query(r.db_url, "SELECT url, visit_outcome FROM page")}
    for k in revisitweb.MAIN_CHANGED | revisitweb.REPLACED_DOCUMENTS:
        assert outcome[k] == "changed", k
    assert {outcome[k] for k in revisitweb.GONE} == {"gone"}
    assert {outcome[k] for k in revisitweb.MOVED} == {"moved"}
    assert {outcome[k] for k in revisitweb.TEMPLATE_CHANGED} == {"same"}
    assert {outcome[k] for k in revisitweb.FORBIDDEN} == {"kept"}
    assert {outcome[k] for k in revisitweb.NEW} == {"new"}
    assert outcome[(M, "/")] == "not_modified" and outcome[(A, "/")] == "same"
    # Pictures: the replaced ones have their new bytes' hash, the others their old one.
    for url, digest in query(r.db_url, "SELECT url, content_hash FROM image"):
        body = r.web.lookup(*key(url)).body
        assert digest == hashlib.sha256(body).hexdigest(), url


def _links_of(host: str, body: str) -> set[tuple[str, str]]:
    out = set()
    for href in re.findall(r'href="([^"]+)"', body):
        out.add(key(href) if href.startswith("http") else (host, href))
    return out


def test_the_current_copy_and_its_links_are_the_new_webs(revisited: Revisited) -> None:
    r = revisited
    # One page of agencija's pair is the other's copy (which one: the crawl's order).
    assert len(r.copies_first & {(A, path) for path in revisitweb.COPY}) == 1, r.copies_first
    ids = {i: key(u) for i, u in query(r.db_url, "SELECT id, url FROM page")}
    links: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for a, b in query(r.db_url, "SELECT from_page, to_page FROM link"):
        links[ids[a]].add(ids[b])
    rows = query(r.db_url, "SELECT url, page_type_code, http_status_code, html_content, "
                           "fetch_error FROM page WHERE page_type_code != 'FRONTIER'")  # fmt: skip
    checked = 0
    for url, kind, status, content, error in rows:
        k = key(url)
        live = r.web.lookup(*k)
        if k in revisitweb.FORBIDDEN:
            # Kept as it was, with the reason.
            assert status == 200 and "robots.txt" in (error or ""), (k, error)
            continue
        if k[0] == J and r.variant == "sqlite":
            continue  # rendered: the DOM, not the served bytes (below)
        if k == (A, revisitweb.ENDLESS):
            assert kind == "ERROR" and status is None, k  # failed again, as the first time
            continue
        assert status == live.status, k
        if kind == "DUPLICATE":
            # The same page of the pair as on the first visit (the one fetched second then):
            # a revisit does not make the other the original.
            assert content is None and k in r.copies_first, k
            assert k in {(A, path) for path in revisitweb.COPY}, k
        elif kind == "HTML" and status == 200:
            assert content == live.body.decode(), k
            assert links[k] == _links_of(k[0], content), k
            checked += 1
        elif status == 301:
            assert links[k] == {key(live.headers["Location"])}, k
    assert checked > 60
    # New pages, from links, a redirect and the sitemap, are stored.
    types = {key(u): (t, s) for u, t, s, *_ in rows}
    for k in revisitweb.NEW:
        assert types[k] == ("HTML", 200), k


def test_no_request_closer_than_its_hosts_or_its_addresss_delay(revisited: Revisited) -> None:
    r = revisited
    by_host: dict[str, list[float]] = defaultdict(list)
    by_ip: dict[str, list[float]] = defaultdict(list)
    for h in r.second:
        by_host[h.host].append(h.time)
        by_ip[r.web.ip_of(h.host)].append(h.time)

    def gaps(times: list[float]) -> list[float]:
        return [b - a for a, b in pairwise(sorted(times))]

    # urad.gov.si's Crawl-delay doubled: the new one holds from its robots.txt on.
    assert min(gaps(by_host[U])) >= revisitweb.CRAWL_DELAY[2], gaps(by_host[U])
    for host, times in by_host.items():
        assert min(gaps(times), default=DELAY) >= DELAY, host
    for ip, times in by_ip.items():
        assert min(gaps(times), default=DELAY) >= DELAY, ip


def test_a_rendered_pages_revisit_is_decided_on_its_served_html(revisited: Revisited) -> None:
    r = revisited
    if r.variant != "sqlite":
        pytest.skip("rendering is on in the SQLite (default) crawl")
    sql = f"SELECT url, rendered, html_content FROM page WHERE url LIKE 'http://{J}/%'"
    rows = {key(u): (rendered, html) for u, rendered, html in query(r.db_url, sql)}
    # /app answered 304: not rendered again, its rendered copy kept. /app2 changed: rendered.
    assert r.stat("govsi/render/pages") == 1
    for path in ("/app", "/app2"):
        rendered, html = rows[(J, path)]
        assert rendered and 'href="/iz-js"' in html, path
    assert revisitweb.MAIN_CHANGED & {(J, "/app2")}
    app2 = r.web.lookup(J, "/app2").body.decode()
    intro = re.search(r"<main><h1>[^<]*</h1><p>([^<]+)</p>", app2)
    assert intro is not None and intro.group(1) in rows[(J, "/app2")][1]


def test_a_run_right_after_revisits_nothing(revisited: Revisited, tmp_path: Path) -> None:
    r = revisited
    if r.variant != "sqlite":
        pytest.skip("once is enough")
    r.web.reset_log()
    third = run_crawl(r.web, r.db_url, tmp_path, revisitweb.SEEDS, **SETTINGS)
    assert third.returncode == 0, third.log[-3000:]
    again = [h for h in r.web.requested() if h.target not in NOT_PAGES]
    assert again == [], again[:5]
    assert third.stats.get("govsi/revisit/due", 0) == 0
    assert query(r.db_url, "SELECT count(*) FROM page WHERE revisit_claim IS NOT NULL") == [(0,)]


def test_a_revisit_round_killed_half_way_is_finished_without_repeats(tmp_path: Path) -> None:
    web = revisitweb.build().start()
    try:
        _killed_and_resumed(web, tmp_path)
    finally:
        web.stop()


def _wait_for_revisits(db_url: str, after: object, n: int, timeout: float = 120) -> None:
    """Block until crawldb records ``n`` visits later than ``after``."""
    deadline = time.monotonic() + timeout
    sql = "SELECT accessed_time FROM page WHERE accessed_time IS NOT NULL"
    while sum(str(at) > str(after) for (at,) in query(db_url, sql)) < n:
        if time.monotonic() > deadline:
            raise AssertionError("the revisit round never reached crawldb")
        time.sleep(0.05)


def _killed_and_resumed(web: SimWeb, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    first = run_crawl(web, db_url, tmp_path / "run1", revisitweb.SEEDS, **E2E_SETTINGS)
    assert first.returncode == 0, first.log[-3000:]
    [(crawled_by,)] = query(db_url, "SELECT max(accessed_time) FROM page")
    stored = {
        key(u) for u, t in query(db_url, "SELECT url, page_type_code FROM page") if t != "FRONTIER"
    }

    # A delay spreads the round out so that the kill lands in the middle of it, even when
    # a loaded machine flushes crawldb late (0.1 s let a whole round through under load).
    settings = {**E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": 0.3, "DB_FLUSH_INTERVAL": 0.5}
    revisitweb.change(web)
    web.reset_log()
    killed = start_crawl(web, db_url, tmp_path / "run2", revisitweb.SEEDS, REVISIT="all",
                         **settings)  # fmt: skip
    # Killed once crawldb holds a few of the round's visits, however slowly this machine
    # runs the crawl: the resumed run must skip them and do the rest.
    _wait_for_revisits(db_url, crawled_by, 3)
    os.kill(killed.proc.pid, signal.SIGKILL)
    killed.proc.wait(timeout=30)
    before = {(h.host, h.target) for h in web.requested()}
    recorded = {
        key(u)
        for u, at in query(db_url, "SELECT url, accessed_time FROM page")
        if at is not None and str(at) > str(crawled_by)
    }
    assert recorded and len(recorded) < len(stored) - 10, "the kill missed the revisits"

    web.reset_log()
    resumed = run_crawl(web, db_url, tmp_path / "run3", revisitweb.SEEDS, REVISIT="all",
                        **settings)  # fmt: skip
    assert resumed.returncode == 0, resumed.log[-3000:]
    after = Counter((h.host, h.target) for h in web.requested() if h.target not in NOT_PAGES)
    # What the killed run recorded is not asked for again; the rest of the round is, once.
    assert recorded & set(after) == set()
    assert stored - revisitweb.FORBIDDEN <= before | set(after)
    assert all(n == 1 for n in after.values()), after
    assert query(db_url, "SELECT count(*) FROM page WHERE revisit_claim IS NOT NULL") == [(0,)]
    # No history lost: each changed page has its one earlier version, no steady one has one.
    versions = query(db_url, "SELECT p.url, count(*) FROM page_version v "
                             "JOIN page p ON p.id = v.page_id GROUP BY p.url")  # fmt: skip
    assert {key(u): n for u, n in versions} == dict.fromkeys(revisitweb.CHANGED & stored, 1)


def test_a_due_round_two_days_later_revisits_every_picture(tmp_path: Path) -> None:
    """REVISIT=due (the default) two days after a crawl: every page is due, and so is every
    picture they show, in the same run (not only those whose page's visit was written
    before the run looked at its host's pictures)."""
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    web = revisitweb.build().start()
    try:
        first = run_crawl(web, db_url, tmp_path / "first", revisitweb.SEEDS, **SETTINGS)
        assert first.returncode == 0, first.log[-3000:]
        shown = "SELECT DISTINCT url FROM image WHERE accessed_time IS NOT NULL"
        pictures = {key(u) for (u,) in query(db_url, shown)}
        pages = {key(u) for u, t in query(db_url, "SELECT url, page_type_code FROM page")
                 if t != "FRONTIER"}  # fmt: skip
        assert len(pictures) >= 10
        move_clock(db_url, timedelta(days=2))
        web.reset_log()
        later = run_crawl(web, db_url, tmp_path / "later", revisitweb.SEEDS, **SETTINGS)
        assert later.returncode == 0, later.log[-3000:]
        asked = Counter((h.host, h.target) for h in web.requested())
        assert pictures - set(asked) == set()
        assert pages - revisitweb.FORBIDDEN - set(asked) == set()
        assert all(asked[k] == 1 for k in pictures | pages), asked
    finally:
        web.stop()


_LISTED: dict[str, list[dict[str, Any]]] = {}


def second_round_changes(r: Revisited, *args: str) -> list[dict[str, Any]]:
    """``scrapy changes --json`` of the second round only (after the first's last visit);
    without ``args``, run once per crawl."""
    if not args and r.db_url in _LISTED:
        return _LISTED[r.db_url]
    first_done = datetime.fromisoformat(r.first_done) + timedelta(microseconds=1)
    found = run_changes(r.db_url, "--since", first_done.isoformat(), "--limit", "1000", *args)
    if not args:
        _LISTED[r.db_url] = found
    return found


def test_scrapy_changes_lists_what_the_second_round_found(revisited: Revisited) -> None:
    r = revisited
    found = second_round_changes(r)
    listed = {(c["change"], *key(c["url"])) for c in found}
    assert len(listed) == len(found)  # each change once
    types = {key(u): t for u, t in query(r.db_url, "SELECT url, page_type_code FROM page")}
    # New: fetched for the first time with a copy (not the sitemap's copy of a page).
    new = {k for k in revisitweb.NEW if types.get(k) in ("HTML", "BINARY")}
    expected = (
        {("new", *k) for k in new}
        | {("changed", *k) for k in revisitweb.MAIN_CHANGED | revisitweb.REPLACED_DOCUMENTS}
        | {("gone", *k) for k in revisitweb.GONE}
        | {("moved", *k) for k in revisitweb.MOVED}
    )
    # Template-only changes, pages robots.txt now forbids and unchanged ones: none.
    assert listed == expected
    times = [c["time"] for c in found]
    assert times == sorted(times, reverse=True)  # newest first
    for c in found:
        if c["change"] == "changed" and key(c["url"]) in revisitweb.MAIN_CHANGED:
            assert c["added"] and c["removed"], c  # words in and out of its main text
        assert c["title"] is None or isinstance(c["title"], str)


def test_a_changed_pages_diff_shows_the_words_added_and_removed(revisited: Revisited) -> None:
    r = revisited
    page = sorted(k for k in revisitweb.MAIN_CHANGED if k[0] == M)[0]
    [entry] = [c for c in second_round_changes(r) if key(c["url"]) == page]
    engine = make_engine(r.db_url)
    try:
        detail = change_detail(engine, int(entry["id"]))
    finally:
        engine.dispose()
    assert detail is not None and detail.diff is not None
    ops = detail.diff.ops
    before = "".join(t for op, t in ops if op != "insert")
    after = "".join(t for op, t in ops if op != "delete")
    host, path = page
    index = int(path.rsplit("/", 1)[1])
    # The two versions' main texts, word for word (revisitweb writes them).
    assert " ".join(words(revisitweb.main_text_words(host, index, 1))) in " ".join(words(before))
    assert " ".join(words(revisitweb.main_text_words(host, index, 2))) in " ".join(words(after))
    assert any(op == "insert" for op, _ in ops) and any(op == "delete" for op, _ in ops)


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def test_a_search_filter_narrows_the_changes_to_its_pages(revisited: Revisited) -> None:
    # The moved pages' new addresses (/preseljeno/<i>) are the only changes naming it.
    found = second_round_changes(revisited, "preseljeno")
    expected = {("new", h, f"/preseljeno/{i}") for h, p in revisitweb.MOVED
                for i in [p.rsplit("/", 1)[1]]}  # fmt: skip
    assert {(c["change"], *key(c["url"])) for c in found} == expected
    assert second_round_changes(revisited, "preseljeno", "--kind", "changed") == []
