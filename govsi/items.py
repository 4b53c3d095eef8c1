"""What the spider hands to the pipelines: plain dataclasses, one per kind of record."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal, get_args

from govsi.text.limits import TextStatus
from govsi.web.contenttypes import DocumentType, ResponseType

# crawldb's page types (page.page_type_code, its page_type rows). The standard four: an HTML
# page, a document (BINARY, its data_type one of ``DocumentType``), a copy of another page,
# and a URL not fetched (yet, or ever: robots.txt, a budget, a refusal, with its reason).
StandardPageType = Literal["HTML", "BINARY", "DUPLICATE", "FRONTIER"]
# govsi's additions: fetched but neither HTML nor a document (an image, a zip, a JSON file
# linked with <a href>), and a fetch that produced no response at all.
ExtraPageType = Literal["OTHER", "ERROR"]
PageType = Literal[StandardPageType, ExtraPageType]
STANDARD_PAGE_TYPES: Final[tuple[StandardPageType, ...]] = get_args(StandardPageType)
EXTRA_PAGE_TYPES: Final[tuple[ExtraPageType, ...]] = get_args(ExtraPageType)

# What became of a fetched URL: each page counted once, under ``outcome_stat``. The spider's
# other govsi/pages/ counters (nofollow, read_in_worker, parse_cut, ...) count a page again.
PageOutcome = Literal[
    "html", "duplicate", "redirect", "binary", "other", "error", "not_modified", "revisit_failed"
]
PAGE_OUTCOMES: Final[frozenset[str]] = frozenset(get_args(PageOutcome))
OUTCOME_PREFIX = "govsi/pages/"


def outcome_stat(outcome: PageOutcome, kind: str = "") -> str:
    """The stat a page's outcome is counted under; a document's names its kind
    (``govsi/pages/binary/pdf``)."""
    return f"{OUTCOME_PREFIX}{outcome}/{kind}" if kind else f"{OUTCOME_PREFIX}{outcome}"


@dataclass(frozen=True, slots=True)
class Revisit:
    """What a revisit request knows of the stored copy it checks (``META_REVISIT``): the
    validators to send back verbatim, and what a change is measured against."""

    etag: str | None = None
    last_modified: str | None = None
    # The stored copy's content key: main text's (HTML) or the bytes' hash.
    content_hash: str | None = None
    page_type: PageType | None = None
    http_status_code: int | None = None
    accessed_time: datetime | None = None
    # Its recent visits (govsi/revisit/schedule.py's encoding), the next interval's input.
    history: str | None = None


@dataclass(frozen=True, slots=True)
class PageText:
    """The text of a fetched page or document, for search and SQL (crawldb's
    ``page_text``): an HTML page's main text (its template left out) or a document's
    text, with what is known about it; ``status`` and ``reason`` say how reading ended."""

    kind: ResponseType
    status: TextStatus
    text: str = ""
    reason: str | None = None
    title: str | None = None
    language: str | None = None
    # The page's or document's own date (a document's metadata), when it says.
    date: datetime | None = None
    truncated: bool = False


@dataclass
class DiscoveredPage:
    """A canonical in-scope URL that must have a FRONTIER row (a seed)."""

    url: str
    depth: int


@dataclass(repr=False)
class FetchedPage:
    """The outcome of fetching one canonical URL, whatever it turned out to be."""

    url: str
    depth: int
    # HTML, BINARY, OTHER, ERROR, or FRONTIER for a request that was not sent (robots.txt)
    page_type: PageType
    accessed_time: datetime | None
    http_status_code: int | None = None
    content_type: str | None = None
    html_content: str | None = None
    fetch_error: str | None = None
    # Canonical in-scope URLs this page links to (href, onclick, or a redirect's target).
    links: list[str] = field(default_factory=list)
    # Canonical URLs of the <img src> the page shows, in scope or not.
    images: list[str] = field(default_factory=list)
    # For BINARY pages.
    data_type: DocumentType | None = None
    data: bytes | None = None
    size: int | None = None
    # The page said nofollow, so its links were recorded but not followed.
    nofollow: bool | None = None
    # Duplicates: the main text's key and signature (uint32 values), the signature's LSH
    # band keys, and the definition they were made by (``key_version``); for a DUPLICATE
    # (an exact copy, kept without content), the URL of the page it copies; for a near
    # copy (kept whole), the URL of the stored page it resembles most, and how much.
    content_hash: str | None = None
    minhash: bytes | None = None
    band_keys: list[int] = field(default_factory=list)
    key_version: int | None = None
    # The key of all a reader sees (title and whole text, govsi.dedup.signature.copy_key):
    # an exact copy has both keys of its original.
    text_hash: str | None = None
    duplicate_of: str | None = None
    near_duplicate_of: str | None = None
    similarity: float | None = None
    # The content and links are those of the page rendered by a browser (RENDER_JS).
    rendered: bool | None = None
    # Revisits: the validators received; the stored copy this visit checked (None on a
    # first visit); a 304 to a conditional request (the stored copy stays, only the visit
    # is recorded).
    etag: str | None = None
    last_modified: str | None = None
    revisit: Revisit | None = None
    not_modified: bool = False
    # Its text (TEXT_EXTRACTION): HTML pages fetched with success and documents.
    text: PageText | None = None

    @property
    def link_depth(self) -> int:
        """Depth of the pages this one leads to. A redirect is a hop like a link: kept at
        its source's depth, a chain ``/r/N -> /r/N+1`` would never reach DEPTH_LIMIT."""
        return self.depth + 1

    # Scrapy logs every item at DEBUG level; whole pages and documents would flood it.
    def __repr__(self) -> str:
        return (
            f"FetchedPage({self.url!r}, {self.page_type}, status={self.http_status_code}, "
            f"links={len(self.links)}, images={len(self.images)})"
        )


@dataclass(repr=False)
class FetchedImage:
    url: str
    accessed_time: datetime
    http_status_code: int | None = None
    content_type: str | None = None
    data: bytes | None = None
    # Revisits, as for FetchedPage; content_hash is the bytes' hash.
    content_hash: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    revisit: Revisit | None = None
    not_modified: bool = False

    def __repr__(self) -> str:
        size = None if self.data is None else len(self.data)
        return f"FetchedImage({self.url!r}, status={self.http_status_code}, bytes={size})"


@dataclass
class RobotsFile:
    """A robots.txt as served (None: the host has none) for site.robots_content, with the
    status it came with and when (site.robots_status, site.robots_fetched_at)."""

    host: str
    content: str | None
    status: int | None = None
    fetched_at: datetime | None = None


@dataclass
class SiteInfo:
    """What politeness learned about a host: its address and the delay used for it."""

    host: str
    ip_address: str | None
    crawl_delay: float


@dataclass(repr=False)
class SitemapFile:
    """A sitemap document as read (decompressed), appended to its site's sitemap_content."""

    host: str
    url: str
    content: str

    def __repr__(self) -> str:
        return f"SitemapFile({self.host!r}, {self.url!r}, {len(self.content)} chars)"


# What a ``feed`` row is: a feed (RSS, Atom) or a sitemap, each polled on its interval.
# What a visit found that a reader of the copy would call news (page_change.kind): a page
# fetched for the first time, its main content changed, gone (404/410), moved (a redirect).
ChangeKind = Literal["new", "changed", "gone", "moved"]
CHANGE_KINDS: Final[tuple[ChangeKind, ...]] = get_args(ChangeKind)
FeedKind = Literal["feed", "sitemap"]
# A feed row's state (crawldb's ``feed.state``): polled when due (active); parked after
# 404/410 answers in a row (gone: asked again only FEED_FORGET_AFTER later); moved by a
# permanent redirect (its ``moved_to`` polled instead); a sitemap robots.txt no longer
# lists (unlisted: not polled).
FeedStatus = Literal["active", "gone", "moved", "unlisted"]


@dataclass
class FeedState:
    """A feed or sitemap in crawldb's ``feed`` table: found (``polled_at`` None: its row
    made if missing, ``found_on`` the page or robots.txt naming it), or polled (its outcome
    and next poll written over the row; validators a 304 does not repeat are kept)."""

    url: str
    host: str
    kind: FeedKind = "feed"
    found_on: str | None = None
    polled_at: datetime | None = None
    status: int | None = None  # the poll's HTTP status; None: no response (``error``)
    error: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    entries: int = 0  # entries the poll read
    new_entries: int = 0  # ... of them not known to the crawl
    next_poll: datetime | None = None
    failures: int = 0  # a poll's: failed polls in a row, this one counted (0: a success)
    state: FeedStatus = "active"  # a poll's: the row's state after it
    moved_to: str | None = None  # state "moved": the URL polled instead
    # A page or robots.txt named it now (a found record): its ``last_seen``; an unlisted
    # sitemap named again is active again.
    seen_at: datetime | None = None


@dataclass
class WarcCapture:
    """Where a page's exchange (or its rendered DOM) lies in the WARC archive: the file
    (its name once closed), the record's offset and length there, its id and type."""

    url: str  # the page's canonical URL
    depth: int
    warc_file: str
    warc_offset: int
    warc_length: int
    record_id: str
    record_type: str  # response, revisit or conversion
    captured_at: datetime | None = None


Item = (
    DiscoveredPage
    | FetchedPage
    | FetchedImage
    | RobotsFile
    | SiteInfo
    | SitemapFile
    | WarcCapture
    | FeedState
)
# Derived from Item, so that a record type cannot be written without being known here.
ITEM_TYPES: dict[str, type[Item]] = {cls.__name__: cls for cls in get_args(Item)}
