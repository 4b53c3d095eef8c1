"""A small crawldb of changes, rows written directly, for the Changes page's and feed's
tests: new, changed, gone and moved pages on two hosts, an HTML page and a PDF, a page
whose title, URL and texts are hostile (markup, control characters, past the diff's size
bound), and more old changes than one page shows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine, insert

from govsi.store import schema

T = datetime(2026, 11, 22, 12, 0, 0)
NOW = T + timedelta(days=1)  # the site's clock in the tests
OLD = 60  # old "new" changes on evem.gov.si, more than one page (PER_PAGE) holds

BEFORE = "Vlada je sprejela uredbo o občinah. Rok za pripombe je 30 dni. Konec."
AFTER = (
    "Vlada je sprejela uredbo o občinah. Rok za pripombe je 60 dni. "
    "Dodan je nov člen o javnih naročilih. Konec."
)
PDF_BEFORE = "Razpis za sofinanciranje projektov. Vrednost 1000 EUR."
PDF_AFTER = "Razpis za sofinanciranje projektov. Vrednost 5000 EUR."
HOSTILE_TITLE = "<script>document.title='pwned'</script>\x1b]52;c;aGk=\x07\u202eevil"
HOSTILE_URL = 'https://www.gov.si/a?b=<script>alert(1)</script>&c="x"'
HOSTILE_WORDS = "<img src=x onerror=\"document.title='img'\"> \x1b[2J\x01 \ufffe"
HOSTILE_ADDED = "Dodano <svg onload=\"document.title='svg'\"> \x1b[31m\x02 rdeče \ufeff"
HUGE = 300_000  # characters of the hostile page's texts: past CHANGES_DIFF_MAX_CHARS


@dataclass(frozen=True)
class Changes:
    """The ids of the changes written."""

    uredba_new: int
    uredba_changed: int
    pdf_changed: int
    gone: int
    moved: int
    unkept: int  # a changed page whose text before is not known
    hostile: int
    crawl_id: str


def build(engine: Engine) -> Changes:
    """crawldb ``engine`` (migrated, empty) filled with the changes; a crawl id too."""
    crawl = schema.crawl_id(engine)
    with engine.begin() as conn:

        def site(domain: str) -> int:
            inserted = conn.execute(insert(schema.SITE).values(domain=domain))
            return int(inserted.inserted_primary_key[0])

        gov, evem = site("www.gov.si"), site("evem.gov.si")

        def page(site_id: int, url: str, kind: str = "HTML", text: str | None = None) -> int:
            pid = int(conn.execute(insert(schema.PAGE).values(
                site_id=site_id, url=url, page_type_code=kind, http_status_code=200,
                accessed_time=T, html_content="<p>x</p>" if kind == "HTML" else None,
            )).inserted_primary_key[0])  # fmt: skip
            if kind == "BINARY":
                conn.execute(insert(schema.PAGE_DATA).values(page_id=pid, data_type_code="PDF"))
            if text is not None:
                conn.execute(insert(schema.PAGE_TEXT).values(
                    page_id=pid, kind="PDF" if kind == "BINARY" else "HTML", status="ok",
                    text=text, extracted_at=T,
                ))  # fmt: skip
            return pid

        def change(pid: int, kind: str, at: datetime, title: str | None,
                   before: str | None = None) -> int:  # fmt: skip
            return int(conn.execute(insert(schema.PAGE_CHANGE).values(
                page_id=pid, visit_time=at, kind=kind, title=title, text_before=before,
            )).inserted_primary_key[0])  # fmt: skip

        for n in range(OLD):
            old = page(evem, f"https://evem.gov.si/stran-{n}", text=f"Stara stran {n}.")
            change(old, "new", T - timedelta(days=3, minutes=n), f"Stara stran {n}")
        uredba = page(gov, "https://www.gov.si/uredba-o-obcinah", text=AFTER)
        uredba_new = change(uredba, "new", T, "Uredba o občinah")
        uredba_changed = change(uredba, "changed", T + timedelta(hours=2), "Uredba o občinah",
                                BEFORE)  # fmt: skip
        pdf = page(evem, "https://evem.gov.si/razpis.pdf", "BINARY", PDF_AFTER)
        change(pdf, "new", T + timedelta(minutes=5), "Razpis", None)
        pdf_changed = change(pdf, "changed", T + timedelta(hours=3), "Razpis", PDF_BEFORE)
        stara = page(gov, "https://www.gov.si/odlok-ukinjen")
        gone = change(stara, "gone", T + timedelta(hours=4), "Odlok o ukinitvi",
                      "Odlok o ukinitvi sveta. Velja do preklica.")  # fmt: skip
        moved_page = page(gov, "https://www.gov.si/premaknjena")
        moved = change(moved_page, "moved", T + timedelta(hours=5), "Premaknjena stran",
                       "Ta stran se je preselila.")  # fmt: skip
        unkept_page = page(gov, "https://www.gov.si/brez-zgodovine", text="Novo besedilo.")
        unkept = change(unkept_page, "changed", T + timedelta(hours=1), "Brez zgodovine")
        huge_before = (HOSTILE_WORDS + " uredba ") * (HUGE // 60)
        hostile_page = page(gov, HOSTILE_URL, text=HOSTILE_ADDED + " " + huge_before)
        hostile = change(hostile_page, "changed", T + timedelta(hours=6), HOSTILE_TITLE * 50,
                         huge_before)  # fmt: skip
    return Changes(uredba_new, uredba_changed, pdf_changed, gone, moved, unkept, hostile, crawl)
