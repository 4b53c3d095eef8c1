"""A fetched HTML page read (whole in a worker process; on the reactor below
WORKER_MIN_PAGE_CHARS), rendered when its plan says, checked for copies, and made into its
record: its text, its admitted links (a trap's left out) and images, nofollow.

One parse serves all: links and the render plan are read from the tree, then the
duplicate check cuts the template out of it. The requests the record leads to are the
spider's to make (``GovsiSpider.parse_html``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future

from govsi.copies.check import Copies
from govsi.copies.index import Verdict
from govsi.dedup.question import Question
from govsi.dedup.signature import KEY_VERSION, exact_key_of
from govsi.frontier.admission import Admission
from govsi.items import FetchedPage, PageText, outcome_stat
from govsi.page.pagetext import page_text_of
from govsi.page.reading import Reading, read_html, read_tree, ready
from govsi.render.decide import RenderPlan
from govsi.responses.documents import worker_failure
from govsi.responses.rendering import Rendering, merge
from govsi.stats import Count
from govsi.store.config import DuplicateConfig
from govsi.store.originals import as_duplicate
from govsi.text.maintext import main_text
from govsi.web.encoding import decode_html
from govsi.web.extract import ExtractedLinks, header_says_nofollow, parse_html
from govsi.workers.pool import WorkerPool

__all__ = ["HtmlPages", "ReadLimits"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReadLimits:
    """How an HTML page is read (``HtmlPages``)."""

    max_links: int  # MAX_LINKS_PER_PAGE (0 = no limit)
    max_tags: int  # MAX_PARSE_TAGS (0 = no limit)
    worker_min_chars: int  # WORKER_MIN_PAGE_CHARS: from there in the worker (0 = never)
    text_chars: int = 0  # TEXT_MAX_CHARS when TEXT_EXTRACTION, else 0: no text kept

    @classmethod
    def from_settings(cls, s: BaseSettings) -> ReadLimits:
        return cls(
            max_links=s.getint("MAX_LINKS_PER_PAGE"),
            max_tags=s.getint("MAX_PARSE_TAGS"),
            worker_min_chars=s.getint("WORKER_MIN_PAGE_CHARS"),
            text_chars=s.getint("TEXT_MAX_CHARS") if s.getbool("TEXT_EXTRACTION") else 0,
        )


class HtmlPages:
    def __init__(
        self,
        limits: ReadLimits,
        robots_token: str,
        *,
        admission: Admission,
        rendering: Rendering,
        copies: Copies,
        worker: WorkerPool,
        count: Count,
        follow_now: Callable[[FetchedPage, list[str]], None],
        feeds_found: Callable[[str, list[str]], None] = lambda page, feeds: None,
    ) -> None:
        """``robots_token``: the crawler's name in X-Robots-Tag; ``follow_now(record,
        urls)``: FRONTIER rows and requests for ``urls``, links of ``record`` sent out
        before the page itself is done; ``feeds_found(page_url, feeds)``: the feeds a
        followed page declares (canonical, admitted)."""
        self.limits = limits
        self.robots_token = robots_token
        self.admission = admission
        self.rendering = rendering
        self.copies = copies
        self.worker = worker
        self.count = count
        self.follow_now = follow_now
        self.feeds_found = feeds_found

    @classmethod
    def from_settings(
        cls,
        s: BaseSettings,
        robots_token: str,
        *,
        admission: Admission,
        rendering: Rendering,
        worker: WorkerPool,
        count: Count,
        follow_now: Callable[[FetchedPage, list[str]], None],
        feeds_found: Callable[[str, list[str]], None],
    ) -> HtmlPages:
        """The crawl's HTML part, its ``ReadLimits`` and its duplicate check (``Copies``:
        ``DuplicateConfig``) read from ``s``."""
        return cls(
            ReadLimits.from_settings(s),
            robots_token,
            admission=admission,
            rendering=rendering,
            copies=Copies(DuplicateConfig.from_settings(s), count),
            worker=worker,
            count=count,
            follow_now=follow_now,
            feeds_found=feeds_found,
        )

    def prepare(self) -> None:
        """At the crawl's start: have the worker processes ready for the first pages, when
        pages are read there (``WorkerPool.prepare``)."""
        if self.limits.worker_min_chars > 0:
            self.worker.prepare(ready)

    async def parse(self, response: Response, record: FetchedPage) -> FetchedPage:
        """The record of the HTML page ``response`` (``record`` filled in), or, when it is
        a copy of a stored page, the copy's record (``record.duplicate_of`` set)."""
        text, _encoding = decode_html(response.body, record.content_type)
        success = 200 <= response.status < 300
        ok = success and "download_stopped" not in response.flags
        reading, root = await self.read(record, text, response.url, plan=ok, measure=success)
        found = reading.found
        if found.dropped:
            self.count("govsi/links/over_limit", found.dropped)
            logger.info("%s: %d links beyond MAX_LINKS_PER_PAGE (%d) not taken",
                        record.url, found.dropped, self.limits.max_links)  # fmt: skip
        tag = [v.decode("latin-1") for v in response.headers.getlist("X-Robots-Tag")]
        # Kept with the links: a rendered version's response may not carry the header.
        found.nofollow = found.nofollow or header_says_nofollow(tag, self.robots_token)
        if ok:
            plan = self.rendering.plan(reading)
            if plan != "plain":
                # The served HTML's links go out now, not after the render, nor after the
                # samples a page waits for: its rendering never holds up the pages below.
                await self._follow_now(record, found)
                plan = await self.rendering.decide(
                    record.url, plan, reading.signature, len(response.body)
                )
                if plan != "plain":
                    rendered = await self._rendered(response, record, reading, plan)
                    if rendered is not None:
                        text, reading, root = rendered
        return await self._finish(record, text, root, reading)

    async def read(
        self,
        record: FetchedPage,
        text: str,
        page_url: str,
        *,
        plan: bool,
        measure: bool,
        yielded: bool = False,
    ) -> tuple[Reading, etree._Element | None]:
        """The page's ``Reading`` (with its render plan's inputs when ``plan`` and the
        crawl renders, its ``Yield`` when ``yielded``) and its tree. The tree is None for
        a page of WORKER_MIN_PAGE_CHARS or more: the worker reads it, and makes its
        duplicate question too when ``measure``. A page the worker could not read keeps
        no links, and says why."""
        limits = self.limits
        inputs = self.rendering.plan_inputs() if plan else None
        if not self._in_worker(text):
            root = parse_html(text)
            here = read_tree(root, text, page_url, max_links=limits.max_links, plan=inputs,
                             yielded=yielded)  # fmt: skip
            return here, root
        # Seconds of CPU and a gigabyte for a page of megabytes: not on the reactor.
        self.count("govsi/pages/read_in_worker")
        measures = self.copies.measures() if measure else None
        try:
            reading: Reading = await maybe_deferred_to_future(
                self.worker.run(read_html, record.url, text, page_url, max_links=limits.max_links,
                                max_tags=limits.max_tags, plan=inputs, yielded=yielded,
                                measures=measures, keyed=measure, scope=self.admission.scope,
                                text_chars=limits.text_chars if measure else 0)
            )  # fmt: skip
        except Exception as e:
            status, what = worker_failure(e)
            logger.warning("reading %s failed in the worker (%s); stored without its links",
                           record.url, what)  # fmt: skip
            self.count("govsi/pages/read_failed")
            record.fetch_error = f"reading failed: {what}"[:1000]
            failed = PageText("HTML", status, reason=record.fetch_error)
            return Reading(ExtractedLinks(base_url=page_url), text=failed), None
        if reading.cut_tags:
            logger.info("%s: %d tags beyond MAX_PARSE_TAGS (%d) not read", record.url,
                        reading.cut_tags, limits.max_tags)  # fmt: skip
            self.count("govsi/pages/parse_cut")
            record.fetch_error = f"only the first {limits.max_tags} tags read (MAX_PARSE_TAGS)"
        return reading, None

    def _in_worker(self, text: str) -> bool:
        return len(text) >= self.limits.worker_min_chars > 0

    async def _follow_now(self, record: FetchedPage, found: ExtractedLinks) -> None:
        """The links of a page's served HTML sent out before the page itself is done (the
        record stored later links them; a URL already known is not asked for again). Out
        of band, so that the callback's output stays a list, which Scrapy handles far more
        cheaply than an asynchronous generator."""
        if found.nofollow:
            return
        self.follow_now(
            record, self.admission.chain(record.url, await self.admission.admitted_links(found))
        )

    async def _rendered(
        self, response: Response, record: FetchedPage, plain: Reading, plan: RenderPlan
    ) -> tuple[str, Reading, etree._Element | None] | None:
        """The page's rendered text, reading (its links merged with the plain ones) and
        tree (None when read in the worker), or None to keep the plain version when
        rendering failed (recorded in the page)."""
        signature = plain.signature
        text = await self.rendering.render(response, record, plan, signature)
        if text is None:
            return None
        # The page's own URL is the base, whatever history.pushState made of the address.
        sample = plan == "sample" and signature is not None
        reading, root = await self.read(
            record, text, record.url, plan=False, measure=True, yielded=sample
        )
        if sample:
            assert signature is not None
            self.rendering.learn(record.url, signature, plain, reading)
        record.rendered = True
        reading.found = merge(plain.found, reading.found)
        return text, reading, root

    async def _finish(
        self, record: FetchedPage, text: str, root: etree._Element | None, reading: Reading
    ) -> FetchedPage:
        """The HTML page's record (``reading.found.nofollow`` includes the X-Robots-Tag
        header), or its copy's."""
        found = reading.found
        # Error pages are a record of their own, not content: only 2xx pages are compared.
        success = 200 <= (record.http_status_code or 0) < 300
        checked = self.copies.index is not None and success
        verdict = await self.verdict(record.url, text, root, reading.question) if checked else None
        if record.revisit is not None and record.revisit.page_type == "HTML":
            # The stored version this visit replaces is no original from now on, as this
            # one is decided (an error page: compared with nothing), and not sooner: a page
            # fetched before it was still checked against it (lookups answer in order).
            self.copies.retract(record.url)
        if checked:
            record.content_hash = verdict.content_hash if verdict else None
            if verdict is not None and verdict.original is not None:
                # An exact copy: the original's links were followed already; this copy's
                # are not.
                self.count(outcome_stat("duplicate"))
                return as_duplicate(record, verdict.original)
            if verdict is not None:
                record.minhash, record.band_keys = verdict.minhash, verdict.band_keys
                record.text_hash = verdict.text_hash
                if verdict.near is not None:
                    # A near copy is a page of its own, kept whole: only flagged.
                    self.count("govsi/pages/near_duplicate")
                    record.near_duplicate_of = verdict.near
                    record.similarity = verdict.similarity
        elif success:
            # No duplicate check, but a revisit still tells a change by the main text's key
            # (a page read in the worker brings it back: reading it here would stall).
            record.content_hash = reading.content_key or (
                exact_key_of(main_text(text, root), text) if root is not None else None
            )
        if record.content_hash is not None:
            record.key_version = KEY_VERSION
        # Not followed, so not stored either: a FRONTIER row would be crawled later.
        links = [] if found.nofollow else await self.admission.admitted_links(found)
        images = await self.admission.admitted_images(found)
        record.html_content = text
        if success and self.limits.text_chars:
            # A page read here (not in the worker) is parsed once more for it: its tree
            # went to the duplicate check.
            record.text = reading.text or page_text_of(text, self.limits.text_chars)
        if found.nofollow:
            record.nofollow = True
            self.count("govsi/pages/nofollow")
        record.links = self.admission.chain(record.url, links)
        record.images = images
        if found.feeds and success and not found.nofollow:
            admit = self.admission.admit_canonical if found.canonical else self.admission.admit
            self.feeds_found(record.url, [f for u in found.feeds if (f := admit(u)) is not None])
        self.count(outcome_stat("html"))
        return record

    async def verdict(
        self, url: str, text: str, root: etree._Element | None, asked: Question | None
    ) -> Verdict | None:
        """The duplicate check (``Copies.verdict``). ``asked``: the question the worker
        made, for a page read there (``read``); without it such a page is not checked
        (the worker failed on it, which is recorded)."""
        if asked is None and root is None and self._in_worker(text):
            return None
        return await self.copies.verdict(url, text, root, asked)
