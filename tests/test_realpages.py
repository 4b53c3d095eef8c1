"""The corpus of real gov.si pages (tests/data/realpages): it loads, is what its README
says, and the simulated web serves its pages as stored."""

from __future__ import annotations

import hashlib
import http.client
import ssl
from collections import Counter
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from testkit import realpages
from testkit.simweb import realweb


@pytest.fixture(scope="module")
def web() -> Iterator[realweb.RealWeb]:
    w = realweb.build().start()
    yield w
    w.stop()


def get(web: realweb.RealWeb, url: str) -> tuple[int, dict[str, str], bytes]:
    """A request to the simulated web as a client that resolved the host there would make."""
    s = urlsplit(url)
    host = s.hostname or ""
    ip = web.hosts_map()[host]
    if s.scheme == "https":
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            ip, 443, context=ctx, timeout=10
        )
    else:
        conn = http.client.HTTPConnection(ip, 80, timeout=10)
    try:
        conn.putrequest("GET", realweb.target_of(url), skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def test_corpus_loads_with_enough_pages_and_sites() -> None:
    pages = list(realpages.pages())
    assert len(pages) >= 200
    sites = Counter(p.site for p in pages)
    assert len(sites) >= 3 and set(sites) <= set(realpages.SITES)
    assert len({p.url for p in pages}) == len(pages)
    for p in pages:
        # Byte-faithful to the source file, whose SHA-1 the corpus recorded.
        assert hashlib.sha1(p.body).hexdigest() == p.sha1
        assert p.body.lstrip()[:1] == b"<"


def test_split_is_the_fixed_rule_and_holds_out_about_30_percent() -> None:
    pages = list(realpages.pages())
    assert all(p.part == realpages.part_of(p.url) for p in pages)
    held = sum(p.part == "heldout" for p in pages) / len(pages)
    assert 0.22 < held < 0.38
    for site in realpages.SITES:
        parts = {p.part for p in realpages.pages(site=site)}
        assert parts == {"tuning", "heldout"}, site
    assert [p.url for p in realpages.pages("heldout")] == [
        p.url for p in pages if p.part == "heldout"
    ]


def test_every_expected_text_belongs_to_a_page_of_both_parts_and_all_sites() -> None:
    texts = realpages.expected_texts()
    keys = {p.key: p for p in realpages.pages()}
    assert len(texts) >= 15
    assert set(texts) <= set(keys)
    assert {keys[k].part for k in texts} == {"tuning", "heldout"}
    assert {keys[k].site for k in texts} == set(realpages.SITES)
    for key, text in texts.items():
        assert text.strip() and "<" not in text, key
    assert len(list(realpages.with_expected())) == len(texts)


def test_web_serves_pages_byte_identically(web: realweb.RealWeb) -> None:
    sample = [next(realpages.pages(site=site)) for site in realpages.SITES]
    sample += [realpages.page(u) for u in realweb.SEEDS]
    for p in sample:
        status, headers, body = get(web, p.url)
        assert status == 200, p.url
        assert body == p.body, p.url
        assert headers["Content-Type"] == "text/html; charset=utf-8"


def test_web_answers_robots_redirects_and_missing_pages(web: realweb.RealWeb) -> None:
    status, _, body = get(web, "http://evem.gov.si/robots.txt")
    assert status == 200 and b"Disallow:\n" in body
    status, headers, _ = get(web, "http://podatki.gov.si/dataset/ni-ga")
    assert status == 301 and headers["Location"] == "https://podatki.gov.si/dataset/ni-ga"
    assert get(web, "https://podatki.gov.si/dataset/ni-ga")[0] == 404
    assert get(web, "http://www.gov.si/")[0] == 404  # linked from the pages, not in the corpus
    # A query string matches however it is spelled, as the sites' servers read it.
    listing = next(p for p in realpages.pages() if "all_podrocje=" in p.url and "+" in p.url)
    respelled = listing.url.replace("+", "%20")
    assert get(web, respelled)[2] == listing.body


def test_every_page_is_reachable_at_its_own_address(web: realweb.RealWeb) -> None:
    # No page shadows another: each URL's target finds that page's bytes.
    for p in realpages.pages():
        host = urlsplit(p.url).hostname or ""
        assert web.lookup(host, realweb.target_of(p.url)).body == p.body, p.url
