"""The report's pictures as standalone SVG: a laid-out link graph and bar charts.

Plain SVG text (no plotting library): the files open in any browser or editor, embed in
the HTML page as they are, and every element carries a ``<title>`` so that hovering shows
its figures even in the static picture. All text from the database is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from govsi.report.graphs import Graph

SEED = "#d9480f"
NODE = "#1c7ed6"
EDGE = "#adb5bd"
FONT = 'font-family="system-ui, sans-serif"'
# The graph pictures: where node centres go (px), with margins for the title above, and
# for the names of nodes at the right edge and the legend.
PLOT_W, PLOT_H, PAD, TOP, RIGHT = 780, 620, 40, 50, 160
# What a node's colour says, in the legend's order.
COLOURS = {
    "seed": (SEED, "seed site / seed page"),
    "site": (NODE, "site / HTML page"),
    "BINARY": ("#2f9e44", "document"),
    "DUPLICATE": ("#ae3ec9", "duplicate"),
    "error": ("#e03131", "error (4xx, 5xx, no response)"),
    "FRONTIER": ("#868e96", "not fetched (frontier)"),
}


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(label)}">'
    )
    return "\n".join([head, *body, "</svg>"]) + "\n"


def node_kind(node: dict[str, Any]) -> str:
    """The key of ``COLOURS`` a node is drawn in: sites by seed or not, pages by type."""
    if node.get("seed") or node.get("depth") == 0:
        return "seed"
    kind = node.get("page_type")
    if kind == "ERROR" or (node.get("status") or 0) >= 400:
        return "error"
    return kind if kind in COLOURS else "site"


def node_weight(node: dict[str, Any]) -> float:
    """What a node's area stands for: a site's pages, a page's links in."""
    return float(node.get("pages", node.get("links_in", 0)) or 0)


def radii(nodes: list[dict[str, Any]], area: float) -> list[float]:
    """Radii (px) with area proportional to weight, scaled so that all nodes together cover
    about a tenth of ``area`` (a crawl of 300 sites and one of 5 both read well), between
    3 px (still hoverable) and 24 px (a huge site must not hide its neighbours)."""
    weights = [max(node_weight(n), 1.0) for n in nodes]
    scale = math.sqrt(0.1 * area / (math.pi * sum(weights))) if weights else 0.0
    return [min(max(scale * math.sqrt(w), 3.0), 24.0) for w in weights]


@dataclass(frozen=True)
class Drawing:
    """A graph's drawn part as both pictures (SVG and interactive) show it: nodes with
    radius, colour, short name and whether they are named; edges; the legend."""

    title: str
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    legend: list[tuple[str, str]]


def drawing(graph: Graph, labels: int, area: float = PLOT_W * PLOT_H) -> Drawing:
    """``graph`` made ready to draw; the ``labels`` largest nodes, and every seed, named."""
    nodes, edges = graph.drawn()
    sizes = dict(zip((n["id"] for n in nodes), radii(nodes, area), strict=True))
    ranked = sorted(nodes, key=lambda n: -sizes[n["id"]])
    named = {n["id"] for n in ranked[:labels]} | {n["id"] for n in nodes if n.get("seed")}
    kinds = {n["id"]: node_kind(n) for n in nodes}
    styled = [
        {
            **n,
            "size": sizes[n["id"]],
            "colour": COLOURS[kinds[n["id"]]][0],
            "named": n["id"] in named,
            "short": short(n["label"]),
        }
        for n in nodes
    ]
    legend = [COLOURS[k] for k in COLOURS if k in set(kinds.values())]
    return Drawing(graph.title, styled, edges, legend)


def graph_svg(d: Drawing) -> str:
    """The picture of a drawing; node area follows its pages (or links in), edge width
    the log of its links."""
    width, height = PAD + PLOT_W + RIGHT, TOP + PLOT_H + PAD
    at = {n["id"]: (PAD + n["x"] * PLOT_W, TOP + n["y"] * PLOT_H) for n in d.nodes}
    body = [
        "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' "
        "markerHeight='7' markerUnits='userSpaceOnUse' orient='auto-start-reverse'>"
        f"<path d='M0,0L10,5L0,10z' fill='{EDGE}'/></marker></defs>",
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{PAD}" y="24" {FONT} font-size="16">{escape(d.title)}</text>',
    ]
    by_id = {n["id"]: n for n in d.nodes}
    heaviest = max((e["links"] for e in d.edges), default=1)
    # Thousands of edges would be a grey sheet: the more there are, the fainter each.
    opacity = min(0.7, 20 / math.sqrt(max(len(d.edges), 1)))
    for e in sorted(d.edges, key=lambda e: e["links"]):
        (x1, y1), (x2, y2) = at[e["source"]], at[e["target"]]
        # Stop the arrow at the target's rim.
        dist = math.hypot(x2 - x1, y2 - y1) or 1.0
        r = by_id[e["target"]]["size"] + 2
        x2, y2 = x2 - (x2 - x1) * r / dist, y2 - (y2 - y1) * r / dist
        w = 0.6 + 3.4 * math.log1p(e["links"]) / math.log1p(heaviest)
        body.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{EDGE}" '
            f'stroke-width="{w:.2f}" stroke-opacity="{opacity:.2f}" marker-end="url(#arrow)">'
            f"<title>{escape(edge_tip(e, by_id))}</title></line>"
        )
    for n in d.nodes:
        x, y = at[n["id"]]
        body.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{n["size"]:.1f}" fill="{n["colour"]}" '
            f'fill-opacity="0.85" stroke="white"><title>{escape(node_tip(n))}</title></circle>'
        )
        if n["named"]:
            body.append(
                f'<text x="{x + n["size"] + 3:.1f}" y="{y + 4:.1f}" {FONT} font-size="11" '
                f'fill="#212529">{escape(n["short"])}</text>'
            )
    for i, (colour, meaning) in enumerate(d.legend):
        y = height - 14 - 16 * i
        body.append(
            f'<circle cx="{width - RIGHT + 8}" cy="{y - 4}" r="5" fill="{colour}"/>'
            f'<text x="{width - RIGHT + 18}" y="{y}" {FONT} font-size="11" fill="#495057">'
            f"{escape(meaning)}</text>"
        )
    return _svg(width, height, body, d.title)


def node_tip(node: dict[str, Any]) -> str:
    """What hovering a node says (the same text in the SVG and the interactive graph)."""
    skip = {"id", "label", "x", "y", "seed", "size", "colour", "named", "short"}
    figures = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in node.items() if k not in skip)
    return f"{node['label']}{' (seed)' if node.get('seed') else ''}: {figures}"


def edge_tip(edge: dict[str, Any], nodes: dict[Any, dict[str, Any]]) -> str:
    source, target = nodes[edge["source"]]["label"], nodes[edge["target"]]["label"]
    return f"{source} → {target}: {edge['links']} link{'s' if edge['links'] != 1 else ''}"


def short(label: str, limit: int = 40) -> str:
    """A node's name in the picture: a site's host, a page's path (its URL in the tip)."""
    if "://" in label:
        rest = label.split("://", 1)[1]
        path = rest[rest.find("/") :] if "/" in rest else "/"
        label = path if len(path) > 1 else rest
    return label if len(label) <= limit else label[: limit - 1] + "…"


def bars_svg(
    title: str,
    labels: Sequence[Any],
    values: Sequence[float],
    x_title: str,
    y_title: str,
    width: int = 720,
    height: int = 260,
) -> str:
    """A bar chart; with many bars (a crawl rate over time) only some are labelled."""
    left, right, top, bottom = 56, 16, 32, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max((float(v) for v in values), default=0.0) or 1.0
    n = max(len(values), 1)
    slot = plot_w / n
    every = max(1, math.ceil(n / 12))
    body = [
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="20" {FONT} font-size="14">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#495057"/>',
        f'<text x="{left - 6}" y="{top + 4}" {FONT} font-size="10" text-anchor="end">'
        f"{_num(peak)}</text>",
        f'<text x="{left - 6}" y="{top + plot_h}" {FONT} font-size="10" text-anchor="end">0</text>',
        f'<text x="{left + plot_w / 2}" y="{height - 6}" {FONT} font-size="11" '
        f'text-anchor="middle">{escape(x_title)}</text>',
        f'<text x="12" y="{top + plot_h / 2}" {FONT} font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + plot_h / 2})">{escape(y_title)}</text>',
    ]
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        h = plot_h * float(value) / peak
        x = left + i * slot
        body.append(
            f'<rect x="{x + slot * 0.1:.1f}" y="{top + plot_h - h:.1f}" '
            f'width="{max(slot * 0.8, 0.5):.1f}" height="{h:.1f}" fill="{NODE}">'
            f"<title>{escape(f'{label}: {_num(value)}')}</title></rect>"
        )
        if i % every == 0:
            body.append(
                f'<text x="{x + slot / 2:.1f}" y="{top + plot_h + 14}" {FONT} font-size="10" '
                f'text-anchor="middle">{escape(str(label))}</text>'
            )
    return _svg(width, height, body, title)


def _num(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"
