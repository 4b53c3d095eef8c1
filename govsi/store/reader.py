"""The reads a continuing crawl makes of crawldb: what is fetched, known, and still to do."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, and_, func, or_, select

from govsi.store import schema
from govsi.store.schema import IMAGE, PAGE, SITE


@dataclass(frozen=True)
class StoredRobots:
    status: int
    content: str | None
    age: float  # seconds since it was fetched


class CrawlReader:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def fetched_image_urls(self) -> Iterator[str]:
        with self.engine.connect() as conn:
            q = select(IMAGE.c.url).where(IMAGE.c.accessed_time.is_not(None)).distinct()
            yield from conn.execute(q.execution_options(yield_per=5000)).scalars()

    def unfetched_image_urls(self) -> Iterator[str]:
        """Image URLs shown on stored pages whose download no row records yet."""
        with self.engine.connect() as conn:
            fetched = select(IMAGE.c.url).where(IMAGE.c.accessed_time.is_not(None))
            q = select(IMAGE.c.url).where(IMAGE.c.url.not_in(fetched)).distinct()
            yield from conn.execute(q.execution_options(yield_per=5000)).scalars()

    def frontier_hosts(self, max_depth: int = 0, counts: bool = False) -> list[Any]:
        """Hosts with FRONTIER rows (within ``max_depth`` > 0), each with one of their URLs
        (and, with ``counts``, how many rows): a continuing or shared crawl's work."""
        with self.engine.connect() as conn:
            cols = [SITE.c.domain, func.min(PAGE.c.url)]
            if counts:
                cols.append(func.count())
            q = (
                select(*cols)
                .join(PAGE, PAGE.c.site_id == SITE.c.id)
                .where(PAGE.c.page_type_code == "FRONTIER")
                .group_by(SITE.c.id, SITE.c.domain)
                .order_by(SITE.c.id)
            )
            if max_depth > 0:
                q = q.where(PAGE.c.depth <= max_depth)
            return [tuple(row) for row in conn.execute(q)]

    def frontier_batch(
        self, host: str, after: tuple[int, int], limit: int, max_depth: int = 0
    ) -> list[tuple[str, int, int]]:
        """The next FRONTIER rows of one host in queue order: (url, depth, id) after the
        (depth, id) cursor ``after``."""
        depth, last_id = after
        with self.engine.connect() as conn:
            q = (
                select(PAGE.c.url, PAGE.c.depth, PAGE.c.id)
                .join(SITE, SITE.c.id == PAGE.c.site_id)
                .where(SITE.c.domain == host, PAGE.c.page_type_code == "FRONTIER")
                .where(or_(PAGE.c.depth > depth, and_(PAGE.c.depth == depth, PAGE.c.id > last_id)))
                .order_by(PAGE.c.depth, PAGE.c.id)
                .limit(limit)
            )
            if max_depth > 0:
                q = q.where(PAGE.c.depth <= max_depth)
            return [(u, d or 0, i) for u, d, i in conn.execute(q)]

    def fetched_on_hosts(self, hosts: list[str]) -> set[str]:
        """The page and image URLs of these hosts crawldb records as fetched: in a shared
        crawl, what other workers fetched there before this one took the hosts over."""
        found: set[str] = set()
        with self.engine.connect() as conn:
            q = (
                select(PAGE.c.url)
                .join(SITE, SITE.c.id == PAGE.c.site_id)
                .where(SITE.c.domain.in_(hosts), PAGE.c.page_type_code != "FRONTIER")
            )
            found.update(conn.execute(q.execution_options(yield_per=5000)).scalars())
            prefixes = [f"{scheme}://{h}/%" for h in hosts for scheme in ("http", "https")]
            q = select(IMAGE.c.url).where(
                IMAGE.c.accessed_time.is_not(None), or_(*[IMAGE.c.url.like(p) for p in prefixes])
            )
            found.update(conn.execute(q).scalars())
        return found

    def robots_of_hosts(self, hosts: list[str], max_age: float) -> dict[str, StoredRobots]:
        """The robots.txt crawldb holds for these hosts, fetched within ``max_age`` seconds:
        in a shared crawl, what the worker that served a host before fetched."""
        now = schema.utcnow()
        found: dict[str, StoredRobots] = {}
        with self.engine.connect() as conn:
            q = select(
                SITE.c.domain, SITE.c.robots_status, SITE.c.robots_content,
                SITE.c.robots_fetched_at,
            ).where(
                SITE.c.domain.in_(hosts),
                SITE.c.robots_status.is_not(None),
                SITE.c.robots_fetched_at.is_not(None),
            )  # fmt: skip
            for host, status, content, fetched_at in conn.execute(q):
                age = max(0.0, (now - fetched_at).total_seconds())
                if age <= max_age:
                    found[host] = StoredRobots(int(status), content, age)
        return found

    def known_urls(self) -> Iterator[str]:
        """Every URL crawldb has a page row for, fetched or not."""
        with self.engine.connect() as conn:
            q = select(PAGE.c.url).execution_options(yield_per=10000)
            yield from conn.execute(q).scalars()
