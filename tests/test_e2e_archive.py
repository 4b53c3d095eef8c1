"""End-to-end: the WARC archive of the shared crawl of the simulated web (``crawled``,
WARC_DIR set), checked by warcio itself and against what the server sent."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator

from govsi.web.urls import canonicalize
from testkit.archive import Target, target_of
from testkit.crawl import run_warc_pack
from testkit.govcrawl import Result
from testkit.simweb.expected import E2E_SETTINGS
from testkit.simweb.server import SimWeb


def records(warc_dir: Path) -> list[Any]:
    got = []
    for path in sorted(warc_dir.glob("*.warc.gz")):
        with open(path, "rb") as f:
            for r in ArchiveIterator(f):
                r.raw = r.raw_stream.read()  # as stored: still in its Content-Encoding
                r.file = path.name
                got.append(r)
    return got


def header(record: Any, name: str) -> str | None:
    value: str | None = record.rec_headers.get_header(name)
    return value


def target(record: Any) -> Target:
    return target_of(header(record, "WARC-Target-URI") or "")


def answered(web: SimWeb, host: str, path: str) -> bool:
    """Whether the server's response to this request could reach the crawler whole."""
    res = web.lookup(host, path)
    timeout = float(E2E_SETTINGS["DOWNLOAD_TIMEOUT"])
    pauses = res.pause * (len(res.body) // res.chunk) if res.chunk else 0.0
    too_big = len(res.body) > int(E2E_SETTINGS["DOWNLOAD_MAXSIZE"])
    return not (res.endless or res.stall >= timeout or pauses >= timeout or too_big)


def test_warcio_finds_every_file_valid_and_would_see_a_broken_one(
    crawled: Result, tmp_path: Path
) -> None:
    files = sorted(crawled.warc_dir.glob("*.warc.gz"))
    assert files and not list(crawled.warc_dir.glob("*.open"))  # all closed
    check = [sys.executable, "-m", "warcio.cli", "check", "-v"]
    ok = subprocess.run([*check, *map(str, files)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # The check can fail: one payload byte changed breaks its digest.
    broken = tmp_path / "broken.warc"
    data = bytearray(b"".join(gzip.decompress(p.read_bytes()) for p in files))
    at = data.index(b"\r\n\r\n<!DOCTYPE") + 10
    data[at] ^= 0x20
    broken.write_bytes(bytes(data))
    bad = subprocess.run([*check, str(broken)], capture_output=True, text=True)
    assert bad.returncode != 0


def test_every_response_served_has_its_record_with_the_bytes_sent(
    crawled: Result, gov_web: SimWeb
) -> None:
    recs = records(crawled.warc_dir)
    by_id = {header(r, "WARC-Record-ID"): r for r in recs}
    responses = [r for r in recs if r.rec_type in ("response", "revisit")]
    got = Counter(target(r) for r in responses)
    served = Counter(
        (h.host, h.target) for h in crawled.hits if answered(gov_web, h.host, h.target)
    )
    assert got == served
    for r in responses:
        host, path = target(r)
        sent = gov_web.lookup(host, path)
        assert r.http_headers.get_statuscode() == str(sent.status), (host, path)
        assert header(r, "WARC-IP-Address") == gov_web.ip_of(host)
        if header(r, "WARC-Truncated"):
            continue  # stopped after the headers: a type the crawl does not keep
        if r.rec_type == "revisit":
            original = by_id[header(r, "WARC-Refers-To")]
            assert original.raw == sent.body, (host, path)
        else:
            assert r.raw == sent.body, (host, path)


def test_a_gzipped_response_is_kept_as_it_came(crawled: Result) -> None:
    (r,) = [
        r for r in records(crawled.warc_dir)
        if r.rec_type == "response" and target(r)[1] == "/gzip"
    ]  # fmt: skip
    assert r.http_headers.get_header("Content-Encoding") == "gzip"
    assert r.raw[:2] == b"\x1f\x8b"
    assert b"najden" in gzip.decompress(r.raw)  # decoded on replay, as pywb does


def test_every_response_has_its_request(crawled: Result) -> None:
    recs = records(crawled.warc_dir)
    responses = {header(r, "WARC-Record-ID") for r in recs if r.rec_type in ("response", "revisit")}
    requests = [r for r in recs if r.rec_type == "request"]
    assert Counter(header(r, "WARC-Concurrent-To") for r in requests) == Counter(responses)
    for r in requests:
        assert r.http_headers.get_header("User-Agent", "").startswith("govsi-crawler")
        assert r.http_headers.get_header("Host")


def test_identical_payloads_are_revisits_of_the_first_capture(crawled: Result) -> None:
    recs = records(crawled.warc_dir)
    full = [
        header(r, "WARC-Payload-Digest") for r in recs
        if r.rec_type == "response" and r.raw and not header(r, "WARC-Truncated")
    ]  # fmt: skip
    assert len(full) == len(set(full)), "a payload written whole twice"
    revisits = [r for r in recs if r.rec_type == "revisit" and header(r, "WARC-Refers-To")]
    assert revisits
    by_id = {header(r, "WARC-Record-ID"): r for r in recs}
    for r in revisits:
        original = by_id[header(r, "WARC-Refers-To")]
        assert header(original, "WARC-Payload-Digest") == header(r, "WARC-Payload-Digest")
        assert header(r, "WARC-Refers-To-Target-URI") == header(original, "WARC-Target-URI")
        assert header(r, "WARC-Refers-To-Date") == header(original, "WARC-Date")
    stats = crawled.run.stats
    assert stats["govsi/warc/revisit"] == len(revisits)
    assert stats["govsi/warc/revisit_bytes_saved"] == sum(
        len(by_id[header(r, "WARC-Refers-To")].raw) for r in revisits
    )


def test_each_file_begins_with_its_warcinfo(crawled: Result) -> None:
    (crawl_id,) = crawled.rows("SELECT value FROM crawl_meta WHERE key = 'crawl_id'")[0]
    recs = records(crawled.warc_dir)
    for name in {r.file for r in recs}:
        mine = [r for r in recs if r.file == name]
        info = mine[0]
        assert info.rec_type == "warcinfo"
        fields = info.raw.decode()
        assert f"isPartOf: {crawl_id}" in fields
        assert "operator: e2e tests" in fields and "robots: obey" in fields
        assert "http-header-user-agent: govsi-crawler" in fields
        info_id = header(info, "WARC-Record-ID")
        assert all(header(r, "WARC-Warcinfo-ID") == info_id for r in mine[1:])


def test_pack_indexes_the_files_and_builds_a_valid_wacz_of_the_html_pages(
    crawled: Result, tmp_path: Path
) -> None:
    out = tmp_path / "gov.wacz"
    done = run_warc_pack(crawled.db_url, crawled.warc_dir, "-o", str(out), "--title", "gov.si")
    assert done.returncode == 0, done.stderr[-3000:]
    valid = subprocess.run(
        [sys.executable, "-m", "wacz", "validate", "-f", str(out)], capture_output=True, text=True
    )
    assert valid.returncode == 0 and "is valid" in valid.stdout, valid.stdout + valid.stderr
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        lines = z.read("pages/pages.jsonl").decode().splitlines()
        cdx = gzip.decompress(z.read("indexes/index.cdx.gz")).decode()
    assert {f"archive/{p.name}" for p in crawled.warc_dir.glob("*.warc.gz")} <= names
    assert json.loads(lines[0])["format"] == "json-pages-1.0"
    pages = {e["url"]: e for e in map(json.loads, lines[1:])}
    html = crawled.rows(
        "SELECT url, html_content FROM page WHERE page_type_code = 'HTML' "
        "AND http_status_code = 200"
    )
    assert set(pages) == {url for url, _ in html}
    assert pages["http://www.gov.si/"]["title"] == "GOV.SI"
    assert all(e["ts"].endswith("Z") for e in pages.values())
    # Every response and revisit is in the index the package carries, and beside the files.
    responses = [r for r in records(crawled.warc_dir) if r.rec_type in ("response", "revisit")]
    assert len([line for line in cdx.splitlines() if line.strip()]) >= len(responses)
    assert (crawled.warc_dir / "index.cdxj").read_text().count("\n") >= len(responses)


def test_crawldb_finds_each_pages_capture_by_file_offset_and_id(crawled: Result) -> None:
    rows = crawled.rows(
        "SELECT p.url, p.page_type_code, c.warc_file, c.warc_offset, c.warc_length, "
        "c.record_id, c.record_type FROM page p JOIN warc_capture c ON c.page_id = p.id"
    )
    captured = {url for url, *_ in rows}
    fetched = {
        url for url, kind in crawled.rows("SELECT url, page_type_code FROM page")
        if kind in ("HTML", "BINARY", "DUPLICATE")
    }  # fmt: skip
    assert fetched and fetched <= captured
    assert len({rid for *_, rid, _ in rows}) == len(rows)
    for url, _kind, name, offset, length, rid, rtype in rows:
        with open(crawled.warc_dir / name, "rb") as f:
            f.seek(offset)
            (record,) = list(ArchiveIterator(io.BytesIO(f.read(length))))
        assert record.rec_headers.get_header("WARC-Record-ID") == rid
        assert record.rec_type == rtype
        # The record is of the URL as requested; crawldb keeps its canonical form.
        target = record.rec_headers.get_header("WARC-Target-URI")
        assert canonicalize(target) == url


def test_the_run_records_its_archive_totals_for_the_report(crawled: Result) -> None:
    figures = dict(
        crawled.rows("SELECT name, value FROM crawl_limit WHERE name LIKE 'govsi/warc/%'")
    )
    files = sorted(crawled.warc_dir.glob("*.warc.gz"))
    recs = records(crawled.warc_dir)
    assert figures["govsi/warc/files"] == len(files)
    assert figures["govsi/warc/bytes"] == sum(p.stat().st_size for p in files)
    for kind in ("request", "response", "revisit"):
        assert figures[f"govsi/warc/{kind}"] == sum(1 for r in recs if r.rec_type == kind)
    assert figures["govsi/warc/revisit_bytes_saved"] > 0
