"""The ``govsi`` spider: turns responses into crawldb records and new requests.

The decisions it relies on (canonical form, scope, link extraction, what a response is)
live in ``govsi.web`` (``urls``, ``extract``, ``encoding``, ``contenttypes``); this module
only wires them to Scrapy.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from lxml import etree
from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import CannotResolveHostError, DownloadCancelledError, IgnoreRequest
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.error import DNSLookupError
from twisted.internet.task import deferLater
from twisted.internet.threads import deferToThreadPool
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from govsi.dedup.index import DuplicateIndex, Question, Verdict
from govsi.frontier.seen import KnownUrls
from govsi.frontier.traps import TrapGuard
from govsi.items import DiscoveredPage, FetchedImage, FetchedPage
from govsi.net.guard import AddressGuard, AddressRefused
from govsi.render.decide import RenderPlanner
from govsi.render.engine import configure as configure_rendering
from govsi.render.renderer import Renderer
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND, META_URL
from govsi.spiders import render
from govsi.spiders.reading import Reading, read_html, read_tree
from govsi.spiders.sitemapping import SitemapMixin
from govsi.spiders.workers import WorkerProcess
from govsi.store.database import HidePasswords
from govsi.store.extension import CrawlStore
from govsi.store.schema import utcnow
from govsi.store.writer import as_duplicate
from govsi.web.contenttypes import DOCUMENT_TYPES, classify, declared_length
from govsi.web.encoding import decode_html
from govsi.web.extract import ExtractedLinks, header_says_nofollow, parse_html
from govsi.web.urls import canonicalize, host_of, in_scope, resolve, url_too_long

logger = logging.getLogger(__name__)

# Links (or images) of one page admitted per reactor turn: about 30 ms of work.
ADMIT_CHUNK = 1000


async def _reactor_turn() -> None:
    """Let the reactor run everything else that is ready, then go on."""
    from twisted.internet import reactor  # here: importing it installs one

    await maybe_deferred_to_future(deferLater(reactor, 0, lambda: None))


def header(response: Response, name: str) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1").strip() if value else None


def forbidden_by_robots(failure: Failure) -> bool:
    """Whether a request was refused before it was sent, by robots.txt.

    Scrapy raises a plain IgnoreRequest for that, and also for responses it gave up on
    after they arrived (a decompression bomb), which are fetch errors, not refusals.
    """
    return bool(failure.check(IgnoreRequest)) and "robots.txt" in str(failure.value)


class GovsiSpider(SitemapMixin, render.RenderingMixin, Spider):
    name = "govsi"
    # Set by from_crawler from settings (the mixins declare what they read themselves).
    max_url_length: int
    worker_min_chars: int
    max_tags: int
    depth_limit: int
    robots_token: str
    traps: TrapGuard
    seed_urls: list[str]

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        # Delays are the frontier's (govsi.frontier.scheduler), per host and per address, counted
        # from when a request reached the server; Scrapy's per-slot delay would add to them.
        settings.set("DOWNLOAD_DELAY", 0, priority="spider")
        # Scrapy logs the settings a run overrides next, CRAWLDB_URL among them.
        for name in ("scrapy.crawler", "scrapy.addons"):
            log = logging.getLogger(name)
            if not any(isinstance(f, HidePasswords) for f in log.filters):
                log.addFilter(HidePasswords())
        configure_rendering(settings)

    def __init__(self, *args: Any, seeds: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seed_arg = seeds
        self.duplicates: DuplicateIndex | None = None
        # One thread: the index keeps one connection, and lookups answer in order.
        self._lookups: ThreadPool | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> GovsiSpider:
        spider: GovsiSpider = super().from_crawler(crawler, *args, **kwargs)
        s = crawler.settings
        spider.suffixes = s.getlist("ALLOWED_DOMAIN_SUFFIXES")
        spider.max_url_length = s.getint("MAX_URL_LENGTH")
        spider.max_links = s.getint("MAX_LINKS_PER_PAGE")
        spider.worker_min_chars = s.getint("WORKER_MIN_PAGE_CHARS")
        spider.max_tags = s.getint("MAX_PARSE_TAGS")
        spider.depth_limit = s.getint("DEPTH_LIMIT")
        spider.max_size = s.getint("DOWNLOAD_MAXSIZE")
        spider.robots_token = s.get("ROBOTSTXT_USER_AGENT").lower()
        spider.sitemap_max_urls = s.getint("SITEMAP_MAX_URLS_PER_HOST")
        spider.sitemap_max_files = s.getint("SITEMAP_MAX_FILES_PER_HOST")
        spider._sitemap_urls = {}
        spider._sitemap_files = {}
        spider.sitemap_store_max = s.getint("SITEMAP_STORE_MAX_BYTES")
        spider._sitemap_stored = {}
        spider.worker = WorkerProcess()
        spider.traps = TrapGuard(
            max_repeats=s.getint("TRAP_MAX_REPEATED_SEGMENTS"),
            max_query_variants=s.getint("TRAP_MAX_QUERY_VARIANTS"),
            on_refusal=lambda reason: crawler.stats.inc_value(f"govsi/traps/{reason}"),
            max_query_chain=s.getint("TRAP_MAX_QUERY_CHAIN"),
        )
        spider.renderer = None
        spider.decisions = {}
        spider.planner = RenderPlanner(
            samples=s.getint("RENDER_SAMPLE_PAGES"),
            resample_every=s.getint("RENDER_RESAMPLE_EVERY"),
        )
        spider.seed_urls = (
            [u.strip() for u in spider._seed_arg.split(",") if u.strip()]
            if spider._seed_arg
            else s.getlist("SEED_URLS")
        )
        return spider

    # -- URL decisions -------------------------------------------------------------------
    def admit(self, url: str | None) -> str | None:
        """The canonical form of an absolute URL we may store and fetch, else None."""
        if not url:
            return None
        try:
            canonical = canonicalize(url)
        except ValueError:
            return None
        if not in_scope(canonical, self.suffixes):
            return None
        if url_too_long(canonical, self.max_url_length):
            self.crawler.stats.inc_value("govsi/url_too_long")
            return None
        if self.traps.check(canonical) is not None:
            return None
        return canonical

    def page_request(self, url: str, depth: int) -> Request:
        return Request(
            url,
            callback=self.parse_page,
            errback=self.page_failed,
            priority=-depth,
            meta={"depth": depth, META_KIND: KIND_PAGE, META_URL: url},
        )

    def request_for(self, kind: str, url: str, depth: int) -> Request:
        """The request for a queued page or image (the scheduler keeps only url and depth)."""
        return (
            self.image_request(url, depth) if kind == KIND_IMAGE else self.page_request(url, depth)
        )

    # -- requests --------------------------------------------------------------------------
    def may_fetch_image(self, url: str) -> bool:
        # Images outside scope get a row (the page shows them) but are never requested.
        return in_scope(url, self.suffixes) and not url_too_long(url, self.max_url_length)

    def image_request(self, url: str, depth: int) -> Request:
        # Queued with the pages of the same depth, so breadth-first order holds for them too.
        return Request(
            url,
            callback=self.parse_image,
            errback=self.image_failed,
            priority=-depth,
            meta={META_KIND: KIND_IMAGE, META_URL: url},
        )

    def is_new(self, url: str) -> bool:
        """Whether the page ``url`` is not known to the crawl yet."""
        return f"{KIND_PAGE} {url}" not in self.known

    def follow(self, urls: list[str], depth: int) -> Iterator[Request]:
        if self.depth_limit and depth > self.depth_limit:
            self.crawler.stats.inc_value("govsi/depth_limit_reached", len(urls))
            return
        for url in urls:
            # Only links new to the crawl become requests; the rest are link rows only.
            if self.is_new(url):
                yield self.page_request(url, depth)

    # -- start ----------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Any]:
        # Extensions are built after the spider, so they are looked up here.
        store = self.crawler.get_extension(CrawlStore)
        known = self.crawler.get_extension(KnownUrls)
        if store is None or known is None:
            raise RuntimeError("govsi needs the CrawlStore and KnownUrls extensions")
        known.load(store)
        self.known = known
        self.store = store
        self.renderer = self.crawler.get_extension(Renderer)
        s = self.crawler.settings
        self.duplicates = (
            DuplicateIndex(
                store.engine,
                threshold=s.getfloat("NEAR_DUPLICATE_THRESHOLD"),
                num_perm=s.getint("MINHASH_PERMUTATIONS"),
                shingle_size=s.getint("SHINGLE_SIZE"),
            )
            if s.getbool("DUPLICATE_DETECTION")
            else None
        )
        if self.duplicates is not None:
            self._lookups = ThreadPool(1, 1, name="govsi-duplicate-lookups")
            self._lookups.start()
        for seed in self.seed_urls:
            url = self.admit(seed)
            if url is None:
                logger.warning("seed %r is not an in-scope http(s) URL; skipped", seed)
                continue
            yield DiscoveredPage(url=url, depth=0)
            yield self.page_request(url, 0)
        # A continuing crawl: the scheduler reads the FRONTIER rows from crawldb; images
        # whose download was still queued when an earlier run stopped are queued here.
        for url in store.unfetched_image_urls():
            if self.may_fetch_image(url):
                yield self.image_request(url, depth=0)

    def closed(self, reason: str) -> None:
        self.worker.close()
        if self._lookups is not None:
            self._lookups.stop()  # waits for a lookup in progress
        if self.duplicates is not None:
            self.duplicates.close()

    # -- pages ------------------------------------------------------------------------------
    async def parse_page(self, response: Response) -> list[Any]:
        meta = response.meta
        url: str = meta[META_URL]
        depth: int = meta["depth"]
        ctype = header(response, "Content-Type")
        record = FetchedPage(
            url=url,
            depth=depth,
            page_type="HTML",
            accessed_time=utcnow(),
            http_status_code=response.status,
            content_type=ctype,
        )
        location = header(response, "Location")
        if 300 <= response.status < 400 and location:
            target = self.admit(resolve(response.url, location))
            if target and target != url:
                record.links = self.traps.chain(url, [target], self.is_new)
            self.crawler.stats.inc_value("govsi/pages/redirect")
            return [record, *self.follow(record.links, record.link_depth)]

        kind = classify(ctype, url, response.body[:1024])
        if kind == "HTML":
            return await self._html(response, record)
        if kind in DOCUMENT_TYPES:
            record.page_type = "BINARY"
            record.data_type = kind
            length = header(response, "Content-Length")
            declared = declared_length(length)
            record.size = declared if declared is not None else len(response.body)
            if "download_stopped" not in response.flags:
                record.data = response.body
            self.crawler.stats.inc_value(f"govsi/pages/binary/{kind}")
            return [record]
        record.page_type = "OTHER"
        self.crawler.stats.inc_value("govsi/pages/other")
        return [record]

    async def _html(self, response: Response, record: FetchedPage) -> list[Any]:
        text, _encoding = decode_html(response.body, record.content_type)
        success = 200 <= response.status < 300
        ok = success and "download_stopped" not in response.flags
        # One parse serves all: links and the render plan are read from the tree, then the
        # duplicate check cuts the template out of it.
        reading, root = await self._read(record, text, response.url, plan=ok, measure=success)
        found = reading.found
        if found.dropped:
            self.crawler.stats.inc_value("govsi/links/over_limit", found.dropped)
            logger.info("%s: %d links beyond MAX_LINKS_PER_PAGE (%d) not taken",
                        record.url, found.dropped, self.max_links)  # fmt: skip
        tag = [v.decode("latin-1") for v in response.headers.getlist("X-Robots-Tag")]
        # Kept with the links: a rendered version's response may not carry the header.
        found.nofollow = found.nofollow or header_says_nofollow(tag, self.robots_token)
        if ok:
            plan = self._render_plan(reading)
            if plan != "plain":
                # The served HTML's links go out now, not after the render, nor after the
                # samples a page waits for: its rendering never holds up the pages below.
                await self._follow_now(record, found)
                plan = await self._decide(record.url, plan, reading.signature)
                if plan != "plain":
                    rendered = await self._rendered(response, record, reading, plan)
                    if rendered is not None:
                        text, reading, root = rendered
        return await self._finish_html(record, text, root, reading)

    async def _read(
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
        inputs = self._plan_inputs() if plan else None
        if not (len(text) >= self.worker_min_chars > 0):
            root = parse_html(text)
            here = read_tree(root, text, page_url, max_links=self.max_links, plan=inputs,
                             yielded=yielded)  # fmt: skip
            return here, root
        # Seconds of CPU and a gigabyte for a page of megabytes: not on the reactor.
        self.crawler.stats.inc_value("govsi/pages/read_in_worker")
        measures = self.duplicates.measures() if measure and self.duplicates else None
        try:
            reading: Reading = await maybe_deferred_to_future(
                self.worker.run(read_html, record.url, text, page_url, max_links=self.max_links,
                                max_tags=self.max_tags, plan=inputs, yielded=yielded,
                                measures=measures)
            )  # fmt: skip
        except Exception as e:
            logger.warning("reading %s failed in the worker (%r); stored without its links",
                           record.url, e)  # fmt: skip
            self.crawler.stats.inc_value("govsi/pages/read_failed")
            record.fetch_error = f"reading failed: {e!r}"[:1000]
            return Reading(ExtractedLinks(base_url=page_url)), None
        if reading.cut_tags:
            logger.info("%s: %d tags beyond MAX_PARSE_TAGS (%d) not read", record.url,
                        reading.cut_tags, self.max_tags)  # fmt: skip
            self.crawler.stats.inc_value("govsi/pages/parse_cut")
            record.fetch_error = f"only the first {self.max_tags} tags read (MAX_PARSE_TAGS)"
        return reading, None

    async def _follow_now(self, record: FetchedPage, found: ExtractedLinks) -> None:
        """FRONTIER rows and requests for the links of a page's served HTML, before the
        page itself is done (the record stored later links them; a URL already known is
        not asked for again). Out of band, so that the callback's output stays a list,
        which Scrapy handles far more cheaply than an asynchronous generator."""
        if found.nofollow:
            return
        urls = self.traps.chain(record.url, await self._admitted(found.links), self.is_new)
        for request in self.follow(urls, record.link_depth):
            self.store.add(DiscoveredPage(url=request.meta[META_URL], depth=record.link_depth))
            self.crawler.engine.crawl(request)

    async def _finish_html(
        self, record: FetchedPage, text: str, root: etree._Element | None, reading: Reading
    ) -> list[Any]:
        """Store an HTML page (``reading.found.nofollow`` includes the X-Robots-Tag header)
        and follow it, unless it is a copy of a stored page."""
        found = reading.found
        # Error pages are a record of their own, not content: only 2xx pages are compared.
        if self.duplicates is not None and 200 <= (record.http_status_code or 0) < 300:
            verdict = await self._duplicate_verdict(record.url, text, root, reading.question)
            record.content_hash = verdict.content_hash if verdict else None
            if verdict is not None and verdict.original is not None:
                # The original's links were followed already; this copy's are not.
                self.crawler.stats.inc_value("govsi/pages/duplicate")
                return [as_duplicate(record, verdict.original)]
            if verdict is not None:
                record.minhash, record.band_keys = verdict.minhash, verdict.band_keys
        # Not followed, so not stored either: a FRONTIER row would be crawled later.
        links = [] if found.nofollow else await self._admitted(found.links)
        images = await self._admitted(found.images, self._image)
        return list(self._html_output(record, text, found.nofollow, links, images))

    async def _admitted(
        self, urls: list[str], admit: Callable[[str], str | None] | None = None
    ) -> list[str]:
        """``admit`` (default: ``self.admit``) of each URL, the Nones left out, each once,
        in order; ADMIT_CHUNK at a time with a reactor turn between, so that a page of
        MAX_LINKS_PER_PAGE links (tens of microseconds each) never stalls the crawl."""
        admit = admit or self.admit
        admitted: dict[str, None] = {}
        for start in range(0, len(urls), ADMIT_CHUNK):
            if start:
                await _reactor_turn()
            for url in urls[start : start + ADMIT_CHUNK]:
                target = admit(url)
                if target is not None:
                    admitted.setdefault(target)
        return list(admitted)

    def _html_output(
        self, record: FetchedPage, text: str, nofollow: bool, links: list[str], images: list[str]
    ) -> Iterator[Any]:
        record.html_content = text
        if nofollow:
            record.nofollow = True
            self.crawler.stats.inc_value("govsi/pages/nofollow")
        record.links = self.traps.chain(record.url, links, self.is_new)
        record.images = images
        self.crawler.stats.inc_value("govsi/pages/html")
        yield record
        yield from self.follow(record.links, record.link_depth)
        for image in record.images:
            if f"{KIND_IMAGE} {image}" not in self.known and self.may_fetch_image(image):
                yield self.image_request(image, record.link_depth)

    def _image(self, src: str) -> str | None:
        """An image as a page's record keeps it: canonical, or None. An in-scope image that
        breaks a trap rule (``/logo.png?v=N`` past TRAP_MAX_QUERY_VARIANTS) is neither
        recorded nor requested, as a trap's link gets no FRONTIER row; it is counted under
        govsi/traps/<rule>. Images out of scope are recorded, never requested."""
        try:
            image = canonicalize(src)
        except ValueError:
            return None
        if self.may_fetch_image(image) and self.traps.check(image) is not None:
            return None
        return image

    async def _duplicate_verdict(
        self, url: str, text: str, root: etree._Element | None, asked: Question | None
    ) -> Verdict | None:
        """The duplicate check; when it fails, the page is kept as an original, never lost.

        ``asked``: the question the worker made, for a page read there (``_read``); without
        it such a page is not checked (the worker failed on it, which is recorded). The
        crawldb lookup runs in a thread of its own, so the reactor goes on with other
        responses while the database answers (a remote one takes milliseconds)."""
        assert self.duplicates is not None and self._lookups is not None
        if asked is None and root is None and len(text) >= self.worker_min_chars > 0:
            return None
        try:
            if asked is None:
                asked = self.duplicates.prepare(url, text, root)
            else:
                self.crawler.stats.inc_value("govsi/duplicates/in_worker")
            rows: list[Any] = []
            if self.duplicates.needs_lookup(asked):
                # Imported here: importing the reactor at module level would install the
                # default one before Scrapy installs the configured one.
                from twisted.internet import reactor

                rows = await maybe_deferred_to_future(
                    deferToThreadPool(reactor, self._lookups, self.duplicates.lookup, asked)
                )
            return self.duplicates.decide(asked, rows)
        except Exception:
            logger.exception("duplicate check of %s failed; keeping the page as it is", url)
            self.crawler.stats.inc_value("govsi/duplicates/check_failed")
            return None

    def page_failed(self, failure: Failure) -> Iterator[Any]:
        request = failure.request  # type: ignore[attr-defined]
        url: str = request.meta[META_URL]
        depth: int = request.meta["depth"]
        if forbidden_by_robots(failure):
            # Not fetched: it stays in the frontier, with the reason.
            yield FetchedPage(
                url=url,
                depth=depth,
                page_type="FRONTIER",
                accessed_time=None,
                fetch_error=str(failure.value) or "ignored",
            )
            return
        error = self.failure_reason(failure)
        logger.warning("fetching %s failed: %s", url, error)
        self.crawler.stats.inc_value("govsi/pages/error")
        yield FetchedPage(
            url=url, depth=depth, page_type="ERROR", accessed_time=utcnow(), fetch_error=error
        )

    def failure_reason(self, failure: Failure) -> str:
        """What went wrong, for page.fetch_error and the log."""
        message = failure.getErrorMessage()
        if failure.check(AddressRefused):
            return message[:1000]  # the guard's reason (govsi.middlewares)
        guard = self.crawler.get_extension(AddressGuard)
        host = host_of(failure.request.url) if hasattr(failure, "request") else ""
        refusal = failure.check(DNSLookupError, CannotResolveHostError)
        if refusal and guard is not None and guard.reason(host):
            # Connect time refused what the host's name resolved to (DNS rebinding, or an
            # address that changed after the scheduler looked).
            return str(guard.reason(host))
        if failure.check(DownloadCancelledError) and not message:
            # Scrapy cancels a body that outgrows DOWNLOAD_MAXSIZE without a message.
            message = f"response larger than DOWNLOAD_MAXSIZE ({self.max_size} bytes)"
        return f"{failure.type.__name__}: {message}"[:1000]

    # -- images ---------------------------------------------------------------------------
    def parse_image(self, response: Response) -> Iterator[Any]:
        self.crawler.stats.inc_value("govsi/images")
        ok = 200 <= response.status < 300
        yield FetchedImage(
            url=response.meta[META_URL],
            accessed_time=utcnow(),
            http_status_code=response.status,
            content_type=header(response, "Content-Type"),
            # An error page served for an image URL is not the image.
            data=response.body if ok and "download_stopped" not in response.flags else None,
        )

    def image_failed(self, failure: Failure) -> Iterator[Any]:
        if forbidden_by_robots(failure):
            return
        request = failure.request  # type: ignore[attr-defined]
        logger.warning("fetching image %s failed: %s", request.url, failure.getErrorMessage())
        yield FetchedImage(url=request.meta[META_URL], accessed_time=utcnow())
