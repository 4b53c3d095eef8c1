"""Changes notifications (``govsi.changes.notify``, ``message``, ``marks``, ``sending``):
the message built from hostile entries stays clean and bounded; each saved filter's
high-water mark in crawldb sends a change once, again after a failed send, independently
of other filters and of other workers (SQLite and PostgreSQL); the Apprise URLs come from
the environment only and never reach the log; Apprise sends for real to a local HTTP
server (``json://``), which receives the message."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler
from sqlalchemy import Engine, insert, update

import govsi.settings
from govsi.changes import marks
from govsi.changes.message import (
    BODY_MAX_CHARS,
    Message,
    build_message,
    changes_links,
    entry_text,
    one_line,
)
from govsi.changes.notify import ChangesNotify, Outcome, saved_filters
from govsi.changes.query import ChangeEntry
from govsi.changes.sending import Sent, Targets
from govsi.printable import UNPRINTABLE
from govsi.store.schema import CRAWL_META, PAGE, PAGE_CHANGE, PAGE_DATA, SITE
from testkit.crawl import start_crawl
from testkit.simweb.server import Host, Resource, SimWeb, html

T = datetime(2026, 11, 29, 8, 0)
HOSTILE = "Uredba\x1b]52;c;aGk=\x07 o\n\nNEW · fake line\u202eevil\x9b2J\r\x00<b>x</b>"
_UNPRINTABLE = re.compile(f"[{UNPRINTABLE}]")


def entry(id_: int = 1, title: str | None = "Uredba o občinah", **kw: Any) -> ChangeEntry:
    values: dict[str, Any] = {
        "page_id": 1, "url": f"https://www.gov.si/uredba-{id_}", "host": "www.gov.si",
        "kind": "changed", "time": T + timedelta(minutes=id_), "title": title,
        "doc_type": "html", "added": "rok 60 dni", "removed": "rok 30 dni",
    }  # fmt: skip
    values.update(kw)
    return ChangeEntry(id_, **values)


def clean(text: str) -> bool:
    """No character ``printable`` escapes (line feeds and tabs may be)."""
    return _UNPRINTABLE.search(text) is None


# --- The message (pure) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("Uredba o občinah", 100, "Uredba o občinah"),
        ("  a\n\n b\tc\u2028d  ", 100, "a b c d"),  # whitespace runs: one space, one line
        ("a\x1bb", 100, "a\\x1bb"),  # controls escaped, visible
        ("a\u202eb", 100, "a\\u202eb"),
        ("a\x9bb\x00", 100, "a\\x9bb\\x00"),
        ("abcdef", 3, "abc…"),
        (None, 10, ""),
        ("<b>x</b> & y", 100, "<b>x</b> & y"),  # markup stays text (sent as plain text)
    ],
)
def test_one_line(text: str | None, limit: int, expected: str) -> None:
    assert one_line(text, limit) == expected


@dataclass(frozen=True)
class Case:
    entries: list[ChangeEntry]
    total: int
    kwargs: dict[str, Any] = field(default_factory=dict)
    title: str = ""
    has: tuple[str, ...] = ()
    lacks: tuple[str, ...] = ()
    blocks: int | None = None  # entries listed


CASES = {
    "one": Case(
        [entry(1)],
        1,
        title="govsi: 1 change for 'uredbe'",
        has=(
            "CHANGED · 2026-11-29 08:01 UTC · Uredba o občinah",
            "https://www.gov.si/uredba-1",
            "+ rok 60 dni",
            "- rok 30 dni",
        ),
        lacks=("more", "Feed:"),
        blocks=1,
    ),
    "more than listed": Case(
        [entry(3), entry(2)],
        7,
        title="govsi: 7 changes for 'uredbe'",
        has=("… and 5 more",),
        blocks=2,
    ),
    "at least": Case(
        [entry(1)],
        5000,
        {"complete": False},
        title="govsi: 5000+ changes for 'uredbe'",
        has=("… and 4999+ more",),
    ),
    "no title, no excerpts": Case(
        [entry(1, None, added="", removed="", kind="new")],
        1,
        has=("NEW · 2026-11-29 08:01 UTC · (no title)",),
        lacks=("+ ", "- "),
    ),
    "links": Case(
        [entry(1)],
        1,
        {"page_link": "http://h/changes?q=uredba", "feed_link": "http://h/changes.atom?q=uredba"},
        has=("All of them: http://h/changes?q=uredba", "Feed: http://h/changes.atom?q=uredba"),
    ),
    "hostile title": Case(
        [entry(1, HOSTILE, url="https://x/\x1b[2J\nNEW · x", added=HOSTILE)],
        1,
        has=("Uredba\\x1b]52;c;aGk=\\x07 o NEW · fake line\\u202eevil",),
        lacks=("\nNEW · fake",),
        blocks=1,
    ),
    "huge strings": Case(
        [entry(1, "x" * 1_000_000, url="https://x/" + "y" * 1_000_000, added="z" * 1_000_000)],
        1,
        blocks=1,
    ),
    "past the body's bound": Case(
        [entry(i, "t" * 150) for i in range(100, 0, -1)], 100, {"max_chars": 3000}, has=("more",)
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_message(case: Case) -> None:
    msg = build_message("uredbe", case.entries, case.total, **case.kwargs)
    limit = case.kwargs.get("max_chars", BODY_MAX_CHARS)
    assert len(msg.body) <= limit
    assert len(msg.title) <= 200
    assert "\n" not in msg.title
    assert clean(msg.title) and clean(msg.body)
    if case.title:
        assert msg.title == case.title
    for text in case.has:
        assert text in msg.body
    for text in case.lacks:
        assert text not in msg.body
    listed = msg.body.count(" UTC · ")
    if case.blocks is not None:
        assert listed == case.blocks
    # Every entry not listed is counted in "more".
    more = len(case.entries) - listed
    if more and case.kwargs.get("complete", True):
        assert f"… and {max(case.total, len(case.entries)) - listed} more" in msg.body


def test_an_entry_is_its_lines_in_order() -> None:
    assert entry_text(entry(2, kind="gone", added="")).splitlines() == [
        "GONE · 2026-11-29 08:02 UTC · Uredba o občinah",
        "https://www.gov.si/uredba-2",
        "- rok 30 dni",
    ]


@pytest.mark.parametrize(
    ("base", "page", "feed", "expected"),
    [
        ("", {"q": "uredba"}, {"q": "uredba"}, ("", "")),
        ("https://g.example/", {"q": "uredba", "type": "pdf"}, {"q": "uredba"},
         ("https://g.example/changes?q=uredba&type=pdf",
          "https://g.example/changes.atom?q=uredba")),
        ("http://h:8080", {}, {"kind": "new,gone"},
         ("http://h:8080/changes", "http://h:8080/changes.atom?kind=gone,new")),
        ("http://h", {"q": "javna naročila & <x>"}, {},
         ("http://h/changes?q=javna%20naro%C4%8Dila%20%26%20%3Cx%3E", "http://h/changes.atom")),
    ],
)  # fmt: skip
def test_links_to_the_changes_page_and_feed(
    base: str, page: dict[str, str], feed: dict[str, str], expected: tuple[str, str]
) -> None:
    assert changes_links(base, page, feed) == expected


@pytest.mark.parametrize(
    ("value", "found", "error"),
    [
        ({"uredbe": "q=uredba&type=pdf"}, {"uredbe": {"q": "uredba", "type": "pdf"}}, ""),
        ({"u": "?q=uredba"}, {"u": {"q": "uredba"}}, ""),
        ({"u": {"q": "uredba", "host": "www.gov.si"}},
         {"u": {"q": "uredba", "host": "www.gov.si"}}, ""),
        ({"k": "kind=new&kind=gone"}, {"k": {"kind": "new,gone"}}, ""),
        ({"all": ""}, {"all": {}}, ""),
        ({"  two\nlines ": "q=a"}, {"two lines": {"q": "a"}}, ""),
        ({"x": "type=exe"}, {}, "'x' left out: no page type 'exe'"),
        ({"x": "since=tomorrow"}, {}, "'x' left out: 'tomorrow' is no time"),
        ({"x": ["q=a"]}, {}, "'x' left out: say its filter as a query string"),
        ({"": "q=a"}, {}, "left out: a saved filter needs a name"),
    ],
)  # fmt: skip
def test_saved_filters_are_read_or_left_out_with_why(
    value: dict[str, Any], found: dict[str, dict[str, str]], error: str
) -> None:
    filters, errors = saved_filters(value, T)
    assert {f.name: f.mapping() for f in filters} == found
    assert (error in errors[0]) if error else errors == []


@pytest.mark.parametrize(
    ("value", "mark"),
    [
        (None, marks.Mark()),
        ("0|2026-11-29T08:00:00||0001-01-01T00:00:00", marks.Mark(0, T)),
        ("42|2026-11-29T08:00:00|abc|2026-11-29T09:00:00",
         marks.Mark(42, T, "abc", T + timedelta(hours=1))),
        ("42|2026-11-29T08:00:00|abc", None),
        ("x|2026-11-29T08:00:00||0001-01-01T00:00:00", None),
        ("-1|2026-11-29T08:00:00||0001-01-01T00:00:00", None),
        ("1|yesterday||0001-01-01T00:00:00", None),
        ("1|2026-11-29T08:00:00+02:00||0001-01-01T00:00:00", None),
        ("", None),
    ],
)  # fmt: skip
def test_a_stored_mark_is_read_back_or_refused(value: str | None, mark: marks.Mark | None) -> None:
    assert marks.read_mark(value) == mark
    if mark is not None:
        assert marks.read_mark(mark.value()) == mark


# --- The high-water mark, on SQLite and PostgreSQL ----------------------------------


class FakeTargets(Targets):
    """Records each message; fails while ``failing`` (or when a title has ``fail_on``)."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.failing = False
        self.fail_on = ""

    def __len__(self) -> int:
        return 1

    def send(self, message: Message, timeout: float) -> Sent:
        if self.failing or (self.fail_on and self.fail_on in message.title):
            return Sent(False, ("JSON: failure",))
        self.sent.append(message)
        return Sent(True)


class Crawl:
    """A crawldb with a site and a page, and changes added at will."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        with engine.begin() as conn:
            site = conn.execute(insert(SITE).values(domain="www.gov.si")).inserted_primary_key[0]
            self.pages = {}
            for name, type_ in (("uredba", "HTML"), ("razpis", "BINARY")):
                self.pages[name] = conn.execute(insert(PAGE).values(
                    site_id=site, url=f"https://www.gov.si/{name}", page_type_code=type_,
                    http_status_code=200, accessed_time=T,
                )).inserted_primary_key[0]  # fmt: skip

    def change(self, title: str, at: datetime, page: str = "uredba", kind: str = "new") -> int:
        with self.engine.begin() as conn:
            return int(conn.execute(insert(PAGE_CHANGE).values(
                page_id=self.pages[page], visit_time=at, kind=kind, title=title,
            )).inserted_primary_key[0])  # fmt: skip


def crawler_with(settings: dict[str, Any]) -> Crawler:
    """A crawler on the project's settings with ``settings`` given as -s gives them."""
    project = {k: v for k, v in vars(govsi.settings).items() if k.isupper()}
    # Its extensions built by the test, not by the crawler (no CrawlStore opening crawldb).
    return get_crawler(settings_dict={**project, "EXTENSIONS": {}, **settings})


def notifier(engine: Engine, filters: dict[str, str], monkeypatch: pytest.MonkeyPatch,
             targets: Targets | None = None, **settings: Any) -> ChangesNotify:  # fmt: skip
    """The extension as a crawl builds it (from_crawler), sending to ``targets``."""
    monkeypatch.setenv("GOVSI_TEST_NOTIFY", "json://127.0.0.1:9/unused")
    crawler = crawler_with({
        "CHANGES_NOTIFY": json.dumps(filters), "CHANGES_NOTIFY_URLS_ENV": "GOVSI_TEST_NOTIFY",
        "CRAWLDB_URL": engine.url.render_as_string(hide_password=False), **settings,
    })  # fmt: skip
    ext = ChangesNotify.from_crawler(crawler)
    if targets is not None:
        ext.targets = targets
    return ext


def run(ext: ChangesNotify, started: datetime, now: datetime) -> list[Outcome]:
    """One run of a worker: opened at ``started``, its engine stopped at ``now``."""
    ext.started = started
    ext._open_marks()
    return ext.notify_all(now)


@pytest.fixture
def everything(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> tuple[Crawl, FakeTargets, ChangesNotify]:
    """A crawldb, and the extension with one saved filter, "all", sending to fake targets."""
    targets = FakeTargets()
    return Crawl(engine), targets, notifier(engine, {"all": ""}, monkeypatch, targets)


def titles(targets: FakeTargets) -> list[str]:
    return [m.title for m in targets.sent]


def test_each_change_is_sent_once_and_again_after_a_failure(
    engine: Engine, everything: tuple[Crawl, FakeTargets, ChangesNotify]
) -> None:
    crawl, targets, ext = everything
    crawl.change("Before the first run", T - timedelta(days=30))
    run1 = T + timedelta(days=1)
    crawl.change("Uredba A", run1 + timedelta(minutes=1))
    crawl.change("Uredba B", run1 + timedelta(minutes=2))
    [outcome] = run(ext, run1, run1 + timedelta(hours=1))
    assert outcome == Outcome("all", 2, sent=True)
    # The first notification starts from the crawl's start, not from the whole history.
    assert titles(targets) == ["govsi: 2 changes for 'all'"]
    assert "Uredba B" in targets.sent[0].body and "Before the first run" not in targets.sent[0].body
    assert run(ext, run1 + timedelta(hours=2), run1 + timedelta(hours=3)) == [Outcome("all")]
    assert len(targets.sent) == 1  # nothing new, nothing sent

    run2 = T + timedelta(days=2)
    crawl.change("Uredba C", run2 + timedelta(minutes=1))
    targets.failing = True
    [failed] = run(ext, run2, run2 + timedelta(hours=1))
    assert (failed.found, failed.sent, failed.failed) == (1, False, ("JSON: failure",))
    run3 = T + timedelta(days=3)
    crawl.change("Uredba D", run3 + timedelta(minutes=1))
    targets.failing = False
    assert run(ext, run3, run3 + timedelta(hours=1)) == [Outcome("all", 2, sent=True)]
    body = targets.sent[-1].body
    assert "Uredba C" in body and "Uredba D" in body and "Uredba B" not in body


def test_two_filters_keep_marks_of_their_own(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    crawl = Crawl(engine)
    targets = FakeTargets()
    ext = notifier(engine, {"pdf": "type=pdf", "all": "kind=new,changed"}, monkeypatch, targets)
    with engine.begin() as conn:
        conn.execute(insert(PAGE_DATA).values(
            page_id=crawl.pages["razpis"], data_type_code="PDF"))  # fmt: skip
    run1 = T + timedelta(days=1)
    crawl.change("Razpis", run1 + timedelta(minutes=1), "razpis")
    crawl.change("Uredba", run1 + timedelta(minutes=2))
    targets.fail_on = "'pdf'"
    outcomes = run(ext, run1, run1 + timedelta(hours=1))
    assert {(o.name, o.found, o.sent) for o in outcomes} == {("all", 2, True), ("pdf", 1, False)}
    targets.fail_on = ""
    run2 = T + timedelta(days=2)
    outcomes = run(ext, run2, run2 + timedelta(hours=1))
    # Only the filter whose send failed sends again.
    assert {(o.name, o.found, o.sent) for o in outcomes} == {("all", 0, False), ("pdf", 1, True)}
    assert titles(targets) == ["govsi: 2 changes for 'all'", "govsi: 1 change for 'pdf'"]
    assert "Razpis" in targets.sent[1].body and "Uredba" not in targets.sent[1].body


def test_workers_closing_one_after_another_send_each_change_once(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    crawl = Crawl(engine)
    first, second = FakeTargets(), FakeTargets()
    a = notifier(engine, {"all": ""}, monkeypatch, first)
    b = notifier(engine, {"all": ""}, monkeypatch, second)
    start = T + timedelta(days=1)
    # b started first; a's changes and b's, written before a closes.
    b.started = start
    b._open_marks()
    crawl.change("By b, early", start + timedelta(minutes=1))
    a.started = start + timedelta(minutes=5)
    a._open_marks()
    crawl.change("By a", start + timedelta(minutes=6))
    a.notify_all(start + timedelta(hours=1))
    crawl.change("By b, late", start + timedelta(hours=1, minutes=1))
    b.notify_all(start + timedelta(hours=2))
    assert [m.body.count(" UTC · ") for m in first.sent + second.sent] == [2, 1]
    assert "By b, early" in first.sent[0].body and "By a" in first.sent[0].body
    assert "By b, late" in second.sent[0].body and "By a" not in second.sent[0].body


def test_a_mark_another_worker_holds_is_left_until_its_claim_ends(
    engine: Engine, everything: tuple[Crawl, FakeTargets, ChangesNotify]
) -> None:
    crawl, targets, ext = everything
    start = T + timedelta(days=1)
    crawl.change("Uredba", start + timedelta(minutes=1))
    now = start + timedelta(hours=1)
    assert marks.claim(engine, "all", "another", now, now + timedelta(hours=1), start)
    assert run(ext, start, now) == [Outcome("all", held=True)]
    assert targets.sent == []
    # A worker that died holding it: taken over once its claim has ended.
    later = now + timedelta(hours=2)
    assert run(ext, start, later) == [Outcome("all", 1, sent=True)]
    assert not marks.settle(engine, "all", "another", marks.Mark(99, later))


def test_an_unreadable_mark_sends_nothing_and_starts_again(
    engine: Engine,
    everything: tuple[Crawl, FakeTargets, ChangesNotify],
    caplog: pytest.LogCaptureFixture,
) -> None:
    crawl, targets, ext = everything
    start = T + timedelta(days=1)
    crawl.change("Uredba", start + timedelta(minutes=1))
    ext.started = start
    ext._open_marks()
    with engine.begin() as conn:
        conn.execute(update(CRAWL_META).where(CRAWL_META.c.key == marks.mark_key("all"))
                     .values(value="garbage"))  # fmt: skip
    with caplog.at_level(logging.WARNING):
        assert ext.notify_all(start + timedelta(hours=1)) == [Outcome("all", held=True)]
    assert "its mark in crawl_meta reads 'garbage'" in caplog.text
    crawl.change("Later", start + timedelta(hours=2))
    assert run(ext, start + timedelta(hours=2), start + timedelta(hours=3)) == [
        Outcome("all", 1, sent=True)
    ]
    [_head, *listed] = targets.sent[0].body.split("\n\n")
    assert "Later" in listed[0] and not any("Uredba" in block for block in listed)


# --- Configuration: off by default, secrets from the environment only ---------------


def test_off_by_default() -> None:
    crawler = crawler_with({})
    with pytest.raises(NotConfigured):
        ChangesNotify.from_crawler(crawler)


@pytest.mark.parametrize("value", [None, "", "   ", "not a url"])
def test_without_urls_in_the_environment_it_is_off_and_says_why(
    value: str | None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    tmp_path: Any,
) -> None:  # fmt: skip
    if value is None:
        monkeypatch.delenv("GOVSI_TEST_NONE", raising=False)
    else:
        monkeypatch.setenv("GOVSI_TEST_NONE", value)
    crawler = crawler_with({
        "CHANGES_NOTIFY": '{"u": "q=uredba"}', "CHANGES_NOTIFY_URLS_ENV": "GOVSI_TEST_NONE",
        "CRAWLDB_URL": f"sqlite:///{tmp_path}/c.sqlite3",
    })  # fmt: skip
    with caplog.at_level(logging.ERROR), pytest.raises(NotConfigured):
        ChangesNotify.from_crawler(crawler)
    assert "changes notifications are off" in caplog.text
    assert "'GOVSI_TEST_NONE'" in caplog.text


# --- Apprise, for real, to a local server -------------------------------------------


class Hook:
    """A local HTTP server that records each POST body and answers ``status``."""

    def __init__(self) -> None:
        self.received: list[tuple[str, bytes]] = []
        self.status = 200
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                hook.received.append((self.path, self.rfile.read(length)))
                if hook.status == 0:  # never answers in time
                    time.sleep(5)
                self.send_response(hook.status or 200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def payloads(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body in self.received]


@pytest.fixture
def hook(monkeypatch: pytest.MonkeyPatch) -> Iterator[Hook]:
    # The local server is reached directly, never through a proxy of the machine's.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "*")
    server = Hook()
    yield server
    server.server.shutdown()
    server.server.server_close()


SECRET = "s3cr3t-pass"
TOKEN = "t0ken-in-the-path"


def test_apprise_sends_the_message_to_a_local_server(hook: Hook) -> None:
    targets = Targets.from_environment("X", {"X": f"json://127.0.0.1:{hook.port}/{TOKEN}"})
    assert targets is not None and len(targets) == 1
    msg = build_message("uredbe", [entry(1, HOSTILE)], 1)
    assert targets.send(msg, 10) == Sent(True)
    [(path, _)] = hook.received
    assert path == f"/{TOKEN}"
    [payload] = hook.payloads()
    assert (payload["title"], payload["message"]) == (msg.title, msg.body)
    assert "Uredba\\x1b]52" in payload["message"] and "\x1b" not in payload["message"]


def test_a_crawl_end_sends_through_apprise_and_never_logs_the_urls(
    engine: Engine, hook: Hook, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    crawl = Crawl(engine)
    urls = (f"json://user:{SECRET}@127.0.0.1:{hook.port}/{TOKEN} "
            f"json://127.0.0.1:{hook.port}/second-{TOKEN}")  # fmt: skip
    monkeypatch.setenv("GOVSI_TEST_URLS", urls)
    caplog.set_level(logging.DEBUG)
    crawler = crawler_with({
        "CHANGES_NOTIFY": '{"uredbe": "q=uredba"}', "CHANGES_NOTIFY_URLS_ENV": "GOVSI_TEST_URLS",
        "CRAWLDB_URL": engine.url.render_as_string(hide_password=False),
        "CHANGES_NOTIFY_LINK_BASE": "https://govsi.example", "CHANGES_NOTIFY_TIMEOUT": "1",
    })  # fmt: skip
    ext = ChangesNotify.from_crawler(crawler)
    start = T + timedelta(days=1)
    crawl.change("Uredba o občinah", start + timedelta(minutes=1))
    crawl.change("Razpis", start + timedelta(minutes=2), "razpis")
    hook.status = 500
    [failed] = run(ext, start, start + timedelta(hours=1))
    assert (failed.found, failed.sent, failed.failed) == (1, False, ("JSON: failure",) * 2)
    ext._record([failed])
    assert "changes notification 'uredbe': 1 changes not sent (JSON: failure; JSON: failure)" \
        in caplog.text  # fmt: skip
    hook.status = 0  # a service that does not answer within CHANGES_NOTIFY_TIMEOUT
    [late] = ext.notify_all(start + timedelta(hours=2))
    assert late.sent is False and late.found == 1
    hook.status = 200
    hook.received.clear()
    [sent] = ext.notify_all(start + timedelta(hours=3))
    ext._record([sent])
    assert sent == Outcome("uredbe", 1, sent=True)
    assert sorted(p for p, _ in hook.received) == [f"/second-{TOKEN}", f"/{TOKEN}"]
    payload = hook.payloads()[0]
    assert payload["title"] == "govsi: 1 change for 'uredbe'"
    assert "Uredba o občinah" in payload["message"] and "Razpis" not in payload["message"]
    assert "All of them: https://govsi.example/changes?q=uredba&since=" in payload["message"]
    assert "Feed: https://govsi.example/changes.atom?q=uredba" in payload["message"]
    assert crawler.stats.get_value("govsi/notify/sent") == 1
    assert crawler.stats.get_value("govsi/notify/failed") == 1
    # Not in the log, not in the extension's config or repr.
    for secret in (SECRET, TOKEN):
        assert secret not in caplog.text
        assert secret not in repr(ext.config) and secret not in repr(ext.targets)


# --- A real crawl ------------------------------------------------------------------


def _page(title: str, text: str, links: list[str]) -> Resource:
    anchors = " ".join(f'<a href="{href}">Stran {n}</a>' for n, href in enumerate(links))
    return html(f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1>"
                f"<p>{text}</p>{anchors}</main></body></html>")  # fmt: skip


NOTIFY_WEB = {
    "/": _page("Vlada", "Naslovnica vlade.", ["/uredba-1", "/uredba-2", "/razpis"]),
    "/uredba-1": _page("Uredba o občinah", "Vlada je sprejela uredbo o občinah.", ["/"]),
    "/uredba-2": _page("Uredba o cestah", "Nova uredba o cestah velja od jutri.", ["/"]),
    "/razpis": _page("Razpis", "Razpis za sofinanciranje projektov.", ["/"]),
}


@pytest.mark.e2e
def test_a_crawl_sends_its_new_pages_for_a_saved_filter_once(hook: Hook, tmp_path: Path) -> None:
    web = SimWeb([Host("vlada.gov.si", 0, NOTIFY_WEB)]).start()
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    env = {"GOVSI_NOTIFY_URLS": f"json://127.0.0.1:{hook.port}/{TOKEN}"}
    settings = {"CHANGES_NOTIFY": '{"uredbe": "q=uredba"}',
                "CHANGES_NOTIFY_LINK_BASE": "http://127.0.0.1:8080"}  # fmt: skip
    try:
        first = start_crawl(web, db_url, tmp_path / "one", ["http://vlada.gov.si/"], env=env,
                            **settings).wait(240)  # fmt: skip
        second = start_crawl(web, db_url, tmp_path / "two", ["http://vlada.gov.si/"], env=env,
                             **settings).wait(240)  # fmt: skip
    finally:
        web.stop()
    assert first.returncode == 0, first.log[-3000:]
    assert second.returncode == 0, second.log[-3000:]
    # The crawl's last writes are in: both new decrees, not the tender, in one message.
    [payload] = hook.payloads()
    assert payload["title"] == "govsi: 2 changes for 'uredbe'"
    body = payload["message"]
    assert "NEW · " in body and "Uredba o občinah" in body and "Uredba o cestah" in body
    assert "http://vlada.gov.si/uredba-1" in body and "Razpis" not in body
    assert "\n+ Uredba o občinah Vlada je sprejela uredbo" in body  # what the new page added
    assert "Feed: http://127.0.0.1:8080/changes.atom?q=uredba" in body
    assert "changes notification 'uredbe': 2 changes sent" in first.log
    # Its counts reach STATS_FILE, written once more as the process stops.
    assert first.stats.get("govsi/notify/sent") == 1
    assert first.stats.get("govsi/notify/changes_sent") == 2
    # The next crawl found nothing new for it: nothing sent again.
    assert "changes notification 'uredbe': no new changes" in second.log
    assert TOKEN not in first.log + second.log
