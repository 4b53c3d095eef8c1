"""``scrapy changes`` as a user runs it (a subprocess) on a hand-made crawldb
(``tests.test_changes_query.fill``): the text output newest first with each change's time,
kind, URL, title and excerpts; ``--json`` one list with the promised keys; the filters
(search words included) narrowing it; the scan's bound said on stderr; hostile strings
escaped on the terminal; bad options a clear error and a non-zero exit, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import Engine, insert

from govsi.store import database, schema
from testkit.crawl import ROOT, project_env
from tests.test_changes_query import CHANGES, NOW, fill

SINCE = ["--since", "2026-11-01"]


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = f"sqlite:///{tmp_path_factory.mktemp('changes') / 'crawldb.sqlite3'}"
    engine: Engine = database.make_engine(db)
    database.migrate(engine)
    fill(engine)
    with engine.begin() as conn:  # a hostile page, changed after all the others
        url = "https://a.gov.si/\x1b]52;c;QQ==\x07"
        page = {"id": 99, "site_id": 1, "page_type_code": "HTML", "url": url}
        conn.execute(insert(schema.PAGE), [page])
        text = {"page_id": 99, "kind": "HTML", "status": "ok", "text": "x \x1b[2J\u202e zlo",
                "extracted_at": NOW}  # fmt: skip
        conn.execute(insert(schema.PAGE_TEXT), [text])
        change = {"id": 99, "page_id": 99, "kind": "changed", "visit_time": NOW,
                  "title": "T\x1b[31m\u202eX", "text_before": "x"}  # fmt: skip
        conn.execute(insert(schema.PAGE_CHANGE), [change])
    engine.dispose()
    return db


def changes(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "scrapy", "changes", "-s", f"CRAWLDB_URL={db_url}", *args]
    return subprocess.run(cmd, cwd=ROOT, env=project_env(), capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def test_text_output_newest_first_with_excerpts(db_url: str) -> None:
    run = changes(db_url, *SINCE)
    assert run.returncode == 0, run.stderr
    blocks = run.stdout.strip().split("\n\n")
    assert len(blocks) == len(CHANGES) + 1
    hostile = blocks[0]
    assert "\x1b" not in run.stdout and "\u202e" not in run.stdout and "\x07" not in run.stdout
    assert "\\x1b]52;c;QQ==\\x07" in hostile and "T\\x1b[31m\\u202eX" in hostile
    assert "+ \\x1b[2J\\u202e zlo" in hostile
    assert blocks[1].splitlines() == [
        "2026-11-29 11:00  changed  https://b.gov.si/",
        "  Novice",
        "  + za okolje",
    ]
    assert blocks[-1].splitlines() == [
        "2026-11-27 10:00  new      https://a.gov.si/uredba",
        "  Uredba",
        "  + Vlada je sprejela uredbo o naročilih.",
    ]
    gone = next(b for b in blocks if "  gone  " in b)
    assert "  - Obvestilo o zaprtju občinske knjižnice." in gone


def test_json_is_one_list_with_the_promised_keys(db_url: str) -> None:
    run = changes(db_url, *SINCE, "--json", "--kind", "changed,gone", "--host", "a.gov.si")
    assert run.returncode == 0, run.stderr
    assert "\x1b" not in run.stdout
    rows = json.loads(run.stdout)
    assert [r["id"] for r in rows] == [99, 4, 3]
    assert rows[0]["url"] == "https://a.gov.si/\x1b]52;c;QQ==\x07"  # the value, escaped in JSON
    assert rows[2] == {
        "id": 3, "url": "https://a.gov.si/uredba", "change": "changed",
        "time": "2026-11-28T06:00:00Z", "title": "Uredba", "host": "a.gov.si", "type": "html",
        "added": "novo … javnih", "removed": "",
    }  # fmt: skip
    assert rows[1]["change"] == "gone" and rows[1]["removed"].startswith("Obvestilo")


def test_filters_and_search_words(db_url: str) -> None:
    def ids(*args: str) -> list[int]:
        run = changes(db_url, *SINCE, "--json", *args)
        assert run.returncode == 0, run.stderr
        return [r["id"] for r in json.loads(run.stdout)]

    assert ids("narocilih") == [3, 1]  # no diacritics, another form
    assert ids("-q", "javnih", "naročil") == [3]
    assert ids("--type", "pdf") == [2]
    assert ids("--host", "b.gov.si", "--host", "a.gov.si", "--kind", "new", "--limit", "2") == [
        7,
        5,
    ]
    assert ids("--until", "2026-11-28") == [2, 1]
    assert ids("--host", "c.gov.si, B.gov.si", "--type", "pdf,html", "--kind", "moved") == [6]
    assert ids("--since", "2026-11-29T09:30") == [99, 10, 9]  # the later --since wins


def test_the_scan_bound_and_paging_are_said(db_url: str) -> None:
    run = changes(db_url, *SINCE, "-s", "CHANGES_SCAN_MAX=2", "uredba")
    assert run.returncode == 0 and run.stdout == "no changes\n"
    assert "more may match further back; narrow the window" in run.stderr
    run = changes(db_url, *SINCE, "--limit", "2")
    assert "more: --before 10" in run.stderr
    nxt = changes(db_url, *SINCE, "--limit", "2", "--before", "10", "--json")
    assert [r["id"] for r in json.loads(nxt.stdout)] == [9, 8]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "yesterday"], "is no time"),
        (["--kind", "deleted"], "no change kind 'deleted'"),
        (["--type", "exe"], "no page type 'exe'"),
        (["--limit", "0"], "--limit must be between 1 and"),
        (["--since", "1d", "--until", "2d"], "until must be later than since"),
        (["--limit", "many"], "invalid int value"),
    ],
)
def test_bad_options_exit_non_zero_with_a_clear_message(
    db_url: str, args: list[str], message: str
) -> None:
    run = changes(db_url, *args)
    assert run.returncode != 0
    assert message in run.stderr and "Traceback" not in run.stderr
    assert run.stdout == "" or "Usage" in run.stdout


def test_no_crawldb(tmp_path: Path) -> None:
    run = changes(f"sqlite:///{tmp_path / 'none.sqlite3'}")
    assert run.returncode == 1 and "no crawldb at" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "none.sqlite3").exists()
