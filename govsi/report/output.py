"""Write a report folder: ``index.html`` (self-contained: styles, script, data and pictures
inline, so it opens from disk with no network), ``report.json``, ``csv/`` (one file per
table and graph), and the pictures as SVG files.

Files are written to a temporary name and renamed, so a reader never sees half a file and
an interrupted run leaves the previous report's files whole.
"""

from __future__ import annotations

import csv
import io
import json
import os
from decimal import Decimal
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from govsi.report.build import Report
from govsi.report.charts import (
    PLOT_H,
    PLOT_W,
    Drawing,
    bars_svg,
    drawing,
    edge_tip,
    graph_svg,
    node_tip,
)
from govsi.report.sql import Table

# Rows of a table the HTML page shows; the CSV and JSON files have all of them.
HTML_ROWS = 200
# Nodes named in the pictures (the largest; seeds always).
DOMAIN_LABELS, SITE_LABELS = 40, 25


def write_report(report: Report, folder: Path, html_rows: int = HTML_ROWS) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "csv").mkdir(exist_ok=True)
    written: list[Path] = []

    def put(name: str, content: str) -> None:
        path = folder / name
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, path)
        written.append(path)

    put("report.json", json.dumps(report.as_dict(), indent=1, ensure_ascii=False) + "\n")
    for scope, tables in report.scopes:
        for t in tables:
            put(f"csv/{scope.name}_{t.name}.csv", to_csv(t.columns, t.rows))
    for key, graph in (("domain_graph", report.domain_graph), ("site_graph", report.site_graph)):
        if graph is None:
            continue
        columns = sorted({k for n in graph.nodes for k in n}, key=_node_column)
        put(
            f"csv/{key}_nodes.csv",
            to_csv(columns, [[n.get(c) for c in columns] for n in graph.nodes]),
        )
        put(
            f"csv/{key}_edges.csv",
            to_csv(
                ["source", "target", "links"],
                [[e["source"], e["target"], e["links"]] for e in graph.edges],
            ),
        )
    drawings = {"domain": drawing(report.domain_graph, DOMAIN_LABELS)}
    if report.site_graph is not None:
        drawings["site"] = drawing(report.site_graph, SITE_LABELS)
    pictures = pictures_of(report, drawings)
    for name, svg in pictures.items():
        put(f"{name}.svg", svg)
    put("index.html", render_html(report, pictures, drawings, html_rows))
    return written


def _node_column(name: str) -> tuple[int, str]:
    first = ("id", "label")
    return (first.index(name), name) if name in first else (len(first), name)


# A cell a spreadsheet would read as a formula (OWASP "CSV injection"): URLs, titles, error
# texts and Content-Types come from the crawled web, which may be hostile.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: None empty, numbers as they are (-1.5 is a number, not a
    formula), any other value's text behind a single quote if it would start a formula.
    Every CSV file of the report is written through here (to_csv)."""
    if value is None:
        return ""
    if isinstance(value, int | float | Decimal):
        return value
    # Not only str: the csv module writes any other value as its str(), which could start
    # a formula just the same.
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else value


def to_csv(columns: list[str], rows: list[list[Any]]) -> str:
    out = io.StringIO()
    # RFC 4180's CRLF: the writer quotes a cell holding any character of the line end, so
    # with "\n" alone a bare CR went out unquoted, and spreadsheets (and Python's reader)
    # began a new row there, where "'\r=1" left "=1" to start a cell of its own.
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([csv_cell(c) for c in columns])
    writer.writerows([csv_cell(v) for v in row] for row in rows)
    return out.getvalue()


def pictures_of(report: Report, drawings: dict[str, Drawing]) -> dict[str, str]:
    everything = report.scopes_by_name()["all"]
    depth = everything["depths"]
    rate = everything["crawl_rate"]
    pictures = {
        **{f"{name}_graph": graph_svg(d) for name, d in drawings.items()},
        "depths": bars_svg(
            "Pages per depth (whole database)",
            ["?" if r[0] is None else r[0] for r in depth.rows],
            [r[1] for r in depth.rows],
            "depth (link hops from a seed)",
            "pages",
        ),
        "crawl_rate": bars_svg(
            "Pages fetched over time (whole database)",
            [_duration(r[1]) for r in rate.rows],
            [r[2] for r in rate.rows],
            "time since the first fetch",
            f"pages per {_duration(_width(rate))}",
        ),
    }
    return pictures


def _width(rate: Table) -> float:
    return rate.rows[1][1] - rate.rows[0][1] if len(rate.rows) > 1 else 1


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h".replace(".0 h", " h")
    return f"{seconds / 86400:.1f} d".replace(".0 d", " d")


def cytoscape_data(d: Drawing | None) -> dict[str, Any] | None:
    """A drawing as the page's script draws it: the positions, sizes, colours, names and
    hover texts of the SVG picture."""
    if d is None:
        return None
    by_id = {n["id"]: n for n in d.nodes}
    return {
        "nodes": [
            {
                "id": str(n["id"]),
                "label": n["label"],
                "short": n["short"],
                "tip": node_tip(n),
                "size": 2 * n["size"],
                "colour": n["colour"],
                "named": n["named"],
                "x": n["x"],
                "y": n["y"],
            }
            for n in d.nodes
        ],
        "edges": [
            {
                "source": str(e["source"]),
                "target": str(e["target"]),
                "links": e["links"],
                "tip": edge_tip(e, by_id),
            }
            for e in d.edges
        ],
        "legend": d.legend,
        # The SVG's plot area: the same positions and node sizes, so both look alike.
        "width": PLOT_W,
        "height": PLOT_H,
    }


def script_json(value: Any) -> Markup:
    """JSON safe inside <script>: page text from the crawl cannot close the element."""
    text = json.dumps(value, ensure_ascii=False)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def render_html(
    report: Report, pictures: dict[str, str], drawings: dict[str, Drawing], html_rows: int
) -> str:
    env = Environment(
        loader=PackageLoader("govsi.report", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    static = files("govsi.report") / "static"
    by_scope = report.scopes_by_name()
    seed, everything = by_scope["seed"], by_scope["all"]
    summary = [
        (column, seed["summary"].rows[0][i], everything["summary"].rows[0][i])
        for i, column in enumerate(everything["summary"].columns)
    ]
    sections = [
        (
            name,
            everything[name].title,
            [(s, by_scope[s.name][name]) for s, _ in report.scopes],
        )
        for name in everything
        if name not in ("summary", "crawl_rate")
    ]
    return env.get_template("index.html.j2").render(
        report=report,
        summary=summary,
        summary_table=everything["summary"],
        sections=sections,
        rate=everything["crawl_rate"],
        html_rows=html_rows,
        pictures={k: Markup(v) for k, v in pictures.items()},
        graphs=script_json(
            {name: cytoscape_data(drawings.get(name)) for name in ("domain", "site")}
        ),
        cytoscape=Markup((static / "cytoscape.min.js").read_text(encoding="utf-8")),
        style=Markup((static / "report.css").read_text(encoding="utf-8")),
        script=Markup((static / "report.js").read_text(encoding="utf-8")),
    )
