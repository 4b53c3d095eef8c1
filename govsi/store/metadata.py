"""crawldb's ``MetaData``: every table of crawldb is defined on it, in schema ``crawldb``
(translated away on SQLite: ``govsi.store.schema``)."""

from __future__ import annotations

from sqlalchemy import MetaData

SCHEMA = "crawldb"
METADATA = MetaData(schema=SCHEMA)
