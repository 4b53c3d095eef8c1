"""robots.txt decisions as RFC 9309 and Google's reference parser (robots.cc) make them.

``parse(body, robots_url)`` turns a robots.txt into ``RobotsRules``; ``rules_for_response``
picks the rules for a fetch outcome (RFC 9309 section 2.3.1). The module is pure (no
Scrapy), so it is tested on its own against the conformance data in ``tests/``. Groups that
name the crawler are merged, Crawl-delay comes only from the group that applies, relative
Sitemap values are resolved. Why not Protego, and which of Google's extensions are
followed: docs/politeness.md, "robots.txt in detail"; how a path is matched and what a
check may cost: ``govsi.robots.matching``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urljoin, urlsplit

from govsi.robots.matching import MAX_PATH_CHARS, Policy

logger = logging.getLogger(__name__)

# RFC 9309 section 2.5: crawlers must parse at least 500 KiB; more is not worth the memory.
# Google reads 500 KiB too. It also bounds the rules (about 50 000 at most).
MAX_BODY_BYTES = 512_000
# robots.cc's line buffer holds kMaxLineLen = 2083 * 8 bytes including the final NUL.
_MAX_LINE_BYTES = 2083 * 8 - 1
_BOM = b"\xef\xbb\xbf"
_EOL = re.compile(rb"\r\n|\r|\n")
# robots.cc accepts only space and tab in place of a missing colon.
_BLANKS = re.compile(rb"[ \t]+")
# robots.cc ExtractUserAgent: a group's product token ends at the first other character.
_UA_TOKEN = re.compile(rb"[A-Za-z_-]*")
_CALLER_TOKEN_END = re.compile(r"[/\s]")
_ESCAPE_OR_HIGH = re.compile(rb"%[0-9A-Fa-f]{2}|[\x80-\xff]")
# float() would also take "1e3", "inf", "nan" and "1_0"; a delay is plain decimal.
_DELAY = re.compile(rb"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
# robots.cc GetPathParamsQuery as one regex: an optional leading "//", a scheme ending in
# "://" only if no "/?;" comes before it, then the host up to the first of "/?;".
_BEFORE_PATH = re.compile(r"(?://)?(?:[^/?;]*://)?[^/?;]*")

_USER_AGENT_KEYS = (b"user-agent", b"useragent", b"user agent")
_DISALLOW_KEYS = (b"disallow", b"dissallow", b"dissalow", b"disalow", b"diasllow", b"disallaw")
_SITEMAP_KEYS = (b"sitemap", b"site-map")


@dataclass
class _Group:
    """One group: the user-agent lines that open it and the member lines after them."""

    agents: set[str] = field(default_factory=set)  # lower-case tokens; "*" is the global group
    rules: list[tuple[bool, str]] = field(default_factory=list)  # (is_allow, escaped pattern)
    delays: list[float] = field(default_factory=list)
    # Set by the first member line: a user-agent line after it opens a new group.
    closed: bool = False


# Why a URL may not be fetched: the rules forbid it, or the check was refused unchecked.
Refusal = Literal["forbidden", "path_too_long", "check_too_costly"]


class RobotsRules:
    """The decisions one robots.txt makes; ``parse`` builds it."""

    def __init__(self, groups: list[_Group], sitemaps: list[str], source: str = "") -> None:
        self._groups = groups
        self._sitemaps = sitemaps
        self._source = source  # the robots.txt URL, for log lines
        # allowed() runs for every request; a crawl uses one or two user agents.
        self._policies: dict[str, Policy] = {}
        # Paths disallowed without a decision from the rules, by reason.
        self.refusals: dict[str, int] = {}

    @classmethod
    def allow_all(cls) -> RobotsRules:
        return cls([], [])

    @classmethod
    def disallow_all(cls) -> RobotsRules:
        return cls([_Group(agents={"*"}, rules=[(False, "/")])], [])

    @property
    def sitemaps(self) -> list[str]:
        return list(self._sitemaps)

    def allowed(self, url: str, user_agent: str) -> bool:
        """Whether the rules let ``user_agent`` fetch ``url`` (``refusal`` is None)."""
        return self.refusal(url, user_agent) is None

    def refusal(self, url: str, user_agent: str) -> Refusal | None:
        """Why ``user_agent`` may not fetch ``url``, or None when it may. Costs O(len(url))
        plus at most MAX_CHECK_WORK: a path over MAX_PATH_CHARS, or one whose check would
        need more work, is refused unchecked (fail closed) and counted in ``refusals``."""
        path = _path_params_query(url)
        # RFC 9309 section 2.2.2: /robots.txt is implicitly allowed (robots.cc has no such rule).
        if path == "/robots.txt":
            return None
        if len(path) > MAX_PATH_CHARS:
            return self._refuse("path_too_long", len(path))
        decision = self._policy(user_agent).allows(path)
        if decision is None:
            return self._refuse("check_too_costly", len(path))
        return None if decision else "forbidden"

    def crawl_delay(self, user_agent: str) -> float | None:
        return self._policy(user_agent).crawl_delay

    def _policy(self, user_agent: str) -> Policy:
        policy = self._policies.get(user_agent)
        if policy is None:
            token = _CALLER_TOKEN_END.split(user_agent.strip(), maxsplit=1)[0].lower()
            # RFC 9309 section 2.2.1: all groups naming us, merged; else all "*" groups.
            groups = [g for g in self._groups if token in g.agents] or [
                g for g in self._groups if "*" in g.agents
            ]
            rules = [rule for g in groups for rule in g.rules]
            delay = next((d for g in groups for d in g.delays), None)
            policy = self._policies[user_agent] = Policy(rules, delay, self._source)
        return policy

    def _refuse(self, reason: Refusal, path_length: int) -> Refusal:
        count = self.refusals[reason] = self.refusals.get(reason, 0) + 1
        if count == 1 and reason == "path_too_long":
            logger.warning(
                "robots.txt %s: a %d-character path is over %d and is disallowed unchecked "
                "(fail closed); later ones are only counted",
                self._source or "(no URL)", path_length, MAX_PATH_CHARS,
            )  # fmt: skip
        return reason


def parse(body: bytes | str, robots_url: str) -> RobotsRules:
    """Parse a robots.txt body fetched from ``robots_url`` (for resolving Sitemap values)."""
    # Work on bytes as robots.cc does, so the line cut-off counts bytes and rule values
    # are escaped byte by byte; text values are decoded as UTF-8 with errors replaced.
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else bytes(body)
    if len(data) > MAX_BODY_BYTES:
        logger.warning(
            "robots.txt %s is %d bytes: only the first %d are read (RFC 9309 section 2.5)",
            robots_url, len(data), MAX_BODY_BYTES,
        )  # fmt: skip
    data = _skip_bom(data[:MAX_BODY_BYTES])
    groups: list[_Group] = []
    sitemaps: list[str] = []
    group: _Group | None = None
    for line in _EOL.split(data):
        pair = _key_and_value(line[:_MAX_LINE_BYTES])
        if pair is None:
            continue
        key, value = pair
        kind = _directive(key)
        if kind == "user-agent":
            if group is None or group.closed:
                group = _Group()
                groups.append(group)
            _add_agent(group, value)
        elif kind == "sitemap":
            _add_sitemap(sitemaps, value, robots_url)
        elif group is None:
            continue  # member lines before the first user-agent line belong to no group
        elif kind in ("allow", "disallow"):
            group.rules.append((kind == "allow", _escape_pattern(value)))
            group.closed = True
        elif kind == "crawl-delay":
            # Crawl-delay is read as a group member (as Bing and Yandex do), so it also
            # closes the user-agent list; unknown lines and Sitemap do not (RFC 2.2.4).
            if _DELAY.fullmatch(value):
                group.delays.append(float(value))
            group.closed = True
    return RobotsRules(groups, sitemaps, robots_url)


def rules_for_response(status: int | None, body: bytes, robots_url: str) -> RobotsRules:
    """The rules for one robots.txt fetch outcome (RFC 9309 section 2.3.1)."""
    if status is None:
        return RobotsRules.disallow_all()  # unreachable (DNS, timeout, refused): 2.3.1.4
    if 200 <= status < 300:
        return parse(body, robots_url)
    if 300 <= status < 500:
        # The caller follows up to five redirects (2.3.1.2); a 3xx that still reaches here
        # had too many hops or no usable Location, which 2.3.1.2 lets us treat as
        # unavailable, like a 4xx (2.3.1.3): everything is allowed. That includes 429,
        # which Google treats as a server error; retrying it is the caller's decision.
        return RobotsRules.allow_all()
    # 5xx and anything that is not an HTTP status: unreachable, complete disallow.
    return RobotsRules.disallow_all()


def _skip_bom(data: bytes) -> bytes:
    # robots.cc skips any prefix of the BOM, so a truncated BOM does not spoil line one.
    n = 0
    while n < len(_BOM) and data[n : n + 1] == _BOM[n : n + 1]:
        n += 1
    return data[n:]


def _key_and_value(line: bytes) -> tuple[bytes, bytes] | None:
    """robots.cc GetKeyAndValueFrom: ``key: value``, or ``key value`` without the colon."""
    line = line.split(b"#", 1)[0].strip()
    key, colon, value = line.partition(b":")
    if not colon:
        blanks = _BLANKS.search(line)
        if blanks is None:
            return None
        key, value = line[: blanks.start()], line[blanks.end() :]
        # Whitespace stands in for the colon only between exactly two words.
        if _BLANKS.search(value):
            return None
    key = key.strip()
    return (key, value.strip()) if key else None


def _directive(key: bytes) -> str:
    # robots.cc matches directive names by case-insensitive prefix, in this order.
    lowered = key.lower()
    if lowered.startswith(_USER_AGENT_KEYS):
        return "user-agent"
    if lowered.startswith(b"allow"):
        return "allow"
    if lowered.startswith(_DISALLOW_KEYS):
        return "disallow"
    if lowered.startswith(_SITEMAP_KEYS):
        return "sitemap"
    if lowered == b"crawl-delay":
        return "crawl-delay"
    return ""


def _add_agent(group: _Group, value: bytes) -> None:
    # robots.cc: "*" alone or followed by whitespace (e.g. "* # all") is the global group.
    if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
        group.agents.add("*")
        return
    token = _UA_TOKEN.match(value)
    if token and token[0]:
        group.agents.add(token[0].decode("ascii").lower())


def _add_sitemap(sitemaps: list[str], value: bytes, robots_url: str) -> None:
    if not value:
        return
    try:
        url = urljoin(robots_url, value.decode("utf-8", "replace"))
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return
    if parts.scheme in ("http", "https") and parts.netloc and url not in sitemaps:
        sitemaps.append(url)


def _escape_pattern(value: bytes) -> str:
    """robots.cc MaybeEscapePattern: %-escape bytes >= 0x80, upper-case escape hex digits."""

    def fix(m: re.Match[bytes]) -> bytes:
        text = m[0]
        return text.upper() if text[0] == 0x25 else b"%%%02X" % text[0]

    return _ESCAPE_OR_HIGH.sub(fix, value).decode("ascii")


def _path_params_query(url: str) -> str:
    """robots.cc GetPathParamsQuery: path, params and query, without scheme, host and
    fragment; always starts with "/". The URL is used as given (the caller escapes it)."""
    before_path = _BEFORE_PATH.match(url)  # always matches, possibly the empty string
    path_start = before_path.end() if before_path else 0
    fragment = url.find("#")
    if path_start == len(url) or 0 <= fragment < path_start:
        return "/"
    path = url[path_start:fragment] if fragment >= 0 else url[path_start:]
    return path if path[0] == "/" else "/" + path
