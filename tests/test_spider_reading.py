"""Reading a page (govsi.page, HtmlPages.read): the worker's reading of a
large page is the reactor's reading of a small one, a page's markup is parsed up to
MAX_PARSE_TAGS, and a page the worker cannot read is stored without its links, saying why."""

from __future__ import annotations

import asyncio
import pickle
from types import SimpleNamespace
from typing import Any

import pytest
from twisted.internet import defer

from govsi.copies.check import Copies
from govsi.copies.index import DuplicateIndex
from govsi.frontier.admission import Admission
from govsi.frontier.traps import TrapGuard
from govsi.items import FetchedPage
from govsi.page.links import canonical_links
from govsi.page.reading import PlanInputs, read_html, read_tree
from govsi.render.decide import RenderPlanner
from govsi.responses.pages import HtmlPages, ReadLimits
from govsi.responses.rendering import Rendering
from govsi.store.config import DuplicateConfig
from govsi.web.extract import ExtractedLinks, cut_markup, parse_html
from govsi.web.scope import Scope
from govsi.workers.pool import WorkerFailed
from tests.support.govpages import NEWS_1, semantic
from tests.support.stats import DictStats

URL = "https://a.gov.si/x"
PLAN = PlanInputs(("gov.si",), needs=True)
TEXT = "Vlada je na današnji seji sprejela sklep o spremembah uredbe. " * 12

PAGES = {
    "links and images": f"<html><body><p>{TEXT}</p><a href='/a'>a</a><img src='/i.png'>"
    "<a href='https://b.gov.si/'>b</a></body></html>",
    "an app root": "<html><body><div id='app'></div><script src='/app.js'></script></body>",
    "a noscript asking": "<body><noscript>Please enable JavaScript</noscript><script>x()</script>",
    "scripts, no text": "<html><body><script>go()</script></body></html>",
    "a base and onclick": "<html><head><base href='/d/'></head><body>"
    "<button onclick=\"location.href='o'\">o</button></body></html>",
    "nofollow": "<html><head><meta name='robots' content='nofollow'></head>"
    "<body><a href='/n'>n</a></body></html>",
    "empty": "",
}


@pytest.mark.parametrize("html", PAGES.values(), ids=PAGES.keys())
def test_the_workers_reading_is_the_reactors(html: str) -> None:
    index = DuplicateIndex(None, threshold=0.75, num_perm=128, shingle_size=5)  # type: ignore[arg-type]
    root = parse_html(html)
    here = read_tree(root, html, URL, max_links=100, plan=PLAN)
    asked_here = index.prepare(URL, html, root)
    there = pickle.loads(pickle.dumps(read_html(URL, html, URL, max_links=100, max_tags=1000,
                                                plan=PLAN, measures=index.measures())))  # fmt: skip
    assert there.found == here.found
    assert (there.signature, there.needs, there.yielded) == (
        here.signature,
        here.needs,
        here.yielded,
    )
    assert there.question is not None and there.cut_tags == 0
    assert (there.question.key, there.question.keys) == (asked_here.key, asked_here.keys)


def test_what_the_plan_reads_follows_the_mode() -> None:
    html = PAGES["an app root"]
    assert read_tree(parse_html(html), html, URL, max_links=9).signature is None
    never = read_tree(
        parse_html(html), html, URL, max_links=9, plan=PlanInputs(("gov.si",), needs=False)
    )
    assert never.signature is not None and never.needs is None
    assert read_tree(parse_html(html), html, URL, max_links=9, plan=PLAN).needs == "app root"
    # A page with no script gives its yield only when asked (a rendered version's).
    plain = PAGES["links and images"]
    assert read_tree(parse_html(plain), plain, URL, max_links=9, plan=PLAN).yielded is None
    asked = read_tree(parse_html(plain), plain, URL, max_links=9, yielded=True).yielded
    assert asked is not None and asked.links == {"https://a.gov.si/a", "https://b.gov.si/"}


@pytest.mark.parametrize(
    ("html", "max_tags", "kept", "cut"),
    [
        ("<a><b>", 0, "<a><b>", 0),
        ("<a><b>", 2, "<a><b>", 0),
        ("<a><b>", 5, "<a><b>", 0),
        ("<a>x<b>y", 1, "<a>x", 1),
        ("<a><b><c>", 2, "<a><b>", 1),
        ("no tags", 1, "no tags", 0),
        ("<" * 10, 3, "<<<", 7),
    ],
)
def test_markup_is_cut_at_its_max_tags_th_tag(
    html: str, max_tags: int, kept: str, cut: int
) -> None:
    assert cut_markup(html, max_tags) == (kept, cut)


def test_a_page_over_max_tags_is_read_up_to_it() -> None:
    html = "<html><body>" + "".join(f"<a href='/p{i}'>p</a>" for i in range(100)) + "</body>"
    # <html>, <body>, two tags per link, </body>: the first 20 links are within 42 tags.
    reading = read_html(URL, html, URL, max_links=1000, max_tags=42)
    assert reading.found.links == [f"https://a.gov.si/p{i}" for i in range(20)]
    assert reading.cut_tags == 2 + 2 * 100 + 1 - 42


class Worker:
    """The worker process, run in this one; or failing every job."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.jobs = 0

    def run(self, fn: Any, /, *args: Any, **kwargs: Any) -> defer.Deferred[Any]:
        self.jobs += 1
        if self.error is not None:
            return defer.fail(self.error)
        return defer.succeed(fn(*args, **kwargs))


def spider(
    worker: Worker, max_tags: int = 1000, min_chars: int = 100, text_chars: int = 0,
    duplicates: bool = True,
) -> SimpleNamespace:  # fmt: skip
    stats = DictStats()
    copies = Copies(DuplicateConfig(duplicates, 0.75, 128, 5), stats.inc_value)
    copies.open(None)  # type: ignore[arg-type]
    pages = HtmlPages(
        ReadLimits(1000, max_tags, worker_min_chars=min_chars, text_chars=text_chars),
        "govsi-crawler",
        admission=Admission(Scope(("gov.si",)), TrapGuard(), stats.inc_value, lambda url: True),
        rendering=Rendering(RenderPlanner(), ("gov.si",), stats.inc_value),  # renders nothing
        copies=copies,
        worker=worker,  # type: ignore[arg-type]
        count=stats.inc_value,
        follow_now=lambda record, urls: None,
    )
    # The spider's HTML part, and its stats where the spider has them.
    return SimpleNamespace(pages=pages, crawler=SimpleNamespace(stats=stats))


def read(s: SimpleNamespace, html: str) -> tuple[FetchedPage, Any, Any]:
    record = FetchedPage(url=URL, depth=0, page_type="HTML", accessed_time=None)
    reading, root = asyncio.run(s.pages.read(record, html, URL, plan=True, measure=True))
    return record, reading, root


def test_a_large_page_is_read_in_the_worker_with_its_question() -> None:
    html = PAGES["links and images"]
    worker = Worker()
    record, reading, root = read(spider(worker), html)
    assert worker.jobs == 1 and root is None and record.fetch_error is None
    assert reading.found.links == ["https://a.gov.si/a", "https://b.gov.si/"]
    assert reading.question is not None and reading.question.sig is not None
    # A small one on the reactor, its tree kept for the duplicate check.
    s = spider(worker, min_chars=len(html) + 1)
    _, small, root = read(s, html)
    assert worker.jobs == 1 and root is not None and small.question is None
    # The worker made its links canonical; the spider admits the same ones either way.
    assert reading.found.canonical and not small.found.canonical
    admission = s.pages.admission
    for found in (small.found, reading.found):
        assert asyncio.run(admission.admitted_links(found)) == reading.found.links
        assert asyncio.run(admission.admitted_images(found)) == reading.found.images


def test_a_page_cut_at_max_tags_says_so() -> None:
    s = spider(Worker(), max_tags=4)
    record, reading, _ = read(s, PAGES["links and images"])
    assert reading.cut_tags > 0 and s.crawler.stats.get_value("govsi/pages/parse_cut") == 1
    assert record.fetch_error == "only the first 4 tags read (MAX_PARSE_TAGS)"


def test_a_page_the_worker_fails_on_is_kept_without_links_and_says_why() -> None:
    s = spider(Worker(MemoryError()))
    record, reading, root = read(s, PAGES["links and images"])
    assert reading.found.links == [] and reading.question is None and root is None
    assert record.fetch_error == "reading failed: MemoryError()"
    assert s.crawler.stats.get_value("govsi/pages/read_failed") == 1
    # Its duplicate check is skipped, not run again on the reactor.
    verdict = asyncio.run(s.pages.verdict(URL, PAGES["links and images"], None, None))
    assert verdict is None


def test_the_worker_gives_the_main_texts_key_without_the_duplicate_check() -> None:
    # A revisit tells a change of a large page by this key, duplicate check or not.
    html = semantic(NEWS_1)
    index = DuplicateIndex(None, threshold=0.75, num_perm=128, shingle_size=5)  # type: ignore[arg-type]
    keyed = read_html(URL, html, URL, max_links=9, max_tags=1000, keyed=True)
    asked = read_html(URL, html, URL, max_links=9, max_tags=1000, measures=index.measures())
    assert keyed.question is None and keyed.content_key is not None
    assert keyed.content_key == asked.content_key == index.prepare(URL, html).key
    # A new footer date is not a new key.
    assert read_html(URL, semantic(NEWS_1, "1. 1. 2027"), URL, max_links=9, max_tags=1000,
                     keyed=True).content_key == keyed.content_key  # fmt: skip
    assert read_html(URL, html, URL, max_links=9, max_tags=1000).content_key is None


@pytest.mark.parametrize(
    ("links", "images", "kept", "kept_images", "too_long"),
    [
        (["https://A.gov.si/x?b=2&a=1#f", "https://a.gov.si/x?a=1&b=2"], [],
         ["https://a.gov.si/x?a=1&b=2"], [], 0),
        (["https://example.com/", "mailto:x@a.gov.si", "https://b.gov.si/"], [],
         ["https://b.gov.si/"], [], 0),
        (["https://a.gov.si/" + "y" * 60, "https://a.gov.si/k"], [],
         ["https://a.gov.si/k"], [], 1),
        ([], ["https://cdn.example.com/L.png", "https://a.gov.si/%7elogo.png", "http://[x"],
         [], ["https://cdn.example.com/L.png", "https://a.gov.si/~logo.png"], 0),
    ],
)  # fmt: skip
def test_canonical_links_keep_what_the_spider_would_admit(
    links: list[str], images: list[str], kept: list[str], kept_images: list[str], too_long: int
) -> None:
    found = ExtractedLinks(links=list(links), images=list(images))
    canonical_links(found, Scope(("gov.si",), max_url_length=50))
    assert (found.links, found.images, found.too_long) == (kept, kept_images, too_long)
    assert found.canonical


def with_head(html: str, head: str, lang: str = "sl") -> str:
    return html.replace("<html>", f"<html lang='{lang}'><head>{head}</head>", 1)


@pytest.mark.parametrize(
    ("html", "title", "language", "words", "absent"),
    [
        # The main text as it reads (case, punctuation), the template left out.
        (with_head(semantic(NEWS_1), "<title>Vlada  sprejela\n uredbo</title>"),
         "Vlada sprejela uredbo", "sl", "Vlada je na današnji seji sprejela uredbo", "Piškotki"),
        # English by its words, whatever the page declares.
        (with_head(semantic("The government adopted the decree on public procurement for "
                            "the municipalities, and it will apply from next week."), ""),
         None, "en", "The government adopted", "Republika"),
        # A page of the template alone still has its words.
        ("<html><body><nav><a href='/a'>Domov</a> <a href='/b'>Kontakt</a></nav></body></html>",
         None, None, "Domov Kontakt", None),
    ],
)  # fmt: skip
def test_the_worker_reads_the_pages_text(
    html: str, title: str | None, language: str | None, words: str, absent: str | None
) -> None:
    got = read_html(URL, html, URL, max_links=9, max_tags=1000, text_chars=10_000).text
    assert got is not None and (got.kind, got.status, got.title) == ("HTML", "ok", title)
    assert got.language == language and words in got.text and not got.truncated
    assert absent is None or absent not in got.text
    assert read_html(URL, html, URL, max_links=9, max_tags=1000).text is None


def test_a_pages_text_is_bounded_and_says_it_was_cut() -> None:
    html = semantic(NEWS_1)
    got = read_html(URL, html, URL, max_links=9, max_tags=1000, text_chars=20).text
    assert got is not None and len(got.text) == 20 and got.truncated
    cut = read_html(URL, html, URL, max_links=9, max_tags=3, text_chars=10_000).text
    assert cut is not None and cut.truncated


def test_the_same_text_read_here_or_in_the_worker_and_a_failure_recorded() -> None:
    html = with_head(semantic(NEWS_1), "<title>Novica</title>")

    def finished(s: SimpleNamespace) -> FetchedPage:
        record = FetchedPage(URL, 0, "HTML", None, 200)
        reading, root = asyncio.run(s.pages.read(record, html, URL, plan=False, measure=True))
        return asyncio.run(s.pages._finish(record, html, root, reading))

    # No duplicate check: its lookups need crawldb.
    limits: dict[str, Any] = {"text_chars": 10_000, "duplicates": False}
    here = finished(spider(Worker(), min_chars=len(html) + 1, **limits))
    there = finished(spider(Worker(), **limits))
    assert here.text == there.text and there.text is not None and there.text.title == "Novica"
    failed = finished(spider(Worker(MemoryError()), **limits))
    assert failed.text is not None and failed.text.status == "failed"
    assert failed.text.reason == "reading failed: MemoryError()"
    # Past the worker's memory bound: the page's text says so, in its own status.
    over = WorkerFailed("over memory bound (WORKER_MEMORY_LIMIT 384 MB): the worker process "
                        "died (SIGABRT, 300 MB at its peak)", "memory")  # fmt: skip
    failed = finished(spider(Worker(over), **limits))
    assert failed.text is not None and failed.text.status == "memory"
    assert failed.text.reason == f"reading failed: {over}"
    assert failed.fetch_error == f"reading failed: {over}"
    assert finished(spider(Worker(), duplicates=False)).text is None  # TEXT_EXTRACTION off
