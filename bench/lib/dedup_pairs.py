"""Labelled page pairs for near-duplicate detection, built like Slovenian government sites.

``build_pairs(seed=0)`` gives 650 deterministic ``Pair(a_html, b_html, duplicate, kind)``, 325
duplicates and 325 not, on ten simulated ministries (``bench.lib.ministry``: heavy templates
in three markup styles, a Slovenian vocabulary with an English twin).

Labelling rule: a pair is a *duplicate* when a crawler loses nothing by keeping only one of the
two pages: the same main content, whatever the template, URL, tokens, counters and boxes.

Duplicates (25 pairs each):
  exact_copy            identical HTML (the page under another URL)
  print_view            the page and its ``?print=1`` view (no menu, sidebar or footer)
  mirror_site           the same item in another ministry's template (a mirrored section)
  near_date             the publication date changed
  near_counter          the view counter ("Število ogledov") changed
  near_updated          the "Zadnja sprememba" timestamp changed (in the article or footer)
  near_token            only the CSRF token and the session id (``;jsessionid=``) changed
  near_sidebar_order    the sidebar's blocks reordered
  near_related_box      another random "Sorodne novice" box (in the article or the sidebar)
  long_sentence_changed a long article (30-60 sentences) with one sentence rewritten
  long_paragraph_added  a long article with a paragraph of 1-3 sentences added
  list_new_item         a 20-item news list with 1 or 2 new items on top (>= 90 % items same)
  empty_identical       the same near-empty page (form, empty search, contact card) twice
Not duplicates:
  short_news_different  (100) two different news items of 2-5 sentences, same template
  list_page2            (50)  list page 1 vs page 2 (disjoint, or sharing the 5 items that
                              new ones pushed over)
  translation           (45)  the same item in Slovenian and in English (English template)
  long_different        (60)  two different long articles on the same template
  empty_different       (70)  two different near-empty pages: different forms, contact cards
                              of two departments, empty searches for different queries
Lists sharing between 50 % and 90 % of their items are left out as ambiguous.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from bench.lib.ministry import (
    Page,
    R,
    Sent,
    Site,
    label,
    make_site,
    new_token,
    news,
    pub_date,
    related_box,
    render,
    say,
    sentence,
    slug,
)

FORMS = ["Prijava na e-novice", "Obrazec za pritožbo", "Vprašanje ministrstvu",
         "Prijava na dogodek", "Zahteva za dostop do informacij javnega značaja",
         "Naročilo publikacij", "Prijava nepravilnosti", "Vloga za subvencijo",
         "Pobuda za spremembo predpisa"]  # fmt: skip
FIELDS = ["Ime in priimek", "E-naslov", "Telefon", "Naslov", "Pošta", "Davčna številka",
          "Sporočilo", "Zadeva", "Naziv podjetja", "Priponka", "Datum",
          "Strinjam se s pogoji"]  # fmt: skip
QUERIES = ["vloga", "potni list", "pokojnina", "davek", "subvencija", "razpis", "dovoljenje",
           "odločba", "štipendija"]  # fmt: skip
NAMES = ["Ana Novak", "Maja Horvat", "Nina Kovačič", "Marko Krajnc", "Luka Zupančič",
         "Jure Potočnik", "Petra Vidmar"]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Pair:
    a_html: str
    b_html: str
    duplicate: bool
    kind: str


def _edit(rng: R, paras: list[list[Sent]], add: bool) -> list[list[Sent]]:
    out = [list(x) for x in paras]
    if add:
        out.insert(rng.randint(1, len(out)), [sentence(rng) for _ in range(rng.randint(1, 3))])
    else:
        x = rng.choice([x for x in out if x[0][0] != "#"])
        x[rng.randrange(len(x))] = sentence(rng)
    return out


def _list(rng: R, site: Site, items: list[tuple[Sent, str, Sent]], n: int) -> Page:
    """Page ``n`` of the news list (20 items: title link, date, perhaps a teaser)."""
    tag, outer = ("div", "div") if site.style == "div" else ("li", "ul")
    teasers = "teasers" in site.flags

    def _p(x: Sent) -> str:
        return f"<p>{say(x, 'sl')}</p>"

    rows = "".join(
        f'<{tag} class="item"><a href="/novice/{"-".join(s[:5])}/">{say(s, "sl", "")}</a> '
        f'<span class="date">{d}</span>{_p(x) if teasers else ""}</{tag}>'
        for s, d, x in items)  # fmt: skip
    pager = " ".join(f"<b>{i}</b>" if i == n else f'<a href="?stran={i}">{i}</a>'
                     for i in range(1, 8))  # fmt: skip
    body = f'<{outer} class="news-list">{rows}</{outer}><div class="pager">{pager} Naprej »</div>'
    return Page("Novice", body=body, path=f"/novice/?stran={n}", token=new_token(rng))


def _empty(rng: R, kind: str, key: int) -> Page:
    """A near-empty page: a form, an empty search result or a department's contact card."""
    if kind == "form":
        fields = "".join(f'<label>{f}</label><input name="f{i}">'
                         for i, f in enumerate(rng.sample(FIELDS, rng.randint(3, 6))))  # fmt: skip
        body = (f"<p>{say(sentence(rng), 'sl')}</p><form method=\"post\"><input type=\"hidden\" "
                f'name="csrf" value="%TOKEN%">{fields}<button>Pošlji</button></form>')  # fmt: skip
        return Page(FORMS[key], body=body, path=f"/obrazci/{slug(FORMS[key])}/")
    if kind == "search":
        q = QUERIES[key]
        body = (f'<form action="/iskanje/"><input name="q" value="{q}"><button>Išči</button>'
                f"</form><p>Za iskalni niz »{q}« ni zadetkov.</p><p>Poskusite z drugačnim "
                "iskalnim nizom ali uporabite napredno iskanje.</p>")  # fmt: skip
        return Page("Rezultati iskanja", body=body, path=f"/iskanje/?q={q}")
    unit = label(rng)[0]
    body = (f"<p>Vodja: {rng.choice(NAMES)}</p><p>Naslov: Štefanova ulica 5, 1000 Ljubljana</p>"
            f"<p>Telefon: 01 478 {rng.randint(10, 99)} {rng.randint(10, 99)}</p><p>E-pošta: "
            f"{slug(unit).replace('-', '.')}@gov.si</p>")  # fmt: skip
    return Page(f"Sektor za {unit.lower()}", body=body, path=f"/kontakt/{slug(unit)}/")


def _build(kind: str, r: R, s: Site, o: Site) -> tuple[str, str]:
    """One pair of ``kind`` on site ``s`` (``o``: another site, for mirrors)."""
    if kind in ("short_news_different", "long_different"):
        p, q = (news(r, *((2, 5) if kind[0] == "s" else (30, 60))) for _ in "pq")
        return render(s, p), render(s, replace(q, date=p.date) if r.random() < 0.5 else q)
    if kind.startswith("list_"):
        items = [(sentence(r, 5, 10), pub_date(r), sentence(r, 6, 12)) for _ in range(40)]
        if kind == "list_new_item":  # 1 or 2 new items on top: page 1 before and after
            k = r.choice((1, 1, 2))
            before, after = _list(r, s, items[k : k + 20], 1), _list(r, s, items[:20], 1)
            return render(s, before), render(s, after)
        second = items[20:40] if r.random() < 0.5 else items[15:35]  # 5 pushed over to page 2
        return render(s, _list(r, s, items[:20], 1)), render(s, _list(r, s, second, 2))
    if kind.startswith("empty_"):
        kinds = r.choice(["form form", "form contact", "contact contact", "search search",
                          "search form", "search contact"]).split()  # fmt: skip
        keys = r.sample(range(len(QUERIES)), 2)
        p, q = _empty(r, kinds[0], keys[0]), _empty(r, kinds[1], keys[1])
        if kind == "empty_identical":
            q = replace(p, path=p.path + ("&" if "?" in p.path else "?") + "ref=menu")
        return render(s, replace(p, token=new_token(r))), render(s, replace(q, token=new_token(r)))
    p = news(r, *{"near": (3, 12), "long": (30, 60)}.get(kind[:4], (2, 30)))
    q = replace(p, token=new_token(r))
    if kind == "exact_copy":
        q = p
    elif kind == "print_view":
        return render(s, p), render(s, q, print_view=True)
    elif kind == "mirror_site":
        return render(s, p), render(o, replace(q, related=[]))
    elif kind == "translation":
        q = replace(q, lang="en", path="/en" + p.path)
    elif kind == "near_date":
        q.date = pub_date(r)
    elif kind == "near_counter":
        p.views = r.randint(10, 5000)
        q.views = p.views + r.randint(1, 300)
    elif kind == "near_updated":
        p.updated, q.updated = f"{pub_date(r)} ob 9:15", f"{pub_date(r)} ob 14:02"
    elif kind == "near_sidebar_order":
        q.side_order = r.choice([(0, 2, 1), (1, 2, 0), (2, 1, 0)])
    elif kind == "near_related_box":
        p.related, q.related = related_box(r), related_box(r)
    elif kind.startswith("long_"):
        q.paras = _edit(r, p.paras, add=kind == "long_paragraph_added")
    elif kind != "near_token":
        raise ValueError(kind)
    return render(s, p), render(s, q)


KINDS = {  # kind: (duplicate, pairs)
    "exact_copy": (True, 25), "print_view": (True, 25), "mirror_site": (True, 25),
    "near_date": (True, 25), "near_counter": (True, 25), "near_updated": (True, 25),
    "near_token": (True, 25), "near_sidebar_order": (True, 25), "near_related_box": (True, 25),
    "long_sentence_changed": (True, 25), "long_paragraph_added": (True, 25),
    "list_new_item": (True, 25), "empty_identical": (True, 25),
    "short_news_different": (False, 100), "list_page2": (False, 50), "translation": (False, 45),
    "long_different": (False, 60), "empty_different": (False, 70),
}  # fmt: skip


def build_pairs(seed: int = 0) -> list[Pair]:
    rng = random.Random(seed)
    sites = [make_site(n, rng) for n in range(10)]
    pairs = []
    for kind, (duplicate, count) in KINDS.items():
        r = random.Random(f"{seed}:{kind}")  # a kind added or resized leaves the others alone
        for _ in range(count):
            s, o = r.sample(sites, 2)
            pairs.append(Pair(*_build(kind, r, s, o), duplicate, kind))
    return pairs
