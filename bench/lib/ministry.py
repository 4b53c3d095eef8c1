"""Pages of simulated Slovenian ministries (``www.<area>.gov.si``), built like government
sites: ``make_site`` gives a site's template, ``render`` a page in it, ``news`` a news item.

Every page has a heavy template: a header (logo, "Republika Slovenija - Ministrstvo za ...",
a search form with a CSRF token, a language link), a 20-40 item menu, breadcrumbs, a cookie
banner ("Spletno mesto uporablja piškotke...", first or last in ``<body>``), a sidebar of
three link blocks, and a footer with address, phone, e-mail, office hours, a newsletter form
and 40-55 links: 72-91 % (median 84 %) of a short news item's text. Three markup styles:
``semantic`` (header, nav, main > article, aside, footer), ``div`` (``<div class>`` soup
only, with class names such as ``c1``, ``hd`` or ``cc-window`` that no keyword list knows)
and ``mixed`` (header and footer tags, the rest divs). The text comes from a Slovenian
vocabulary with an English twin, plus stock phrases that many different press releases
share.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

_VOCAB = """vlada=government republika=republic ministrstvo=ministry urad=office javni=public
razpis=tender sklep=decision odločba=ruling zakon=act uredba=decree pravilnik=rules
predlog=proposal sprememba=amendment občina=municipality državljani=citizens podjetje=company
prebivalci=residents storitev=service vloga=application obrazec=form rok=deadline
postopek=procedure pritožba=appeal objava=publication obvestilo=notice poročilo=report
program=programme projekt=project sredstva=funds evropski=european sklad=fund razvoj=growth
okolje=environment prostor=space zdravje=health šolstvo=schooling kultura=culture
kmetijstvo=agriculture gozdarstvo=forestry promet=transport energija=energy podnebje=climate
varnost=safety policija=police sodišče=court pravica=right dolžnost=duty podatki=data
varstvo=protection dostop=access informacije=information seja=session odbor=committee
komisija=commission minister=minister sekretar=secretary direktorat=directorate
sektor=sector služba=department izvajanje=implementation nadzor=supervision pomoč=aid
inšpekcija=inspectorate pregled=review ukrep=measure subvencija=subsidy davčna=tax
uprava=administration proračun=budget leto=year mesec=month teden=week javnost=public
dopolnitev=supplement usklajevanje=coordination sodelovanje=cooperation mnenje=opinion
posvetovanje=consultation priprava=preparation sprejem=adoption veljavnost=validity
začetek=start konec=end obdobje=period izvedba=execution sofinanciranje=cofinancing
upravičenci=beneficiaries merila=criteria pogoji=conditions prijava=registration
oddaja=submission elektronsko=electronically portal=portal čezmejni=crossborder
življenjski=life položaj=situation učenje=learning zaposlovanje=employment
pokojnina=pension družina=family otroci=children šola=school bolnišnica=hospital
cesta=road železnica=railway voda=water gozd=forest kmetje=farmers živila=food
državni=state zbor=assembly poslanci=deputies župan=mayor regija=region lokalni=local
skupnost=community digitalizacija=digitalisation naložba=investment gradnja=construction
dovoljenje=permit nesreča=accident požar=fire poplave=floods sanacija=recovery
odpadki=waste čistilna=treatment naprava=plant zavarovanje=insurance plača=salary
in=and za=for na=on v=in z=with pri=at po=after od=from do=until o=about kot=as da=that
je=is so=are bo=will lahko=can ki=which tudi=also še=still"""
EN: dict[str, str] = dict(p.split("=") for p in _VOCAB.split())
FUNC = [p.split("=")[0] for line in _VOCAB.splitlines()[-2:] for p in line.split()]
CONTENT = [w for w in EN if w not in FUNC]
STOCK = [
    ("Več informacij je na voljo na spletni strani ministrstva.",
     "More information is available on the ministry's website."),
    ("Rok za oddajo vlog je 30 dni od objave v Uradnem listu Republike Slovenije.",
     "The deadline is 30 days from publication in the Official Gazette."),
    ("Vlada je na današnji seji sprejela sklep o tem.",
     "The Government adopted a decision on this at today's session."),
    ("Ministrstvo poziva vse upravičence, da vloge oddajo pravočasno.",
     "The ministry calls on all beneficiaries to apply on time."),
    ("Gradivo za medije je objavljeno v priponki.", "Media material is attached."),
]  # fmt: skip
AREAS = [
    ("finance", "Finance"), ("zdravje", "Health"), ("okolje in prostor", "the Environment"),
    ("kmetijstvo, gozdarstvo in prehrano", "Agriculture, Forestry and Food"),
    ("kulturo", "Culture"), ("notranje zadeve", "the Interior"), ("pravosodje", "Justice"),
    ("obrambo", "Defence"), ("infrastrukturo", "Infrastructure"),
    ("delo, družino, socialne zadeve in enake možnosti", "Labour, Family and Social Affairs"),
]  # fmt: skip
SECTIONS = [
    ("Novice", "News"), ("Področja dela", "Areas of work"), ("Dokumenti", "Documents"),
    ("O ministrstvu", "About us"), ("Kontakt", "Contact"), ("Javna naročila", "Procurement"),
    ("Zaposlitve", "Jobs"), ("Predpisi", "Legislation"), ("Projekti", "Projects"),
    ("Evropska sredstva", "EU funds"), ("Sporočila za javnost", "Press releases"),
    ("Pogosta vprašanja", "FAQ"),
]  # fmt: skip
_T = """rs=Republika Slovenija|Republic of Slovenia; mz=Ministrstvo za|Ministry of; go=Išči|Go
skip=Skoči na vsebino|Skip to content; search=Iskalnik|Search; lang=English|Slovenščina
cookie=Spletno mesto uporablja piškotke za zagotavljanje boljše uporabniške izkušnje in \
spremljanje statistike obiska. Z nadaljnjo uporabo se strinjate z uporabo piškotkov.|This \
website uses cookies to provide a better user experience and to collect visit statistics. By \
continuing to use it you agree to the use of cookies.
ok=Sprejmem|Accept; no=Zavrni|Reject; more=Več o piškotkih|More about cookies; home=Domov|Home
pub=Objavljeno|Published; upd=Zadnja sprememba|Last modified; views=Število ogledov|Views
rel=Sorodne novice|Related news; contact=Kontakt|Contact; news=Prijava na e-novice|Newsletter
hours=Uradne ure: od ponedeljka do petka od 9. do 12. ure|Office hours: Monday to Friday 9-12
copy=© 2024 Republika Slovenija, vse pravice pridržane|© 2024 Republic of Slovenia
share=Deli: Facebook X LinkedIn E-pošta|Share: Facebook X LinkedIn E-mail
useful=Uporabne povezave|Useful links; printed=Natisnjeno s spletnega mesta|Printed from"""
_ENTRIES = (x.strip().split("=", 1) for x in _T.replace("\n", ";").split(";"))
T: dict[str, dict[str, str]] = {"sl": {}, "en": {}}
for _key, _value in _ENTRIES:
    T["sl"][_key], T["en"][_key] = _value.split("|")
USEFUL = ["Vlada Republike Slovenije", "E-uprava", "E-demokracija", "Državni zbor",
          "Portal GOV.SI", "Uradni list", "SPOT", "Evropska komisija"]  # fmt: skip
CLASSES = {
    "header": "glava region-top hd top-bar", "nav": "meni main-menu navbar mm-wrap",
    "main": "vsebina content-main col-md-8 c1", "aside": "stranski sidebar-right col-md-4 c2",
    "footer": "noga site-footer region-bottom ft", "crumbs": "drobtinice breadcrumb pot bc",
    "cookie": "cookie-bar piskotki-obvestilo cc-window gdpr",
    "related": "sorodne related-news box-3 teaser-list",
}  # fmt: skip
DASH, RAQUO = "\u2013", "\u203a"
Sent = tuple[str, ...]
R = random.Random


@dataclass
class Site:
    n: int
    style: str  # semantic | div | mixed
    cls: dict[str, str]
    nav: list[tuple[str, str]]
    side: list[list[tuple[str, str]]]  # three blocks; a block's first label is its heading
    foot: list[tuple[str, str]]
    flags: set[str]  # cookie_top related_side updated_foot sid_links teasers
    area: tuple[str, str] = ("", "")
    host: str = ""


@dataclass
class Page:
    title: Sent | str
    paras: list[list[Sent]] = field(default_factory=list)  # ("#", ...) alone is a heading
    body: str = ""  # ready HTML (lists, forms) instead of paras; %TOKEN% is the CSRF token
    date: str = ""
    views: int | None = None
    updated: str | None = None
    related: list[Sent] = field(default_factory=list)
    side_order: tuple[int, ...] = (0, 1, 2)
    path: str = "/novice/"
    token: str = ""
    lang: str = "sl"


def sentence(rng: R, lo: int = 8, hi: int = 16) -> Sent:
    words = [rng.choice(FUNC) if rng.random() < 0.3 else rng.choice(CONTENT) for _ in range(hi)]
    return tuple(words[: rng.randint(lo, hi)])


def say(s: Sent, lang: str, end: str = ".") -> str:
    if s[0].startswith("@"):
        return STOCK[int(s[0][1:])][lang == "en"]
    text = " ".join(w if lang == "sl" else EN[w] for w in s)
    return text[0].upper() + text[1:] + end


def label(rng: R) -> tuple[str, str]:
    a, b = rng.sample(CONTENT, 2)
    return f"{a.capitalize()} {b}", f"{EN[a].capitalize()} {EN[b]}"


def slug(text: str) -> str:
    return "-".join(text.lower().replace(",", "").split()[:6])


def make_site(n: int, rng: R) -> Site:
    nav = SECTIONS[: rng.randint(8, 12)]
    nav += [label(rng) for _ in range(rng.randint(20, 40) - len(nav))]
    side = [[label(rng) for _ in range(rng.randint(5, 8))] for _ in range(3)]
    foot = [label(rng) for _ in range(rng.randint(15, 30))] + [(u, u) for u in USEFUL]
    names = ["cookie_top", "related_side", "updated_foot", "sid_links", "teasers"]
    cls = {k: rng.choice(v.split()) for k, v in CLASSES.items()}
    flags = {f for f in names if rng.random() < 0.5}
    area = AREAS[n % len(AREAS)]
    host = f"www.{area[0].split(',')[0].split()[0]}.gov.si"
    return Site(n, ("semantic", "div", "mixed")[n % 3], cls, nav, side, foot, flags, area, host)


def _box(site: Site, part: str, inner: str) -> str:
    semantic = {"semantic": set(CLASSES), "div": set(), "mixed": {"header", "footer"}}[site.style]
    tag = {"crumbs": "nav", "cookie": "div", "related": "aside"}.get(part, part)
    tag = tag if part in semantic else "div"
    return f'<{tag} class="{site.cls[part]}">{inner}</{tag}>'


def _content(site: Site, p: Page) -> list[str]:
    t, lang = T[p.lang], p.lang
    meta = f"{t['pub']}: {p.date}" if p.date else ""
    meta += f" | {t['views']}: {p.views}" if p.views is not None else ""
    html = [f"<h1>{_title(p)}</h1>", f'<p class="meta">{meta}</p>' if meta else ""]
    for x in p.paras:
        heading = x[0][0] == "#"
        html.append(f"<h2>{say(x[0][1:], lang, '')}</h2>" if heading else
                    "<p>" + " ".join(say(s, lang) for s in x) + "</p>")  # fmt: skip
    html.append(p.body.replace("%TOKEN%", p.token))
    if p.updated and "updated_foot" not in site.flags:
        html.append(f'<p class="updated">{t["upd"]}: {p.updated}</p>')
    return html


def _title(p: Page) -> str:
    return p.title if isinstance(p.title, str) else say(p.title, p.lang, "")


def render(site: Site, p: Page, *, print_view: bool = False) -> str:
    """The page as ``site`` serves it (or its print view)."""
    t, en = T[p.lang], p.lang == "en"
    sid = f";jsessionid={p.token[:16]}" if "sid_links" in site.flags else ""
    ministry = f"{t['mz']} {site.area[en]}"

    def links(labels: list[tuple[str, str]], prefix: str = "/") -> str:
        li = (f'<li><a href="{prefix}{slug(x[0])}/{sid}">{x[en]}</a></li>' for x in labels)
        return "<ul>" + "".join(li) + "</ul>"

    head = (f'<head><meta charset="utf-8"><title>{_title(p)} | {ministry}</title><link '
            f'rel="canonical" href="https://{site.host}{p.path}"><script>var _paq=[];</script>'
            '<link rel="stylesheet" href="/static/site.css"></head>')  # fmt: skip
    body = _content(site, p)
    if print_view:
        wrap = ('div class="print-body"', "article", 'div id="content"')[site.n // 3 % 3]
        return (f'<html lang="{p.lang}">{head}<body onload="window.print()"><div class="print-'
                f'head">{t["rs"]} {DASH} {ministry}</div><{wrap}>{"".join(body)}'
                f"</{wrap.split()[0]}>"
                f'<p>{t["printed"]} https://{site.host}{p.path}</p></body></html>')  # fmt: skip
    rel = f"<h2>{t['rel']}</h2>" + links([(say(r, "sl", ""), say(r, "en", ""))
                                          for r in p.related], "/novice/")  # fmt: skip
    if p.related and "related_side" not in site.flags:
        body.append(_box(site, "related", rel))
    body.append(f'<div class="share">{t["share"]}</div>')
    side = "".join(f"<h2>{b[0][en]}</h2>{links(b[1:])}" for b in map(site.side.__getitem__,
                   p.side_order))  # fmt: skip
    side += rel if p.related and "related_side" in site.flags else ""
    if site.style == "semantic":
        main = f'<main id="vsebina" class="{site.cls["main"]}"><article>{"".join(body)}'
        main += f"</article></main>{_box(site, 'aside', side)}"
    else:
        # Some sites name their content column (an id for the skip link, a class), some
        # do not (class="col-md-8"): those leave main_text to find the template by itself.
        named = ' id="vsebina"' if site.n % 4 == 1 else ""
        # data-bench marks the region for the benchmark's ceiling only; govsi never reads it.
        main = f'<div{named} class="{site.cls["main"]}" data-bench="content">'
        main += f"{''.join(body)}</div>"
        main = f'<div class="wrap">{main}{_box(site, "aside", side)}</div>'
    token = f'<input type="hidden" name="csrf_token" value="{p.token}">'
    header = _box(site, "header", (
        f'<a class="skip" href="#vsebina">{t["skip"]}</a><a href="/{sid}"><img src="/grb.svg" '
        f'alt="{t["rs"]}"><span>{t["rs"]} {DASH} {ministry}</span></a><form action="/iskanje/">'
        f'<label>{t["search"]}</label><input name="q">{token}<button>{t["go"]}</button></form>'
        f'<a href="/{"sl" if en else "en"}/">{t["lang"]}</a>'))  # fmt: skip
    crumbs = _box(site, "crumbs", f'<a href="/">{t["home"]}</a> {RAQUO} <a href="/novice/">'
                  f"{site.nav[0][en]}</a> {RAQUO} <span>{_title(p)}</span>")  # fmt: skip
    cookie = _box(site, "cookie", f"<p>{t['cookie']}</p><button>{t['ok']}</button><button>"
                  f'{t["no"]}</button><a href="/piskotki/">{t["more"]}</a>')  # fmt: skip
    upd = f"<p>{t['upd']}: {p.updated}</p>" if p.updated and "updated_foot" in site.flags else ""
    footer = _box(site, "footer", (
        f"<h2>{t['contact']}</h2><p>{ministry}<br>Štefanova ulica {site.n + 1}, 1000 Ljubljana"
        f"<br>T: 01 478 {site.n + 10} 00<br>E: gp.m{site.n}@gov.si<br>{t['hours']}</p>"
        f"{links(site.nav[:15])}<h2>{t['useful']}</h2>{links(site.foot)}"
        f'<form action="/e-novice/"><label>{t["news"]}</label><input name="email">{token}'
        f"<button>OK</button></form>{upd}"
        f"<p>{t['copy']}</p>"))  # fmt: skip
    top, end = (cookie, "") if "cookie_top" in site.flags else ("", cookie)
    nav = _box(site, "nav", links(site.nav))
    return (f'<!DOCTYPE html><html lang="{p.lang}">{head}<body>{top}{header}{nav}{crumbs}{main}'
            f"{footer}{end}</body></html>")  # fmt: skip


def pub_date(rng: R) -> str:
    return f"{rng.randint(1, 27)}. {rng.randint(1, 12)}. {rng.choice((2023, 2024))}"


def new_token(rng: R) -> str:
    return f"{rng.getrandbits(128):032x}"


def related_box(rng: R) -> list[Sent]:
    return [sentence(rng, 4, 8) for _ in range(rng.randint(3, 5))]


def news(rng: R, lo: int, hi: int) -> Page:
    """A news item of lo..hi sentences; a few are stock phrases, long ones have subheadings."""
    n = rng.randint(lo, hi)
    sents = [(f"@{rng.randrange(len(STOCK))}",) if rng.random() < 0.15 else sentence(rng)
             for _ in range(n)]  # fmt: skip
    paras: list[list[Sent]] = []
    while sents:
        if n >= 20 and rng.random() < 0.3:
            paras.append([("#", *sentence(rng, 3, 6))])
        k = rng.randint(2, 5)
        paras, sents = [*paras, sents[:k]], sents[k:]
    title = sentence(rng, 4, 9)
    related = related_box(rng) if rng.random() < 0.4 else []
    return Page(title, paras, date=pub_date(rng), related=related,
                path=f"/novice/{'-'.join(title[:5])}/", token=new_token(rng))  # fmt: skip
