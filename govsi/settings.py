"""govsi settings: every knob a run can turn, each overridable with ``-s NAME=VALUE``
(or scrapyd's ``setting=NAME=VALUE``). Secrets come from the environment only."""

import os

# The Scrapy project: its name, and where its one spider (`scrapy crawl govsi`) lives.
BOT_NAME = "govsi"
SPIDER_MODULES = ["govsi.spiders"]
NEWSPIDER_MODULE = "govsi.spiders"
# govsi's own commands: `scrapy report` (the crawl report, docs/report.md).
COMMANDS_MODULE = "govsi.commands"

# --- What to crawl -------------------------------------------------------------------
# Start URLs: a list, or a comma-separated string from -s.
SEED_URLS = [
    "https://www.gov.si/",
    "https://evem.gov.si/",
    "https://e-uprava.gov.si/",
    "https://e-prostor.gov.si/",
]
# A host is in scope when it equals one of these or ends with "." + one of them.
ALLOWED_DOMAIN_SUFFIXES = ["gov.si"]
# Links deeper than this many hops from a seed are recorded but not fetched (0 = no limit).
DEPTH_LIMIT = 0
# Longer URLs are dropped (and counted in stats) rather than stored; page.url is 3000 wide.
MAX_URL_LENGTH = 2000
# At most this many links (and as many images) are taken from one page, in document
# order; the rest are counted (govsi/links/over_limit), never resolved. 0 = no limit.
MAX_LINKS_PER_PAGE = 10_000
# A page's markup is parsed up to its MAX_PARSE_TAGS-th "<": a parsed tree costs ~800 bytes
# per element, so a 32 MB page of tags would take a gigabyte. The rest of such a page is
# stored, not read for links or text (govsi/pages/parse_cut, the page's fetch_error).
# Ordinary pages have a few thousand. Only pages read in the worker (WORKER_MIN_PAGE_CHARS
# and more) can reach it. 0 = no limit.
MAX_PARSE_TAGS = 250_000
# Scrapy's own URL-length middleware would silently drop at 2083; MAX_URL_LENGTH rules.
URLLENGTH_LIMIT = 0
# Addresses the crawler may connect to although they are not public (govsi/net/guard.py):
# CIDRs, a list or a comma-separated string. Every other loopback, RFC 1918, link-local,
# CGNAT, multicast, unspecified or reserved address (IPv6 too) is refused at connect
# time, whatever name resolves to it; the host's pages stay unfetched with the reason.
ALLOWED_PRIVATE_NETWORKS: list[str] = []
# A proxy resolves names itself, so the guard would see only the proxy's address: with a
# proxy in the environment (http_proxy, https_proxy, all_proxy, in either case) the crawl
# does not start, and a request naming one in meta["proxy"] is refused, unless this says
# the proxy itself refuses private and internal addresses.
PROXY_TRUSTED = False
# Traps (govsi/frontier/traps.py), checked when a link is found; 0 turns a rule off. Refusals are
# counted in the stats as govsi/traps/<rule>.
# A path in which one segment occurs this many times (/a/b/a/b/a/b) is a trap.
TRAP_MAX_REPEATED_SEGMENTS = 3
# At most this many distinct queries per path (endless calendars, ?page=N, filters).
TRAP_MAX_QUERY_VARIANTS = 1000
# At most this many hops along a query chain: pages of one path and one set of query names
# each found from the previous one and bringing nothing new outside it (a calendar's
# "next month" without end). Pagination that brings new pages each time is never cut.
TRAP_MAX_QUERY_CHAIN = 10
# Budgets (govsi/frontier/budgets.py): how much one run takes, 0 = no limit. Each is logged
# once when reached (per host where per host) and counted as govsi/budget/<name> (requests
# left unfetched) and govsi/budget/<name>/hosts; what is left keeps its FRONTIER row with
# the reason ("budget: MAX_... (N) reached"), so a later run (with a higher budget, or the
# same: they count per run and per worker process) goes on from there. `scrapy report`
# lists the hosts that hit one. A host whose page or byte budget is spent is done for the
# run (its images too); a spent image budget stops its images only.
# Pages released per host. .gov.si's largest hosts have about 100 000 pages: 10 times that
# never cuts a real host, yet bounds a generated site that the trap rules miss. At
# DEFAULT_CRAWL_DELAY a host gives at most 17 280 pages a day, so it binds only crawls
# with short delays or long runs.
MAX_PAGES_PER_HOST = 1_000_000
# Images released per host: a site's pictures are far fewer than its pages; this stops
# endless variants (/logo.png?v=N) beyond what TRAP_MAX_QUERY_VARIANTS lets through.
MAX_IMAGES_PER_HOST = 100_000
# Body bytes received per host (after decompression, every kind of response). 10 GiB is
# several times the largest host's pages and documents, and 320 responses of
# DOWNLOAD_MAXSIZE: a host serving endless large files stops there.
MAX_BYTES_PER_HOST = 10 * 1024**3
# Hosts set up (DNS, robots.txt) in one run. .gov.si has a few thousand; beyond this (a
# page linking endless subdomains of a wildcard zone) hosts are not contacted.
MAX_HOSTS = 20_000

# --- Duplicates (govsi/dedup/signature.py) --------------------------------------------------------
# Mark exact and near copies of stored pages DUPLICATE (compared on their main content,
# the site's template left out).
DUPLICATE_DETECTION = True
# Estimated Jaccard similarity of main-content shingles from which a page is a near copy.
# Measured on bench/dedup_accuracy (650 labelled pairs): 0.75 gives precision 1.000, recall
# 0.994; 0.85 gives 1.000 / 0.920 (small edits to short pages fall below it).
NEAR_DUPLICATE_THRESHOLD = 0.75
# HTML pages of at least this many characters are read whole (parsed; their links made
# canonical, render plan, main text and signature) in the spider's worker processes
# (govsi/workers/pool.py), as sitemaps always are, so that the reactor thread only
# downloads, schedules and stores, and the other cores work. 1 = every page: unthrottled on
# 2 KB pages of 3 links, `off` makes 175 pages/s against 157 with pages under 4 KB read on
# the reactor; on 48 KB pages 112 against 81 (bench/render_cost.py --page-chars).
# 0 = always on the reactor.
WORKER_MIN_PAGE_CHARS = 1
# Worker processes for that work (pages, sitemaps). 0 = one per core the reactor leaves
# (cores - 1, at least 1). Each costs ~45 MB once started (at its first job).
WORKER_PROCESSES = 0
# A job (one page or sitemap) may hold its worker this many seconds; past it the process is
# killed and only that page fails, with the reason in fetch_error. 0 = no bound.
WORKER_JOB_TIMEOUT = 60.0
# MB of address space each worker process may take (RLIMIT_AS, set by the process itself
# before its first job): past it the operating system refuses the allocation, whatever
# parser asks, and only that job fails, recorded "over memory bound" (a document's
# page_text status `memory`); a process that died of it is replaced. A one-page PDF of 1 MB
# unpacks to gigabytes in pdfium. 384 leaves room for the largest pages the other bounds
# let through (30 MiB of one word, or of tags cut at MAX_PARSE_TAGS, read whole: bench/
# hostile_crawl); a page of 30 MiB of č (two bytes a character) may not fit. Where no such
# limit can be set the crawl does not start. 0 = no bound.
WORKER_MEMORY_LIMIT = 384
# MinHash permutations per signature, and words per shingle.
MINHASH_PERMUTATIONS = 128
SHINGLE_SIZE = 5

# --- JavaScript rendering (govsi/render/, Chromium driven through scrapy-playwright) ----
# off: plain HTTP only; always: every fetched HTML page is also rendered; auto: a page is
# rendered when it plainly needs a browser (an empty app root), or when pages with the
# same scripts (its script signature) gained links, images or text from rendering. Pages
# with no script that runs on load are never rendered. A page is downloaded once: the
# browser gets the crawler's response as its document.
RENDER_JS = "auto"
# Chromium executable; empty: Debian's chromium-headless-shell, else its chromium
# (govsi/render/engine.py). Without one, the crawl logs it and does not render.
CHROMIUM_PATH = ""
# Extra Chromium command-line switches (a list, a JSON list, or comma-separated with -s),
# of how pages look and how the browser uses this machine only (--lang, --window-size,
# --user-agent, --disable-gpu, ...: govsi.render.fence.ADDABLE_SWITCHES); any other
# (--no-sandbox however spelt, --proxy-server, --disable-web-security) is refused, logged.
RENDER_BROWSER_ARGS: list[str] = []
# When the crawler runs as root, Chromium runs as this account, so that its sandbox can
# start (Chromium refuses to run sandboxed as root). Not used otherwise. Where the sandbox
# cannot start (no such account, user namespaces restricted), rendering is switched off
# for the crawl, logged once: Chromium never runs without its sandbox.
RENDER_BROWSER_USER = "nobody"
# Memory (govsi/render/limits.py, docs/rendering.md "Memory"): each page's V8 heap is
# capped at RENDER_JS_HEAP_MB (a page needing more crashes alone and is kept as fetched),
# and the whole browser process tree at RENDER_MEMORY_MB through a cgroup v2 child of the
# crawler's own, where one can be made (cgroup v2 with the memory controller delegated;
# an rlimit cannot bound Chromium). Where none can, the crawl says so once and goes on
# under the V8 cap alone. 0: no limit. 4 pages at once fit well within 2 GiB.
RENDER_JS_HEAP_MB = 512
RENDER_MEMORY_MB = 2048
# Seconds a page may take to load and settle (network idle); a page past it is kept as
# fetched plainly. Its scripts' requests to its host wait the host's delay each (once per
# URL for the crawl, see RENDER_CACHE_*).
RENDER_TIMEOUT = 60.0
# A page has settled when it has loaded and none of its requests (all of which pass through
# the crawler) has been open for this many seconds: what its scripts fetch on load is in.
RENDER_SETTLE_QUIET = 0.2
# Pages rendering at once, and pages waiting for the browser beyond those (for a turn, or
# for their script signature's samples); when the wait queue is full, the frontier holds
# pages back (robots.txt, sitemaps and the requests of pages being rendered still go)
# until it drains, so memory stays bounded.
RENDER_MAX_PAGES = 4
RENDER_QUEUE_PAGES = 32
# The waiting pages' bodies (as fetched) are bounded in bytes too (32 pages of
# DOWNLOAD_MAXSIZE would hold a gigabyte with their text): a page that would take them
# over this many bytes does not wait, it is kept as fetched, not rendered, with the reason
# in fetch_error (a page with nothing waiting before it always may). It holds no host back:
# pages of megabytes from one site must not stop the crawl of the others. 0 = no bound.
RENDER_QUEUE_BYTES = 64 * 1024 * 1024
# When this many of the waiting pages are one host's, only that host's pages are held
# back: a host whose every page needs a browser waits for it, the others' crawl goes on.
RENDER_QUEUE_HOST_PAGES = 8
# Pages rendered in one browser context before the next go to a fresh one and the old
# one is closed: a context keeps caches and state as long as it lives, and without this
# the browser's memory creeps up over a long crawl (bench/render_memory.py).
RENDER_CONTEXT_PAGES = 500
# Seconds without a page to render after which Chromium and Playwright's driver are
# closed (started again when a page needs them).
RENDER_IDLE_CLOSE = 60.0
# auto: pages of each script signature rendered both ways before deciding, and how many
# plainly fetched pages of a signature later it is sampled again (the wait doubles after
# each resample that agrees, up to 16 times this).
RENDER_SAMPLE_PAGES = 3
RENDER_RESAMPLE_EVERY = 200
# The sub-resources rendered pages fetch (scripts, XHR) are cached for the crawl under
# HTTP's caching rules, in at most this many bytes; a response without caching headers
# is fresh for RENDER_CACHE_TTL seconds (RFC 9111 lets a cache choose; a crawl is a
# snapshot, and a template's script must not cost a request per page).
RENDER_CACHE_MAX_BYTES = 64 * 1024 * 1024
RENDER_CACHE_TTL = 24 * 3600.0
# Sub-resource requests one render may send through the crawler (cache hits and redirect
# hops included); the rest are refused in the browser. An ordinary page needs a few dozen;
# the cap keeps a page making thousands of fetch() calls from flooding its host's queue.
# Whatever a render still has queued when it ends (settled, timed out, failed) is
# cancelled. A sub-resource URL longer than MAX_URL_LENGTH is refused before any check.
RENDER_MAX_REQUESTS_PER_PAGE = 150

# --- Storage ---------------------------------------------------------------------------
# SQLAlchemy URL of crawldb. The CRAWLDB_URL environment variable overrides the default,
# so that a PostgreSQL password never has to be written into a file or a job's settings:
#   CRAWLDB_URL=postgresql+psycopg2://user:secret@host/db scrapy crawl govsi
CRAWLDB_URL = os.environ.get("CRAWLDB_URL") or "sqlite:///crawldb.sqlite3"
# true: empty the crawldb tables before crawling; false: keep them and continue.
FRESH_START = False
# Keep the bytes of images (image.data) and of binary documents (page_data.data); when
# not kept, the transfer stops after the response headers, except a document's while
# REVISIT is on: it is read to be hashed (page.content_hash), so that a revisit can tell
# a replaced document.
STORE_IMAGE_DATA = True
STORE_BINARY_DATA = False
# Keep the text of every HTML page fetched with success (its main text, the site's template
# left out, or all its text when it has no main text) and of every document (PDF, DOC,
# DOCX, PPT, PPTX) in crawldb's page_text, with title, language and date, for search and
# SQL (docs/stored.md). Documents are then read whole (as while REVISIT is on) and their
# text read in the worker pool, within the bounds below; an unreadable one gets a status
# and the reason.
TEXT_EXTRACTION = True
# At most this many characters of one page's or document's text are kept (and read by
# scrapy index, whatever crawldb holds).
TEXT_MAX_CHARS = 1_000_000
# A document's pages (PDF) or slides (PPTX) read, at most.
DOCUMENT_TEXT_MAX_PAGES = 2_000
# Seconds spent reading one document, checked between its pages; a hang inside one page
# ends at WORKER_JOB_TIMEOUT, when the worker is replaced and the document recorded failed.
DOCUMENT_TEXT_MAX_SECONDS = 20.0
# Bytes unpacked from one document's zip (DOCX, PPTX) or compound file (DOC, PPT) at most:
# a zip bomb stops there.
DOCUMENT_TEXT_MAX_UNPACKED_BYTES = 64 * 1024 * 1024
# Writes are batched: flush after this many items or this many seconds, whichever first.
DB_BATCH_SIZE = 200
DB_FLUSH_INTERVAL = 2.0
# Write the batches in a process of their own, so SQLAlchemy's work (about 1 ms of CPU per
# page) runs on the other core instead of holding the crawl's GIL: an unthrottled crawl
# fetched 31 % more pages, for ~70 MB more memory at the memory bench's peak (its Python,
# SQLAlchemy and batches). false: in a thread of the crawl's process. An in-memory SQLite
# crawldb is always written in the crawl's process.
DB_WRITER_PROCESS = True
# The page ids of this many recently written URLs are remembered (~130 bytes each, by their
# fingerprint, whatever their length), so a link to a page already in crawldb (a site's
# menu, on every page) costs no row written and read back (govsi/store/pageids.py).
# 0 = ask crawldb every time.
DB_PAGE_ID_CACHE = 20_000
# A failed write is retried this many times (with backoff) before it is kept for the next
# flush; what still cannot be written at the end is saved to a JSON-lines file.
DB_WRITE_RETRIES = 3
# The writer's buffer: at most this many items and bytes wait in memory for crawldb.
# While crawldb is away they go to a spill file at every flush (and at once when full), so
# memory stays flat and a kill loses at most DB_FLUSH_INTERVAL; when the buffer is full all
# the same (crawldb too slow, or the spill folder unwritable) the scheduler takes no new
# requests until it drains. 0 = no limit. The bytes count what is stored (a page's HTML
# and text); the buffer takes about twice that in memory, and one batch more
# (DB_BATCH_MAX_BYTES) waits in the write under way: 16 MB keeps the crawler ~60 MB smaller
# than 64 did on the memory bench when crawldb lags, at the same pages/s.
DB_BUFFER_MAX_ITEMS = 5000
DB_BUFFER_MAX_BYTES = 16 * 1024 * 1024
# The most one write takes from that buffer, in the same bytes (at least one item): the
# writer holds its batch three times over (pickled, as items, as rows), so its memory
# follows the largest batch; what is left is written right after. 0 = everything pending.
DB_BATCH_MAX_BYTES = 4 * 1024 * 1024
# PostgreSQL connections: seconds to connect, seconds a statement may run, seconds of
# silence before TCP keepalives probe (0 turns each off). A partitioned crawldb then fails
# a write or a lease round within seconds instead of hanging it for minutes.
DB_CONNECT_TIMEOUT = 10.0
DB_STATEMENT_TIMEOUT = 120.0
DB_KEEPALIVES_IDLE = 10
# Where unwritable items are saved when the database stays away until the crawl ends
# (files of mode 0600, each naming the crawldb it belongs to). "" = beside an SQLite
# crawldb, else $XDG_STATE_HOME/govsi (~/.local/state/govsi); never the working directory.
DB_SPILL_DIR = ""
# At most this many bytes of this run's spill files on disk (those not yet written back).
# Past it, items stay in memory and, once the buffer is full, no new requests go out until
# crawldb answers (logged once, counted as govsi/budget/spill_bytes): nothing is dropped.
# When the crawl ends with crawldb away, its last buffer is saved all the same (at most
# DB_BUFFER_MAX_BYTES more). 0 = no limit.
DB_SPILL_MAX_BYTES = 4 * 1024**3

# --- The web archive (WARC; docs/archive.md) ---------------------------------------------
# A directory turns it on: every HTTP exchange (pages, documents, pictures, robots.txt,
# sitemaps, redirects, errors, rendered pages' sub-resources) written there as WARC
# request and response records, bodies as they came off the wire. Off by default: an
# archive holds every byte served, several times crawldb's size on disk.
WARC_DIR = ""
# Files are named {prefix}-{timestamp}-{serial}-{pid}-{host}.warc.gz.
WARC_PREFIX = "govsi"
# A file is closed and a new one begun once it reaches this many bytes (0: never).
WARC_MAX_SIZE = 1024 * 1024 * 1024
# gzip level of each record, 0-3: ISA-L's levels (python-isal), standard gzip written
# several times faster than zlib. 2: on a 48 KB page of text 0.24 ms, as small as zlib's
# level 6 (1.34 ms); 3 about 1 % smaller for twice the CPU; 0 a quarter larger.
WARC_GZIP_LEVEL = 2
# Who runs the crawl, as the warcinfo record says (a name, an e-mail address).
WARC_OPERATOR = ""
# Payload digests remembered so that a copy becomes a revisit record (about 200 bytes
# each); a payload first written longer ago is written whole again.
WARC_REVISIT_DIGESTS = 200_000
# Bodies waiting for the archive's process beyond this many bytes (a disk slower than the
# downloads) hold new requests, as crawldb's full buffer does, so memory stays bounded;
# the exchange that crosses it is still queued whole. 0 = no limit.
WARC_QUEUE_MAX_BYTES = 64 * 1024 * 1024

# --- Politeness ------------------------------------------------------------------------
# The product token robots.txt groups are matched against; USER_AGENT starts with it.
ROBOTSTXT_USER_AGENT = "govsi-crawler"
USER_AGENT = "govsi-crawler/0.1 (+https://github.com/govsi/govsi; research crawl of .gov.si)"
# Obey robots.txt (RFC 9309 as Google reads it, govsi.robots.rules); fetched by the frontier
# as each host's first request, not by Scrapy's RobotsTxtMiddleware (disabled below).
ROBOTSTXT_OBEY = True
# Rules older than this many seconds are fetched again before the host's next request.
ROBOTSTXT_MAX_AGE = 24 * 3600
# A robots.txt answering 5xx (or not at all) means "crawl nothing of the host for now":
# it is asked again this many times, after this many seconds, doubling each time; then
# the host's pages stay in the frontier with the reason, for a later run.
ROBOTSTXT_RETRY_TIMES = 3
ROBOTSTXT_RETRY_DELAY = 60.0
# Read the sitemaps robots.txt lists (Sitemap lines, sitemap indexes, gzip): the pages
# they list join the frontier one hop below the host's root page.
SITEMAP_FOLLOW = True
# At most this many URLs taken from one host's sitemaps, and this many sitemap files
# read per host (an index can list 50 000 sitemaps of 50 000 URLs each).
SITEMAP_MAX_URLS_PER_HOST = 100_000
SITEMAP_MAX_FILES_PER_HOST = 100
# At most this many bytes of sitemap documents kept in site.sitemap_content per host, in
# this run and across runs (the stored value never grows past it; later documents are
# read, not stored). 0 = no limit.
SITEMAP_STORE_MAX_BYTES = 16 * 1024 * 1024
# Read the RSS, Atom and JSON feeds pages declare (<link rel="alternate"
# type="application/rss+xml">): their new entries are fetched ahead of the host's
# breadth-first order.
FEED_FOLLOW = True
# Seconds between two polls of a feed, and between two reads of a sitemap: on every run
# started later than that after the last poll (REVISIT not off), the feed or sitemap is
# asked for again, conditionally (If-None-Match / If-Modified-Since), whatever else is due.
FEED_POLL_INTERVAL = 3600.0
SITEMAP_POLL_INTERVAL = 7200.0
# Seconds a failing feed or sitemap waits at most: a poll that fails (no answer, a timeout,
# a body past its size bound, an HTTP error, a redirect not followed, a body that is no
# feed) doubles its interval per failure in a row, up to this; one success resets it.
FEED_BACKOFF_MAX = 24 * 3600.0
# Failed polls in a row, the last a 404 or 410, after which a feed or sitemap is parked
# (feed.state "gone", logged): asked again only FEED_FORGET_AFTER later. 0 = never parked.
FEED_GONE_AFTER = 3
# Seconds after which a feed or sitemap no page and no robots.txt has named is forgotten
# (its crawldb row deleted, logged), so that the poll list cannot only grow. Twice
# REVISIT_MAX_INTERVAL: a page declaring it is read again well within it.
FEED_FORGET_AFTER = 60 * 24 * 3600.0
# Seconds between two requests to one host (a longer robots Crawl-delay wins) and between
# two requests to one IP address, counted from when the previous request reached the
# server. Every request counts: pages, images, documents, robots.txt, sitemaps.
DEFAULT_CRAWL_DELAY = 5.0
# A host whose robots.txt asks for a longer Crawl-delay (seconds) is not crawled in this
# run (its pages stay FRONTIER with the reason): never faster than asked, and the crawl
# still ends. 0 = no cap.
MAX_CRAWL_DELAY = 120.0
# Requests in flight at once, overall; the frontier sends one at a time per IP address.
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 1
# Outputs of one callback (the page record, its new requests) handled at once. Scrapy
# starts this many tasks for every response whatever it yields; at its default of 100
# that alone took a fifth of the reactor thread's time. The pipeline is synchronous, so a
# handful is as fast as a hundred.
CONCURRENT_ITEMS = 4
# No cookies: a crawl is a visitor without a session (canonical URLs drop session ids).
COOKIES_ENABLED = False

# --- Fetching --------------------------------------------------------------------------
# Seconds a response may take; a slower one is recorded as an ERROR page.
DOWNLOAD_TIMEOUT = 60
# Host names are resolved in DNS_THREADS threads of their own (govsi/net/dns.py), not in
# the reactor's pool where crawldb writes and lease rounds run: a zone whose nameserver
# never answers then delays no write. A lookup not answered within DNS_TIMEOUT seconds of
# being asked (waiting for a thread included) fails its host with the reason; its pages
# stay in the frontier. A nameserver that answers does so in well under a second.
TWISTED_DNS_RESOLVER = "govsi.net.dns.PooledResolver"
DNS_THREADS = 12
DNS_TIMEOUT = 30.0
# An endless or huge response is cut off here and recorded as an error on its page.
DOWNLOAD_MAXSIZE = 32 * 1024 * 1024
# A response larger than this is logged as a warning (Scrapy's own).
DOWNLOAD_WARNSIZE = 8 * 1024 * 1024
# A response's header section is cut off past this many bytes or header fields: the
# connection is dropped and the page records HeaderLimitExceeded (govsi/net/download.py;
# Twisted's parser caps one line at 16 KiB, but neither continuation lines nor the
# count). 256 KiB is Chromium's own cap, so no page a browser shows is refused; real
# responses have a few dozen headers. 0 = no cap.
MAX_HEADER_BYTES = 256 * 1024
MAX_HEADERS = 200
# Scrapy's HTTP/1.1 handler with those header limits (govsi/net/download.py).
DOWNLOAD_HANDLERS = {
    "http": "govsi.net.download.BoundedHTTP11DownloadHandler",
    "https": "govsi.net.download.BoundedHTTP11DownloadHandler",
}
# Redirects are followed by the spider, not by Scrapy, so each hop gets its own page row
# with its 3xx status and a link to where it leads.
REDIRECT_ENABLED = False
# The same for <meta http-equiv="refresh">: its target is a link of the page (scope, traps,
# the seen-URL set and the address guard apply), never a request Scrapy makes on its own.
METAREFRESH_ENABLED = False
# Error pages are stored with their status, so the spider sees every status.
HTTPERROR_ALLOW_ALL = True
# Scrapy's retries: a request that fails, or is answered with one of RETRY_HTTP_CODES
# (5xx, 408, 429), is sent again this many times before its page is recorded.
RETRY_TIMES = 2

# --- The frontier ----------------------------------------------------------------------
# Breadth-first per host (depth, then discovery), each request released only when its
# host and its IP address may be asked again; the queue is crawldb's FRONTIER rows.
SCHEDULER = "govsi.frontier.scheduler.FrontierScheduler"
DUPEFILTER_CLASS = "govsi.dupefilters.CanonicalDupeFilter"
# Queued pages held in memory; the rest wait in crawldb and are read back as hosts drain.
FRONTIER_WINDOW = 100_000

# --- Keeping the copy fresh (revisits; docs/stored.md "History") ----------------------
# due: after a run's new pages, stored pages whose next visit has come are fetched again
# (conditionally: If-None-Match / If-Modified-Since); all: every stored page is due now;
# off: a fetched page is never fetched again.
REVISIT = "due"
# Seconds between two visits of a page, at least and at most: each page's interval is
# learnt from its own history of changes (govsi/revisit/schedule.py) within these bounds.
# A run resumed within REVISIT_MIN_INTERVAL revisits nothing, and scrapy report counts it
# in the round it resumed (its "Changes in the last round").
REVISIT_MIN_INTERVAL = 24 * 3600
REVISIT_MAX_INTERVAL = 30 * 24 * 3600
# Seconds between two visits of a hub (a page whose visits found links crawldb did not know:
# a news list, an index), at least: the schedule may give a hub less than
# REVISIT_MIN_INTERVAL, down to this (bench/freshness.py measured the default), and a run
# revisits it then. No page is revisited sooner than this after its last visit (a sitemap's
# lastmod included; the shorter of the two intervals); a picture no sooner than
# REVISIT_MIN_INTERVAL after its download.
REVISIT_HUB_MIN_INTERVAL = 3600
# The share of the fetches a host's delay allows in a day (86 400 / the delay: 17 280 at
# 5 s) that its revisits may take, every worker's claims counted in crawldb: the soonest due
# first, the rest stay due for the next run. A host whose pages ask for more has their
# intervals lengthened by a price fitted to it once a day (docs/stored.md). Half leaves new
# pages the other half. 0 = no cap (and no fitted price).
REVISIT_HOST_SHARE = 0.5
# Seconds an idle crawl stays open for its next due visit (a stored page's next visit, a
# feed's or sitemap's next poll) instead of ending, when that comes within it: then what
# is due is picked up and the crawl goes on (govsi/frontier/waiting.py). For deployments
# that want new pages within hours. 0 = the crawl ends when nothing is due now.
REVISIT_WAIT = 0.0
# Each page's earlier versions kept (page_version; their HTML once per distinct content):
# its last HISTORY_KEEP_VERSIONS, and the last one seen in each calendar month of the
# HISTORY_KEEP_MONTHS up to its latest change (that month included); the others go when
# the page next changes. At most the sum of both per page; 0 and 0 keep none. They bound a
# page's changes (page_change) too: the last HISTORY_KEEP_VERSIONS keep the text each
# replaced, and changes more than HISTORY_KEEP_MONTHS months before its latest go.
HISTORY_KEEP_VERSIONS = 10
HISTORY_KEEP_MONTHS = 24

# --- Sharing a crawl (several processes on one PostgreSQL crawldb; govsi/sharing/leases.py) ----
# A process serves an IP address (every host on it) only while it holds the address's
# lease. Seconds a lease lasts unless renewed (every third of it): how long the hosts of
# a process that died wait before another takes them over.
LEASE_TTL = 30.0
# Seconds between looks for hosts with FRONTIER rows that other processes found.
LEASE_SCAN_INTERVAL = 10.0
# FRONTIER rows read from crawldb at a time for one host.
FRONTIER_REFILL_SIZE = 200
# Seconds between progress lines in the log (0 = none).
PROGRESS_INTERVAL = 60.0

# --- Components ------------------------------------------------------------------------
# The settings a govsi crawl fixes whatever else is set (govsi/addons.py): no Scrapy
# download delay (the frontier's delays rule), passwords hidden in Scrapy's log of the
# settings, scrapy-playwright's settings for RENDER_JS.
ADDONS = {
    "govsi.addons.GovsiAddon": 0,
}
# Scrapy extensions: govsi's components, wired by priority and signals as Scrapy does.
EXTENSIONS = {
    # Refuses connections to private addresses (ALLOWED_PRIVATE_NETWORKS).
    "govsi.net.guard.AddressGuard": 50,
    "govsi.store.extension.CrawlStore": 100,
    # The URLs this crawl knows, shared by the spider and the dupefilter.
    "govsi.frontier.seen.KnownUrls": 110,
    # Renders pages the spider hands it (RENDER_JS); idle when rendering is off.
    "govsi.render.renderer.Renderer": 120,
    # The reactor's longest stall, in the stats (govsi/reactor/max_stall_seconds).
    "govsi.health.stalls.ReactorStalls": 130,
    # Freed memory goes back to the system (MALLOC_ARENA_MAX, MEMORY_TRIM_INTERVAL), and the
    # collector leaves start-up's objects alone (GC_FREEZE).
    "govsi.health.memory.ProcessMemory": 140,
    # The helper threads get the GIL within GIL_SWITCH_INTERVAL (govsi/health/switching.py).
    "govsi.health.switching.ThreadSwitching": 150,
    # The reactor's thread keeps a CPU, the helpers yield to it (REACTOR_CPU, HELPER_NICE).
    "govsi.health.cpus.CpuSharing": 160,
    # Keeps an idle crawl open for its next due visit (REVISIT_WAIT; off at 0).
    "govsi.frontier.waiting.RevisitWait": 170,
    # Brings the search index up to date as the crawl ends (SEARCH_INDEX set).
    "govsi.search.extension.SearchIndexUpdate": 800,
    # Sends each saved filter's new changes after the crawl (CHANGES_NOTIFY set).
    "govsi.changes.notify.ChangesNotify": 810,
    "govsi.store.statsfile.StatsFile": 900,
}
# Every record the spider yields goes to crawldb through the crawl's store.
ITEM_PIPELINES = {
    "govsi.pipelines.CrawlDBPipeline": 300,
}
# Scrapy's downloader middlewares, changed where govsi decides itself.
DOWNLOADER_MIDDLEWARES = {
    "govsi.middlewares.StopUnwantedBodiesMiddleware": 50,
    # Responses before HttpCompressionMiddleware (590) decodes them: kept as they came.
    "govsi.middlewares.WarcMiddleware": 800,
    # Last before the download: the address guard asserted (it is the reactor's resolver,
    # no untrusted proxy), and its refusals kept with their reason, never retried.
    "govsi.middlewares.AddressGuardMiddleware": 950,
    # robots.txt is the frontier's (see ROBOTSTXT_OBEY): Scrapy's middleware would fetch it
    # outside the host's delay, ignore Crawl-delay and Sitemap, and allow all on a 5xx.
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
}
# Scrapy's spider middlewares, changed where govsi decides itself.
SPIDER_MIDDLEWARES = {
    # The spider computes depth itself: a redirect target keeps its source's depth.
    "scrapy.spidermiddlewares.depth.DepthMiddleware": None,
}

# --- Logs and stats --------------------------------------------------------------------
# INFO: what the crawl decided, its limits and its progress lines; DEBUG adds a line per
# request.
LOG_LEVEL = "INFO"
# The reactor's loop lag (govsi/health/stalls.py): a tick every this many seconds measures
# how long the reactor thread was kept from its loop, the time every host's downloads,
# timeouts and delays waited (0 = off). Longer stalls than STALL_WARN_SECONDS are logged.
STALL_PROBE_INTERVAL = 0.05
STALL_WARN_SECONDS = 1.0
# The crawl process's memory (govsi/health/memory.py, glibc only): at most this many malloc
# arenas (0 = glibc's default, 8 per core), whose free memory a dozen threads would
# otherwise keep resident; blocks over MALLOC_MMAP_THRESHOLD bytes mapped and unmapped
# whole (0 = glibc's rising default); and the free pages inside the arenas handed back
# every MEMORY_TRIM_INTERVAL seconds (0 = never). Together ~40 MB less on the memory bench.
MALLOC_ARENA_MAX = 2
MALLOC_MMAP_THRESHOLD = 65536
MEMORY_TRIM_INTERVAL = 20.0
# Freeze what start-up made (gc.freeze) when the spider opens: the cyclic collector's full
# passes then walk only what the crawl made (0.59 -> 0.11 s of the reactor in a 16 s crawl).
GC_FREEZE = True
# Seconds a thread that wakes waits at most for the GIL while the reactor's thread runs
# (sys.setswitchinterval; Python's default 0.005; 0 = leave it). The worker processes'
# outcomes, duplicate lookups and crawldb writes come back through threads; at 5 ms a small
# page waited ~120 ms for its outcome, at 0.5 ms ~30 ms (govsi/health/switching.py).
GIL_SWITCH_INTERVAL = 0.0005
# The CPU the reactor's thread is pinned to while the crawl runs (govsi/health/cpus.py):
# "auto", the one it runs on when the crawl opens; a number, that CPU; "off", the kernel
# moves it. Nothing is pinned with a single CPU. Several crawls on one machine: see
# docs/running.md.
REACTOR_CPU = "auto"
# How much lower the priority (nice) of the crawl's helper processes (worker pool,
# crawldb's writer, archive, browser) is than the crawl's own: they take the CPUs the
# reactor's thread leaves idle, not its own. 0 = the same.
HELPER_NICE = 10
# Seconds between two passes placing new helper processes.
CPU_SHARING_INTERVAL = 2.0
# Write the final crawl stats as JSON to this file ("" = don't).
STATS_FILE = ""
# No consoles: the telnet console and Scrapy's remote-control HTTP server would each
# listen on a port of the crawling machine, which nobody asked for.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False

# --- The crawl report ------------------------------------------------------------------
# The crawl report (`scrapy report`): the folder it writes to (-o overrides), how many
# sites the domain link graph draws (seeds first, then the best linked; the JSON and CSV
# files keep all), how many pages of the chosen site the page link graph draws (nearest
# the seed first), and how many rows of a long table (hosts) the HTML page shows.
REPORT_FOLDER = "report"

# Search over the crawl's text (scrapy index, scrapy search; docs/search.md). The index's
# folder; when set, a crawl also brings the index up to date as it ends. scrapy index and
# scrapy search use ./search-index when it is not set.
SEARCH_INDEX = ""
# A match in the title counts this many times a match in the text, in a query of one word
# or with a phrase (several words weigh the title as it was indexed: docs/search.md).
SEARCH_TITLE_BOOST = 2.0
# The link prior: a result's score times 1 + SEARCH_LINK_PRIOR * ln(1 + its in-links), so a
# page many pages link to comes first among equals (0 = BM25 alone).
SEARCH_LINK_PRIOR = 0.1
# Processes that analyse pages while an index is built or updated (lemmas hold the GIL);
# 0 = one per CPU. An update of fewer than 5 000 pages runs in one process.
SEARCH_INDEX_PROCESSES = 0
# Seconds scrapy serve gives a client to send its whole request (and each write of the
# answer); a connection that sends nothing, or a byte at a time, is closed after it.
SEARCH_SERVE_TIMEOUT = 10.0
# Connections scrapy serve serves at once (a thread each); one more is closed at once.
SEARCH_SERVE_CONNECTIONS = 16
# Where scrapy serve's search page listens (HOST:PORT, an IPv6 address in brackets:
# [::1]:8080); keep it on a local address: the page has no login. It answers only requests
# that name it (its address, localhost, a loopback address: DNS rebinding gets 421).
SEARCH_SERVE_ADDRESS = "127.0.0.1:8080"
REPORT_GRAPH_MAX_SITES = 300
REPORT_SITE_GRAPH_MAX_PAGES = 300
REPORT_HTML_ROWS = 200

# --- Changes (scrapy changes, the Changes page and feed; docs/changes.md) ---------------
# A change's diff (its page in scrapy serve): each side's main text is cut to this many
# characters first (the diff says it was cut), and the search for the fewest words changed
# stops after this many seconds, leaving the rest as removed and added whole (coarser,
# never wrong). Bounds what one hostile or huge text costs.
CHANGES_DIFF_MAX_CHARS = 200_000
CHANGES_DIFF_TIMEOUT = 1.0
# The same two bounds for each change of a list (scrapy changes, the Changes page, the
# feed, notifications), whose diffs only give the first words added and removed (a diff
# stopped early still starts at the first word that differs, but takes more words with
# it), and the seconds all of a list's diffs may take together: past them, the rest of
# the list's diffs stop at once (coarse excerpts), so a list costs at most about this.
CHANGES_EXCERPT_DIFF_CHARS = 20_000
CHANGES_EXCERPT_DIFF_TIMEOUT = 0.2
CHANGES_EXCERPT_BUDGET = 1.0
# Search words in a changes filter are matched against each candidate change, newest
# first (their texts are the change's own versions, which the search index no longer
# holds): a list reads at most this many candidates, then says that more may match
# further back (narrow the window: --since, --host, --kind, --type).
CHANGES_SCAN_MAX = 5_000
# The characters of a candidate's text its search words are matched against.
CHANGES_MATCH_MAX_CHARS = 50_000

# --- Changes notifications (docs/changes.md "Notifications") ------------------------------
# Saved filters whose new changes are sent after each crawl, by name: ChangeFilter's
# parameters as a query string (q, since, until, host, kind, type), e.g.
# {"uredbe": "q=uredba&type=pdf"} (-s CHANGES_NOTIFY='{"uredbe": "q=uredba"}'). Empty = off.
CHANGES_NOTIFY: dict[str, str] = {}
# The NAME of the environment variable that holds the Apprise URLs the messages go to
# (separated by spaces or commas: mailtos://..., slack://..., json://...). The URLs hold
# secrets, so they are never a setting, never logged.
CHANGES_NOTIFY_URLS_ENV = "GOVSI_NOTIFY_URLS"
# The newest changes a message lists (the count in its title covers all of them).
CHANGES_NOTIFY_MAX = 10
# Seconds one message may take to reach all its services; a send that takes longer fails,
# and its changes are sent again after the next crawl.
CHANGES_NOTIFY_TIMEOUT = 60.0
# Where readers reach scrapy serve (e.g. "https://govsi.example.org"): each message then
# links to its filter's Changes page and Atom feed. "" = no links.
CHANGES_NOTIFY_LINK_BASE = ""
