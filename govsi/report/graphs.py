"""Link graphs for the report: which sites link to which (edge weight: page links), and the
pages of one site, with a force-directed layout both pictures share.

The edges are aggregated by the database (``GROUP BY`` over link joined to page twice);
drawing keeps the ``max_nodes`` best connected nodes so that a crawl of thousands of
hosts still gives a readable picture, while the JSON and CSV keep every node and edge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection

from govsi.report.sql import flat, run


@dataclass
class Graph:
    """Nodes (dicts with ``id``, ``label`` and figures; ``x``/``y`` in [0, 1] when drawn)
    and directed, weighted edges (``source``, ``target``, ``links``)."""

    title: str
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    note: str = ""
    sql: list[str] = field(default_factory=list)

    def drawn(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        nodes = [n for n in self.nodes if n.get("x") is not None]
        ids = {n["id"] for n in nodes}
        return nodes, [e for e in self.edges if e["source"] in ids and e["target"] in ids]

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "nodes": self.nodes,
            "edges": self.edges,
            "note": self.note,
            "sql": self.sql,
        }


DOMAIN_EDGES = """
SELECT f.site_id AS source, t.site_id AS target, count(*) AS links
FROM link l JOIN page f ON f.id = l.from_page JOIN page t ON t.id = l.to_page
GROUP BY f.site_id, t.site_id
"""
DOMAIN_NODES = """
SELECT s.id, s.domain, count(p.id) AS pages,
       sum(CASE WHEN p.page_type_code <> 'FRONTIER' THEN 1 ELSE 0 END) AS fetched
FROM site s LEFT JOIN page p ON p.site_id = s.id
GROUP BY s.id, s.domain
"""


def domain_graph(conn: Connection, seeds: set[int], max_nodes: int) -> Graph:
    edges: list[dict[str, Any]] = []
    internal: dict[int, int] = {}
    for source, target, links in run(conn, DOMAIN_EDGES):
        if source == target:
            internal[source] = links
        else:
            edges.append({"source": source, "target": target, "links": links})
    nodes = [
        {
            "id": i,
            "label": domain,
            "pages": pages,
            "fetched": fetched or 0,
            "internal_links": internal.get(i, 0),
            "links_out": 0,
            "links_in": 0,
            "seed": i in seeds,
        }
        for i, domain, pages, fetched in run(conn, DOMAIN_NODES)
    ]
    by_id = {n["id"]: n for n in nodes}
    for e in edges:
        by_id[e["source"]]["links_out"] += e["links"]
        by_id[e["target"]]["links_in"] += e["links"]
    # Seeds first, then the sites with most cross-site links and pages.
    ranked = sorted(
        nodes,
        key=lambda n: (not n["seed"], -(n["links_in"] + n["links_out"]), -n["pages"], n["label"]),
    )
    shown = ranked[:max_nodes]
    note = (
        "Edge weight: page-to-page links from one site to another; links within a site are "
        "the node's internal_links."
    )
    if len(nodes) > len(shown):
        note += (
            f" Drawn: {len(shown)} of {len(nodes)} sites (seeds, then the best linked); "
            "report.json and the CSV files have all."
        )
    place(shown, edges)
    return Graph("Domain link graph", nodes, edges, note, [flat(DOMAIN_EDGES), flat(DOMAIN_NODES)])


def site_graph(conn: Connection, site_id: int, domain: str, max_nodes: int) -> Graph:
    """The pages of one site nearest its seed (by depth, then discovery order), at most
    ``max_nodes``, and the links among them."""
    total_sql = f"SELECT count(*) FROM page WHERE site_id = {int(site_id)}"
    total = int(run(conn, total_sql)[0][0])
    pages_sql = f"""
    SELECT p.id, p.url, p.page_type_code, p.depth, p.http_status_code FROM page p
    WHERE p.site_id = {int(site_id)}
    ORDER BY CASE WHEN p.depth IS NULL THEN 1 ELSE 0 END, p.depth, p.id LIMIT {int(max_nodes)}
    """
    nodes = [
        {
            "id": i,
            "label": url,
            "page_type": kind,
            "depth": depth,
            "status": status,
            "links_in": 0,
        }
        for i, url, kind, depth, status in run(conn, pages_sql)
    ]
    edges: list[dict[str, Any]] = []
    sqls = [flat(total_sql), flat(pages_sql)]
    if nodes:
        ids = ", ".join(str(int(n["id"])) for n in nodes)
        edges_sql = (
            f"SELECT l.from_page, l.to_page FROM link l "
            f"WHERE l.from_page IN ({ids}) AND l.to_page IN ({ids}) AND l.from_page <> l.to_page"
        )
        edges = [{"source": a, "target": b, "links": 1} for a, b in run(conn, edges_sql)]
        inbound_sql = (
            f"SELECT l.to_page, count(*) FROM link l WHERE l.to_page IN ({ids}) GROUP BY l.to_page"
        )
        by_id = {n["id"]: n for n in nodes}
        for page, count in run(conn, inbound_sql):
            by_id[page]["links_in"] = count
        sqls += [edges_sql, inbound_sql]
    note = f"Pages of {domain}: {len(nodes)} of {total}"
    note += (
        " (the nearest the seed: by depth, then discovery order), and the links among them."
        if total > len(nodes)
        else ", and the links among them."
    )
    note += " links_in: links to the page from anywhere in the crawl."
    place(nodes, edges)
    return Graph(f"Page link graph of {domain}", nodes, edges, note, sqls)


def place(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> None:
    """Set ``x``, ``y`` of ``nodes`` from a spring layout of the edges among them."""
    index = {n["id"]: i for i, n in enumerate(nodes)}
    pairs = [
        (index[e["source"]], index[e["target"]], float(e["links"]))
        for e in edges
        if e["source"] in index and e["target"] in index
    ]
    for node, (x, y) in zip(nodes, spring_layout(len(nodes), pairs), strict=True):
        node["x"], node["y"] = round(float(x), 4), round(float(y), 4)


def spring_layout(
    n: int,
    edges: list[tuple[int, int, float]],
    iterations: int = 200,
    seed: int = 7,
    gravity: float = 1.0,
) -> np.ndarray:
    """Force-directed positions in [0, 1]² for ``n`` nodes (Fruchterman-Reingold with
    ForceAtlas2's repulsion by degree): linked nodes attract (heavier links more, on a log
    scale); nodes repel each other the more the more neighbours they have, so that hubs
    linked from hundreds of sites stand apart instead of collapsing into one spot; a pull
    to the centre keeps unlinked nodes and small components in the picture.
    Deterministic for ``seed``."""
    if n == 0:
        return np.zeros((0, 2))
    if n == 1:
        return np.full((1, 2), 0.5)
    rng = np.random.default_rng(seed)
    pos = rng.random((n, 2))
    weights = np.zeros((n, n))
    for a, b, w in edges:
        if a != b:
            weight = 1.0 + math.log(max(w, 1.0))
            weights[a, b] += weight
            weights[b, a] += weight
    mass = 1.0 + (weights > 0).sum(axis=1)
    mass /= mass.mean()
    repel = np.outer(mass, mass)
    k = math.sqrt(1.0 / n)
    temperature = 0.1
    cooling = temperature / (iterations + 1)
    for _ in range(iterations):
        delta = pos[:, np.newaxis, :] - pos[np.newaxis, :, :]
        distance = np.maximum(np.linalg.norm(delta, axis=-1), 0.01)
        force = k * k * repel / distance**2 - weights * distance / k
        pull = (pos - 0.5) * (gravity * mass)[:, np.newaxis]
        shift = np.einsum("ijk,ij->ik", delta, force) - pull
        length = np.maximum(np.linalg.norm(shift, axis=-1), 0.01)
        pos += shift * (temperature / length)[:, np.newaxis]
        temperature -= cooling
    low, high = pos.min(axis=0), pos.max(axis=0)
    span = np.where(high - low > 0, high - low, 1.0)
    # numpy's stubs type a reduction along an axis, and arithmetic with it, as Any.
    scaled: np.ndarray = (pos - low) / span
    return scaled
