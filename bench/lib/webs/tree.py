"""A larger, deterministic simulated .gov.si web for benchmarks.

``build_web(hosts, pages_per_host, seed)`` gives ``hosts`` sites, each on its own loopback
address, each with ``pages_per_host`` HTML pages that share one template (header with the
site's logo, a 20-item main menu, breadcrumbs, footer) and differ in a paragraph or two of
Slovenian-looking text, 0-2 content images from a small per-host pool, 10-20 links to
other pages of the same host and 1-3 links to other hosts of the web.

Page 0 is ``/``; pages 1..20 are the menu's sections (``/novice/``); every later page is a
child of an earlier one (8 per parent: ``/novice/razpis-obvestilo-37/``), so breadth-first
reaches every page within four hops of its root even without the random cross links.
Links come in several spellings (root-relative, ``../`` relative, absolute, with a
``#fragment``) that canonicalize to one URL. A few hosts serve a robots.txt that disallows
``/iskalnik/``, which only those hosts link to: it must never be requested.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bench.lib.webs.parts import image, image_bytes, robots_txt, sentence, text
from testkit.simweb.server import Host, Resource, SimWeb, html

KINDS = ["ministrstvo", "urad", "agencija", "upravna-enota", "inspektorat", "uprava"]
AREAS = [
    "finance", "zdravje", "okolje in prostor", "kmetijstvo", "kulturo", "notranje zadeve",
    "pravosodje", "obrambo", "infrastrukturo", "gospodarstvo", "delo", "izobraževanje",
]  # fmt: skip
SECTIONS = [
    ("novice", "Novice"), ("podrocja", "Področja dela"), ("dokumenti", "Dokumenti"),
    ("o-nas", "O nas"), ("kontakt", "Kontakt"), ("javna-narocila", "Javna naročila"),
    ("zaposlitve", "Zaposlitve"), ("predpisi", "Predpisi"), ("projekti", "Projekti"),
    ("evropska-sredstva", "Evropska sredstva"), ("statistika", "Statistika"),
    ("storitve", "Storitve"), ("obrazci", "Obrazci"),
    ("sporocila-za-javnost", "Sporočila za javnost"), ("dogodki", "Dogodki"),
    ("pogosta-vprasanja", "Pogosta vprašanja"), ("organizacija", "Organizacija"),
    ("informacije-javnega-znacaja", "Informacije javnega značaja"),
    ("dostopnost", "Izjava o dostopnosti"), ("piskotki", "Piškotki"),
]  # fmt: skip
_LINK_WORDS = (
    "razpis obvestilo porocilo sklep seja program projekt ukrep navodila predstavitev "
    "objava pojasnilo odgovor vloga pregled sporocilo dogodek posvet izjava analiza"
)
LINK_WORDS = _LINK_WORDS.split()
OUTSIDE = ["www.facebook.com", "twitter.com", "www.youtube.com", "www.linkedin.com"]
BRANCHING = 8
ROBOTS_EVERY = 7  # hosts 3, 10, 17, ... serve a robots.txt
DISALLOWED = "/iskalnik/"
IMAGE_POOL = 12
FOOTER = {"/kontakt/": "Kontakt", "/dostopnost/": "Dostopnost", "/piskotki/": "Piškotki"}


@dataclass
class _Page:
    path: str
    title: str
    parent: int  # -1 for the root
    section: int  # index of the depth-1 ancestor (0 for the root itself)


def host_name(i: int) -> str:
    return f"{KINDS[i % len(KINDS)]}-{i:02d}.gov.si"


def has_robots(i: int) -> bool:
    return i % ROBOTS_EVERY == 3


def _pages(rng: random.Random, n: int) -> list[_Page]:
    pages = [_Page("/", "Domov", -1, 0)]
    sections = min(len(SECTIONS), n - 1)
    for k in range(1, sections + 1):
        slug, title = SECTIONS[k - 1]
        pages.append(_Page(f"/{slug}/", title, 0, k))
    for k in range(sections + 1, n):
        parent = (k - sections - 1) // BRANCHING + 1
        section = pages[parent].section
        word = "-".join(rng.sample(LINK_WORDS, 2))
        title = sentence(rng).split(",")[0].rstrip(".")[:40].strip()
        pages.append(_Page(f"/{SECTIONS[section - 1][0]}/{word}-{k}/", title, parent, section))
    return pages


def _href(rng: random.Random, host: str, page: _Page, target: _Page) -> str:
    """One of several spellings of ``target`` as seen from ``page``."""
    roll = rng.random()
    if roll < 0.15:
        return f"http://{host}{target.path}"
    if roll < 0.25:
        return f"{target.path}#vsebina"
    if roll < 0.40 and page.path.count("/") == 3 and target.path.count("/") == 3:
        # /a/x-1/ -> /b/y-2/ is ../../b/y-2/
        return "../.." + target.path
    return target.path


def _render(
    rng: random.Random,
    i: int,
    site_title: str,
    pages: list[_Page],
    k: int,
    children: list[int],
    image_paths: list[str],
    foreign: list[tuple[str, str, str]],
) -> str:
    host = host_name(i)
    page = pages[k]
    menu = "".join(
        f'<li><a href="{p.path}">{p.title}</a></li>' for p in pages[1 : len(SECTIONS) + 1]
    )
    crumbs = ['<a href="/">Domov</a>']
    if page.parent > 0:
        crumbs.append(f'<a href="{pages[page.section].path}">{pages[page.section].title}</a>')
    if page.parent > 0 and page.parent != page.section:
        crumbs.append(f'<a href="{pages[page.parent].path}">{pages[page.parent].title}</a>')
    # 10-20 links into the same host: the children first, then random cross links.
    wanted = rng.randint(10, 20)
    related = list(children)
    others = [j for j in range(len(pages)) if j != k and j not in children]
    related += rng.sample(others, min(len(others), max(0, wanted - len(related))))
    items = "".join(
        f'<li><a href="{_href(rng, host, page, pages[j])}">{pages[j].title}</a></li>'
        for j in related
    )
    external = "".join(
        f'<li><a href="http://{h}{path}">{title}</a></li>' for h, path, title in foreign
    )
    figures = "".join(
        f'<figure><img src="{src}" alt="Slika {n}" width="640" height="360">'
        f"<figcaption>{sentence(rng)}</figcaption></figure>"
        for n, src in enumerate(image_paths)
    )
    search = f'<a href="{DISALLOWED}">Iskalnik</a>' if has_robots(i) else ""
    footer = [p for p in pages[1 : len(SECTIONS) + 1] if p.path in FOOTER]
    date = f"{rng.randint(1, 28)}. {rng.randint(1, 12)}. {rng.randint(2015, 2024)}"
    return (
        f'<!DOCTYPE html><html lang="sl"><head><meta charset="utf-8">'
        f"<title>{page.title} | {site_title}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/assets/css/main.css">'
        '<script src="/assets/js/main.js" defer></script></head><body>'
        '<a class="skip-link" href="#vsebina">Skoči na vsebino</a>'
        f'<header><a href="/" class="logo"><img src="/assets/logo.png" alt="{site_title}">'
        f"</a><span>{site_title}</span>{search}</header>"
        f'<nav aria-label="Glavni meni"><ul>{menu}</ul></nav>'
        f'<nav class="breadcrumbs">{" / ".join(crumbs)}</nav>'
        f'<main id="vsebina"><h1>{page.title}</h1><p class="date">Objavljeno: {date}</p>'
        f'<p class="lead">{text(rng, rng.randint(300, 900))}</p>{figures}'
        f"<h2>Povezane vsebine</h2><ul>{items}</ul>"
        f"<h2>Sorodne institucije</h2><ul>{external}</ul></main>"
        f"<footer><p>{site_title}, Gregorčičeva ulica {i + 1}, 1000 Ljubljana</p>"
        f'<p><a href="mailto:gp.{i:02d}@gov.si">gp.{i:02d}@gov.si</a> '
        f'<a href="tel:+3861478{i:04d}">01 478 {i:04d}</a></p><ul>'
        + "".join(f'<li><a href="{p.path}">{FOOTER[p.path]}</a></li>' for p in footer)
        + "".join(f'<li><a href="https://{h}/gov.si">{h}</a></li>' for h in OUTSIDE)
        + "</ul><p>© 2024 Republika Slovenija</p></footer></body></html>"
    )


def build_web(
    hosts: int = 20, pages_per_host: int = 250, seed: int = 0
) -> tuple[SimWeb, list[str]]:
    """The web (not started) and its seed URLs (the root of every host)."""
    if not 1 <= hosts <= 240:
        raise ValueError("hosts must be 1..240 (one loopback address each)")
    if pages_per_host < 1:
        raise ValueError("pages_per_host must be at least 1")
    site_rngs = [random.Random(f"govsi-bench-{seed}-{i}") for i in range(hosts)]
    titles = [
        f"{KINDS[i % len(KINDS)].replace('-', ' ').capitalize()} za {AREAS[i % len(AREAS)]}"
        for i in range(hosts)
    ]
    structure = [_pages(site_rngs[i], pages_per_host) for i in range(hosts)]
    result: list[Host] = []
    for i in range(hosts):
        rng = site_rngs[i]
        pages = structure[i]
        pool = [f"/media/slike/{rng.choice(LINK_WORDS)}-{j}.jpg" for j in range(IMAGE_POOL)]
        children: dict[int, list[int]] = {}
        for k, p in enumerate(pages):
            children.setdefault(p.parent, []).append(k)
        resources: dict[str, Resource] = {}
        used: set[str] = {"/assets/logo.png"}
        for k, page in enumerate(pages):
            images = rng.sample(pool, rng.randint(0, 2))
            used.update(images)
            foreign = []
            for _ in range(rng.randint(1, 3) if hosts > 1 else 0):
                j = rng.choice([h for h in range(hosts) if h != i])
                target = rng.choice(structure[j])
                foreign.append((host_name(j), target.path, f"{titles[j]}: {target.title}"))
            page_html = _render(rng, i, titles[i], pages, k, children.get(k, []), images, foreign)
            resources[page.path] = html(page_html)
        for path in sorted(used):
            png = path.endswith(".png")
            resources[path] = image(image_bytes(rng, png, rng.randint(1500, 6000)), png)
        if has_robots(i):
            robots = (
                f"User-agent: *\nDisallow: {DISALLOWED}\nDisallow: /admin/\n\n"
                f"Sitemap: http://{host_name(i)}/sitemap.xml\n"
            )
            resources["/robots.txt"] = robots_txt(robots)
        result.append(Host(host_name(i), i, resources))
    seeds = [f"http://{host_name(i)}/" for i in range(hosts)]
    return SimWeb(result, outside=OUTSIDE), seeds
