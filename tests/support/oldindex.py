"""A search index folder as another version of govsi would leave it: Tantivy's files of
other fields, holding one page, and a state file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import tantivy


def another_versions_index(folder: Path) -> None:
    """Fill ``folder`` (made if missing) with an index of other fields, holding one page."""
    folder.mkdir(exist_ok=True)
    other = tantivy.SchemaBuilder()
    other.add_text_field("body", index_option="position")
    writer = tantivy.Index(other.build(), path=str(folder)).writer()
    writer.add_document(tantivy.Document(body="stara"))
    writer.commit()
    writer.wait_merging_threads()
    with sqlite3.connect(folder / "state.sqlite3") as state:
        state.execute("CREATE TABLE indexed (page_id INTEGER PRIMARY KEY, mark TEXT)")
        state.execute("INSERT INTO indexed VALUES (1, 'T')")
