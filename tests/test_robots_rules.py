"""govsi.robots.rules against Google's robots.txt test suite, our Crawl-delay/Sitemap cases and
our own edge cases. The data files are copies of the shared conformance set (see
data/robots_google_protego.txt for their origin and for how Protego fares on them)."""

from __future__ import annotations

import json
import logging
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from govsi.robots.matching import MAX_CHECK_WORK, MAX_PATH_CHARS
from govsi.robots.rules import MAX_BODY_BYTES, RobotsRules, parse, rules_for_response
from tests.support.growth import LINEAR_BOUND, growth

DATA = Path(__file__).parent / "data"
ROBOTS_URL = "https://www.gov.si/robots.txt"
UA = "govsi-crawler"


def _load(name: str) -> list[dict[str, Any]]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _is_decision_case(case: dict[str, Any]) -> bool:
    # The excluded cases probe the C++ API (empty URL or user agent) or pass a crawler
    # name with a space, which our API reduces to its first word by design.
    agent = case["useragent"]
    return bool(agent) and " " not in agent and bool(case["url"])


GOOGLE_CASES = [c for c in _load("robots_google.json") if _is_decision_case(c)]
EXTRA_CASES = _load("robots_extra.json")


def test_google_case_selection_is_complete() -> None:
    assert len(_load("robots_google.json")) == 157
    assert len(GOOGLE_CASES) == 152


def test_extra_case_count() -> None:
    assert len(EXTRA_CASES) == 29


@pytest.mark.parametrize("case", GOOGLE_CASES, ids=[c["name"] for c in GOOGLE_CASES])
def test_google_conformance(case: dict[str, Any]) -> None:
    rules = parse(case["robotstxt"].encode("utf-8"), "http://foo.bar/robots.txt")
    assert rules.allowed(case["url"], case["useragent"]) is case["allowed"], case.get("note")


@pytest.mark.parametrize("case", EXTRA_CASES, ids=[c["name"] for c in EXTRA_CASES])
def test_extra_conformance(case: dict[str, Any]) -> None:
    rules = parse(case["robotstxt"].encode("utf-8"), case["robots_url"])
    assert rules.crawl_delay(case["useragent"]) == case["crawl_delay"], case.get("note")
    assert rules.sitemaps == case["sitemaps"], case.get("note")


# --- fetch outcomes (RFC 9309 section 2.3.1) -------------------------------------------

BODY = b"User-agent: *\nDisallow: /private/\n"


@pytest.mark.parametrize(
    ("status", "url", "expected"),
    [
        pytest.param(200, "https://www.gov.si/private/x", False, id="200-parsed-disallow"),
        pytest.param(200, "https://www.gov.si/public", True, id="200-parsed-allow"),
        pytest.param(204, "https://www.gov.si/private/x", False, id="204-parsed"),
        pytest.param(301, "https://www.gov.si/private/x", True, id="3xx-unavailable"),
        pytest.param(403, "https://www.gov.si/private/x", True, id="403-allow-all"),
        pytest.param(404, "https://www.gov.si/private/x", True, id="404-allow-all"),
        pytest.param(410, "https://www.gov.si/private/x", True, id="410-allow-all"),
        pytest.param(429, "https://www.gov.si/private/x", True, id="429-rfc-unavailable"),
        pytest.param(500, "https://www.gov.si/public", False, id="500-disallow-all"),
        pytest.param(503, "https://www.gov.si/public", False, id="503-disallow-all"),
        pytest.param(None, "https://www.gov.si/public", False, id="unreachable-disallow-all"),
    ],
)
def test_rules_for_response(status: int | None, url: str, expected: bool) -> None:
    assert rules_for_response(status, BODY, ROBOTS_URL).allowed(url, UA) is expected


@pytest.mark.parametrize(
    ("rules", "url", "expected"),
    [
        pytest.param(RobotsRules.allow_all(), "https://h.gov.si/x", True, id="allow-all"),
        pytest.param(RobotsRules.disallow_all(), "https://h.gov.si/", False, id="disallow-all"),
        pytest.param(
            RobotsRules.disallow_all(), "https://h.gov.si/robots.txt", True, id="robots-txt"
        ),
        pytest.param(
            parse(b"User-agent: *\nDisallow: /\n", ROBOTS_URL),
            "https://h.gov.si/robots.txt",
            True,
            id="robots-txt-implicitly-allowed",
        ),
    ],
)
def test_fixed_rules(rules: RobotsRules, url: str, expected: bool) -> None:
    assert rules.allowed(url, UA) is expected
    assert rules.crawl_delay(UA) is None
    assert rules.sitemaps == []


# --- body handling: size limit, BOM, line ends, long lines -----------------------------


def _padded(rule_before: str, pad_bytes: int, rule_after: str) -> bytes:
    pad = ("# " + "x" * 97 + "\n") * (pad_bytes // 100)
    return f"User-agent: *\n{rule_before}\n{pad}{rule_after}\n".encode()


@pytest.mark.parametrize(
    ("body", "url", "expected"),
    [
        pytest.param(
            _padded("Disallow: /early/", MAX_BODY_BYTES, "Disallow: /late/"),
            "/early/x",
            False,
            id="rule-before-500KiB-applies",
        ),
        pytest.param(
            _padded("Disallow: /early/", MAX_BODY_BYTES, "Disallow: /late/"),
            "/late/x",
            True,
            id="rule-after-500KiB-ignored",
        ),
        pytest.param(
            _padded("", MAX_BODY_BYTES - 1000, "Disallow: /late/"),
            "/late/x",
            False,
            id="rule-just-inside-500KiB-applies",
        ),
        pytest.param(
            b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n", "/x", False, id="bom-at-start-skipped"
        ),
        pytest.param(
            b"\xef\xbbUser-agent: *\nDisallow: /x\n", "/x", False, id="partial-bom-skipped"
        ),
        pytest.param(
            b"User-agent: *\n\xef\xbb\xbfDisallow: /x\n", "/x", True, id="bom-mid-file-not-skipped"
        ),
        pytest.param(
            b"\xef\xbb\xbf\xef\xbb\xbfUser-agent: *\nDisallow: /x\n",
            "/x",
            True,
            id="second-bom-not-skipped",
        ),
        pytest.param(b"User-agent: *\r\nDisallow: /x\r\nAllow: /x/y\r\n", "/x/z", False, id="crlf"),
        pytest.param(
            b"User-agent: *\r\nDisallow: /x\r\nAllow: /x/y\r\n", "/x/y", True, id="crlf-2"
        ),
        pytest.param(b"User-agent: *\rDisallow: /x\r", "/x", False, id="cr-only"),
        pytest.param(b"User-agent: *\n\rDisallow: /x", "/x", False, id="lf-cr-no-final-eol"),
        pytest.param(
            b"User-agent: *\nDisallow: /" + b"a" * 20000 + b"\n",
            "/" + "a" * 16653,
            False,
            id="long-line-cut-at-16663-bytes",
        ),
        pytest.param(
            b"User-agent: *\nDisallow: /" + b"a" * 20000 + b"\n",
            "/" + "a" * 16651,
            True,
            id="long-line-cut-not-shorter",
        ),
    ],
)
def test_body_handling(body: bytes, url: str, expected: bool) -> None:
    assert parse(body, ROBOTS_URL).allowed(url, UA) is expected


def test_str_body_with_bom() -> None:
    rules = parse("\ufeffUser-agent: *\nDisallow: /x\n", ROBOTS_URL)
    assert not rules.allowed("/x", UA)


# --- groups and user agents ------------------------------------------------------------

GROUPS = b"""User-agent: *
Disallow: /
Crawl-delay: 10

User-agent: govsi-crawler
Disallow: /private/
Crawl-delay: 2.5
"""


@pytest.mark.parametrize(
    ("agent", "url", "expected", "delay"),
    [
        pytest.param("govsi-crawler", "/public", True, 2.5, id="own-group-beats-star"),
        pytest.param("govsi-crawler", "/private/a", False, 2.5, id="own-group-rule"),
        pytest.param("GOVSI-Crawler", "/public", True, 2.5, id="token-case-insensitive"),
        pytest.param(
            "govsi-crawler/0.1 (+https://x)", "/public", True, 2.5, id="full-ua-reduced-to-token"
        ),
        pytest.param("govsi-crawler (bot)", "/public", True, 2.5, id="ua-cut-at-space"),
        pytest.param("otherbot", "/public", False, 10.0, id="other-agent-gets-star"),
        pytest.param("govsi", "/public", False, 10.0, id="no-prefix-match-of-token"),
    ],
)
def test_group_selection(agent: str, url: str, expected: bool, delay: float) -> None:
    rules = parse(GROUPS, ROBOTS_URL)
    assert rules.allowed(url, agent) is expected
    assert rules.crawl_delay(agent) == delay


@pytest.mark.parametrize(
    ("body", "url", "expected"),
    [
        pytest.param(b"useragent: govsi-crawler\ndisallow: /x\n", "/x", False, id="useragent"),
        pytest.param(b"user agent: govsi-crawler\ndisallow: /x\n", "/x", False, id="user-agent"),
        pytest.param(b"User-agent: *\nDissallow: /x\n", "/x", False, id="dissallow"),
        pytest.param(b"User-agent: *\nDisalow: /x\n", "/x", False, id="disalow"),
        pytest.param(b"User-agent: *\nDisallow /x\n", "/x", False, id="missing-colon"),
        pytest.param(b"User-agent: *\nDisallow /x /y\n", "/x", True, id="missing-colon-3-words"),
        pytest.param(b"User-agent: * all robots\nDisallow: /x\n", "/x", False, id="star-and-text"),
        pytest.param(
            b"User-agent: govsi-crawler/2.0\nDisallow: /x\n", "/x", False, id="group-token-cut"
        ),
        pytest.param(b"Disallow: /x\nUser-agent: *\n", "/x", True, id="rule-before-any-group"),
        pytest.param(
            b"User-agent: govsi-crawler\nUser-agent: *\nDisallow: /x\n",
            "/x",
            False,
            id="shared-group",
        ),
        pytest.param(
            b"User-agent: govsi-crawler\nFoo: bar\nSitemap: /s.xml\nUser-agent: *\nDisallow: /x\n",
            "/x",
            False,
            id="unknown-and-sitemap-keep-group-open",
        ),
        pytest.param(
            b"User-agent: govsi-crawler\nCrawl-delay: 1\nUser-agent: *\nDisallow: /x\n",
            "/x",
            True,
            id="crawl-delay-closes-agent-list",
        ),
        pytest.param(
            b"User-agent: govsi-crawler\nAllow: /x/y\n\nUser-agent: *\nDisallow: /\n"
            b"User-agent: govsi-crawler\nDisallow: /x\n",
            "/x/y",
            True,
            id="own-groups-merged",
        ),
        pytest.param(
            b"User-agent: govsi-crawler\n\nUser-agent: *\nDisallow: /\n",
            "/x",
            False,
            id="blank-line-does-not-end-agent-list",
        ),
        pytest.param(
            b"User-agent: *\nDisallow: /\nUser-agent: govsi-crawler\n",
            "/x",
            True,
            id="empty-own-group-allows",
        ),
    ],
)
def test_google_leniency_and_grouping(body: bytes, url: str, expected: bool) -> None:
    assert parse(body, ROBOTS_URL).allowed(url, UA) is expected


# --- matching --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "url", "expected"),
    [
        pytest.param("Disallow: /a%2fb", "https://h/a%2Fb", False, id="escape-hex-upper-cased"),
        pytest.param("Disallow: /\xe9t\xe9", "https://h/%E9t%E9", False, id="latin1-byte-escaped"),
        pytest.param("Disallow: /*.pdf$", "https://h/a/b.pdf", False, id="star-dollar"),
        pytest.param("Disallow: /*.pdf$", "https://h/a/b.pdf?x=1", True, id="dollar-anchors"),
        pytest.param("Disallow: /a$b", "https://h/a$b/c", False, id="inner-dollar-literal"),
        pytest.param("Disallow: /*?", "https://h/p?q=1", False, id="query-matched"),
        pytest.param("Disallow: /p", "https://h/x#/p", True, id="fragment-ignored"),
        pytest.param("Disallow: /p", "/p/q", False, id="path-only-url"),
        pytest.param("Disallow: /p;", "http://h/p;v", False, id="params-matched"),
        pytest.param("Disallow:", "https://h/x", True, id="empty-disallow"),
        pytest.param(
            "Disallow: /*a*a*a*a*a*a*a*a*a*a*a*b",
            "https://h/" + "a" * 5000,
            True,
            id="many-stars-no-blowup",
        ),
    ],
)
def test_matching(rule: str, url: str, expected: bool) -> None:
    body = b"User-agent: *\n" + rule.encode("latin-1") + b"\n"
    assert parse(body, ROBOTS_URL).allowed(url, UA) is expected


# --- Crawl-delay and Sitemap -----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("10", 10.0, id="integer"),
        pytest.param("2.5", 2.5, id="fraction"),
        pytest.param(".5", 0.5, id="leading-dot"),
        pytest.param("abc", None, id="word"),
        pytest.param("-1", None, id="negative"),
        pytest.param("+1", None, id="plus-sign"),
        pytest.param("1e3", None, id="exponent"),
        pytest.param("inf", None, id="inf"),
        pytest.param("nan", None, id="nan"),
        pytest.param("1_0", None, id="underscore"),
        pytest.param("", None, id="empty"),
    ],
)
def test_crawl_delay_values(value: str, expected: float | None) -> None:
    rules = parse(f"User-agent: *\nCrawl-delay: {value}\n", ROBOTS_URL)
    assert rules.crawl_delay(UA) == expected


def test_first_valid_crawl_delay_wins() -> None:
    rules = parse("User-agent: *\nCrawl-delay: x\nCrawl-delay: 3\nCrawl-delay: 7\n", ROBOTS_URL)
    assert rules.crawl_delay(UA) == 3.0


@pytest.mark.parametrize(
    ("lines", "robots_url", "expected"),
    [
        pytest.param(
            ["/sitemap.xml"], ROBOTS_URL, ["https://www.gov.si/sitemap.xml"], id="absolute-path"
        ),
        pytest.param(
            ["maps/s.xml"],
            "https://www.gov.si/sub/robots.txt",
            ["https://www.gov.si/sub/maps/s.xml"],
            id="relative-path",
        ),
        pytest.param(
            ["//cdn.gov.si/s.xml"], ROBOTS_URL, ["https://cdn.gov.si/s.xml"], id="scheme-relative"
        ),
        pytest.param(["ftp://www.gov.si/s.xml"], ROBOTS_URL, [], id="ftp-ignored"),
        pytest.param(["mailto:a@gov.si"], ROBOTS_URL, [], id="mailto-ignored"),
        pytest.param(["javascript:alert(1)"], ROBOTS_URL, [], id="javascript-ignored"),
        pytest.param(["http://[::1/s.xml"], ROBOTS_URL, [], id="broken-url-ignored"),
        pytest.param(
            ["/a.xml", "https://www.gov.si/a.xml", "/b.xml", "/a.xml"],
            ROBOTS_URL,
            ["https://www.gov.si/a.xml", "https://www.gov.si/b.xml"],
            id="deduplicated-in-order",
        ),
        pytest.param(
            ["HTTPS://www.gov.si/S.xml"],
            ROBOTS_URL,
            ["https://www.gov.si/S.xml"],
            id="scheme-lowered",
        ),
    ],
)
def test_sitemaps(lines: list[str], robots_url: str, expected: list[str]) -> None:
    body = "".join(f"Sitemap: {line}\n" for line in lines)
    assert parse(body, robots_url).sitemaps == expected


def test_sitemaps_property_is_a_copy() -> None:
    rules = parse("Sitemap: /s.xml\n", ROBOTS_URL)
    rules.sitemaps.clear()
    assert rules.sitemaps == ["https://www.gov.si/s.xml"]


# --- speed -----------------------------------------------------------------------------

REALISTIC = "\n".join(
    [
        "User-agent: *",
        *[f"Disallow: /{d}/" for d in ("admin", "cgi-bin", "tmp", "private", "search", "login")],
        *[f"Disallow: /*{s}" for s in ("?print=", "&sort=", "?sessionid=", ".php$", "/feed/")],
        *[f"Allow: /{d}/public/" for d in ("admin", "tmp", "private")],
        "Crawl-delay: 5",
        "User-agent: govsi-crawler",
        *[f"Disallow: /{d}/" for d in ("admin", "cgi-bin", "tmp", "iskanje", "prijava", "en/x")],
        *[f"Disallow: /*{s}" for s in ("?print=", "&sort=", "?sessionid=", ".php$", "/feed/")],
        *[f"Disallow: /{d}/*.pdf$" for d in ("arhiv", "dokumenti", "novice")],
        *[f"Allow: /{d}/public/" for d in ("admin", "tmp", "arhiv")],
        "Allow: /novice/*/index.html",
        "Disallow: /*?*&*&*&",
        "Disallow: /api/",
        "Crawl-delay: 2",
        "Sitemap: /sitemap.xml",
    ]
)


def test_allowed_is_fast() -> None:
    rules = parse(REALISTIC, ROBOTS_URL)
    urls = [
        "https://www.gov.si/novice/2024-01-01-seja-vlade/",
        "https://www.gov.si/drzavni-organi/ministrstva/ministrstvo-za-finance/?sort=x&a=1",
        "https://www.gov.si/admin/public/a.html",
        "https://www.gov.si/arhiv/2019/porocilo.pdf",
        "https://www.gov.si/teme/?print=1",
    ]
    calls = 20_000
    start = time.perf_counter()
    for i in range(calls):
        rules.allowed(urls[i % len(urls)], UA)
    per_call = (time.perf_counter() - start) / calls
    # Generous bound (about 1 us on a laptop); it catches a per-call re-parse or re-compile.
    assert per_call < 50e-6


# -- hostile robots.txt files stay cheap ----------------------------------------------------
def _wildcards(n: int) -> RobotsRules:
    body = "User-agent: *\n" + "".join(f"Disallow: /a*b*c{i}*d\n" for i in range(n))
    return parse(body, "https://x.gov.si/robots.txt")


def test_a_path_is_checked_only_against_the_rules_whose_prefix_it_has(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import govsi.robots.matching as module

    checked: list[str] = []
    real = module._matches

    def counted(rule: Any, path: str) -> bool:
        checked.append(path)
        return real(rule, path)

    monkeypatch.setattr(module, "_matches", counted)
    # As many rules as one check may try on this path (MAX_CHECK_WORK); see the tests below.
    for n in (1_000, 2_000):
        rules = _wildcards(n)
        checked.clear()
        assert rules.allowed("https://x.gov.si/zemljevid", UA)
        assert checked == []  # no rule starts with "/z"
        assert rules.allowed("https://x.gov.si/" + "a" * 300 + "b", UA)
        assert len(checked) == n  # every rule applies, each checked once
    rules = _wildcards(3)
    assert not rules.allowed("https://x.gov.si/a/b/c2/d", UA)


def test_a_long_wildcard_pattern_costs_linear_time() -> None:
    # robots.cc's own worst case: a pattern of many "*a" pieces against a path of a's.
    def rules(n: int) -> tuple[RobotsRules, str]:
        body = "User-agent: *\nDisallow: /" + "*a" * n + "*b\n"
        return parse(body, "https://x.gov.si/robots.txt"), "https://x.gov.si/" + "a" * (4 * n)

    def check(made: tuple[RobotsRules, str]) -> bool:
        return made[0].allowed(made[1], UA)

    assert growth(check, rules, 2000) < LINEAR_BOUND
    assert check(rules(10)) is True


def _hostile(n: int) -> RobotsRules:
    # The robots.txt: every rule shares the prefix "/a" and has two wildcards.
    return parse("User-agent: *\n" + "".join(f"Disallow: /a*{i}*b\n" for i in range(n)),
                 "https://x.gov.si/robots.txt")  # fmt: skip


def test_a_path_over_the_limit_is_disallowed_unchecked(caplog: pytest.LogCaptureFixture) -> None:
    rules = parse("User-agent: *\nAllow: /\n", "https://x.gov.si/robots.txt")
    at_limit = "https://x.gov.si/" + "a" * (MAX_PATH_CHARS - 1)
    assert rules.allowed(at_limit, UA)
    with caplog.at_level(logging.WARNING, logger="govsi.robots"):
        assert not rules.allowed(at_limit + "a", UA)
        assert not rules.allowed(at_limit + "aa", UA)
    assert rules.refusals == {"path_too_long": 2}
    assert len(caplog.records) == 1  # one line per robots.txt, the rest counted
    assert "https://x.gov.si/robots.txt" in caplog.text
    assert f"over {MAX_PATH_CHARS}" in caplog.text
    assert rules.allowed("https://x.gov.si/robots.txt?" + "a" * MAX_PATH_CHARS, UA) is False
    assert rules.allowed("https://x.gov.si/robots.txt", UA)


def test_a_check_stops_at_the_work_limit_and_fails_closed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import govsi.robots.matching as module

    calls: list[str] = []
    real = module._matches

    def counted(rule: Any, path: str) -> bool:
        calls.append(path)
        return real(rule, path)

    monkeypatch.setattr(module, "_matches", counted)
    rules = _hostile(24_000)  # as many as fit in MAX_BODY_BYTES
    long_path = "https://x.gov.si/" + "a" * 2_000 + "b"  # no rule matches: allowed if finished
    with caplog.at_level(logging.WARNING, logger="govsi.robots"):
        assert not rules.allowed(long_path, UA)
        # Each wildcard rule tried costs at least its path length: the work is bounded.
        assert 0 < len(calls) <= MAX_CHECK_WORK // 2_000
        calls.clear()
        # Later checks whose bound is over the limit fail closed without trying a rule.
        assert not rules.allowed("https://x.gov.si/a", UA)
        assert not rules.allowed(long_path + "c", UA)
        assert calls == []
    assert rules.refusals == {"check_too_costly": 3}
    assert len(caplog.records) == 1 and "fail closed" in caplog.text
    # Paths under another prefix are decided as before.
    assert rules.allowed("https://x.gov.si/b/" + "a" * 1_000, UA)


def test_after_an_overrun_a_cheap_check_is_still_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    import govsi.robots.matching as module

    monkeypatch.setattr(module, "MAX_CHECK_WORK", 50_000)
    body = "User-agent: *\nDisallow: /x*y\n" + "".join(f"Disallow: /a*{i}*b\n" for i in range(50))
    rules = parse(body, "https://x.gov.si/robots.txt")
    assert not rules.allowed("https://x.gov.si/a" + "c" * 500, UA)  # 50 rules x 500: over
    assert rules.allowed("https://x.gov.si/a", UA)  # 50 rules x 2: under, checked
    assert not rules.allowed("https://x.gov.si/a7b", UA)
    assert not rules.allowed("https://x.gov.si/x" + "c" * 500 + "y", UA)
    assert rules.refusals == {"check_too_costly": 1}


def test_a_rule_of_many_pieces_is_charged_no_more_than_the_path_allows() -> None:
    # 30 rules of 8 000 pieces each: a short path fails each at its first piece.
    lines = "".join("Disallow: /" + "*a" * 8_000 + f"*{i}b\n" for i in range(30))
    rules = parse("User-agent: *\n" + lines, "https://x.gov.si/robots.txt")
    assert rules.allowed("https://x.gov.si/", UA)
    assert rules.allowed("https://x.gov.si/x/y", UA)
    assert rules.allowed("https://x.gov.si/" + "a" * 100 + "7b", UA)  # too few a's
    assert rules.refusals == {}


# -- the matcher against a plain reading of the rules ----------------------------------------


def _reference(rules: list[tuple[bool, str]], path: str) -> bool:
    """robots.cc's decision, spelled out: every rule as a regex, the longest match wins,
    Allow on a tie; an Allow ending in /index.htm... also allows its directory."""
    best: tuple[int, bool] = (0, True)  # (priority, is_allow); priority 0 decides nothing
    for is_allow, pattern in rules:
        candidates = [pattern]
        slash = pattern.rfind("/")
        if is_allow and slash >= 0 and pattern.startswith("/index.htm", slash):
            candidates.append(pattern[: slash + 1] + "$")
        for glob in candidates:
            anchored = glob.endswith("$")
            body = glob[:-1] if anchored else glob
            regex = ".*".join(map(re.escape, body.split("*"))) + (r"\Z" if anchored else "")
            if glob and re.match(regex, path, re.DOTALL) and (len(glob), is_allow) > best:
                best = (len(glob), is_allow)
    return best[1]


def _random_cases(seed: int, count: int) -> list[tuple[list[tuple[bool, str]], str]]:
    rng = random.Random(seed)
    alphabet = "/ab*$?=.x"

    def text(low: int, high: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))

    cases = []
    for _ in range(count):
        rules = [(rng.random() < 0.4, "/" + text(0, 7)) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.1:
            rules.append((True, "/" + text(0, 3) + "/index.html"))
        path = "/" + text(0, 12)
        cases.append((rules, path))
    return cases


@pytest.mark.parametrize("seed", range(4))
def test_decisions_agree_with_a_plain_reading_of_the_rules(seed: int) -> None:
    for rules, path in _random_cases(seed, 2_000):
        body = "User-agent: *\n" + "".join(
            f"{'Allow' if allow else 'Disallow'}: {pattern}\n" for allow, pattern in rules
        )
        decided = parse(body, ROBOTS_URL).allowed("https://www.gov.si" + path, UA)
        assert decided is _reference(rules, path), (rules, path)


def test_a_body_over_the_limit_is_cut_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    body = _padded("Disallow: /early/", MAX_BODY_BYTES, "Disallow: /late/")
    with caplog.at_level(logging.WARNING, logger="govsi.robots.rules"):
        rules = parse(body, ROBOTS_URL)
        assert rules.allowed("https://www.gov.si/late/x", UA)
        assert f"{ROBOTS_URL} is {len(body)} bytes: only the first {MAX_BODY_BYTES}" in (
            caplog.text
        )
        caplog.clear()
        parse(body[:MAX_BODY_BYTES], ROBOTS_URL)
        assert not caplog.records


def test_refusal_says_why_a_url_may_not_be_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    import govsi.robots.matching as module

    monkeypatch.setattr(module, "MAX_CHECK_WORK", 50_000)
    body = "User-agent: *\nDisallow: /zasebno\n" + "".join(
        f"Disallow: /a*{i}*b\n" for i in range(50)
    )
    rules = parse(body, "https://x.gov.si/robots.txt")
    cases = [
        ("https://x.gov.si/javno", None),
        ("https://x.gov.si/zasebno/x", "forbidden"),
        ("https://x.gov.si/a7b", "forbidden"),
        ("https://x.gov.si/a" + "c" * 500, "check_too_costly"),
        ("https://x.gov.si/" + "a" * MAX_PATH_CHARS, "path_too_long"),
        ("https://x.gov.si/robots.txt", None),
    ]
    for url, why in cases:
        assert rules.refusal(url, UA) == why, url
        assert rules.allowed(url, UA) is (why is None)
