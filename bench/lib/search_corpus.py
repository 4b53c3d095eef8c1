"""A generated Slovenian web whose relevant pages are known, for ``bench.search_quality``.

Twelve topics of everyday e-government (a two-word term each: *javno naročilo*, *stalno
prebivališče*, ...). Per topic: a hub page titled by the term that names it once in its
text (relevance 2), three articles that use it in other inflected forms and a news item
that repeats it (1), a PDF that uses it and a term of its own (1; 2 for
the document-only query), and two distractors that share one of its words (*vremenska
napoved* beside *davčna napoved*: 0); then filler pages of unrelated sentences. Hubs get
the most in-links, as a site's section pages do.

Queries per topic, by kind: ``lemma`` (the base forms), ``inflected`` (a form no page
spells the same way as the query, or another case), ``ascii`` (an inflected form without
diacritics), ``phrase`` (a quoted inflected phrase) and ``document`` (the PDF's own term,
inflected: only the PDF answers).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime

from govsi.search.analysis import fold
from govsi.search.document import SearchDocument


@dataclass(frozen=True)
class Topic:
    title: str
    forms: tuple[str, ...]  # the term in several cases, as pages write it
    inflected: str  # a query form
    phrase: str  # a quoted query form
    doc_term: tuple[str, str]  # the PDF's own term as written, and as a query asks it
    distractors: tuple[str, str]  # share one word of the term


TOPICS = [
    Topic(
        "Javno naročilo",
        ("javna naročila", "javnih naročil", "javnim naročilom", "javnega naročila"),
        "javnimi naročili",
        "javnih naročil",
        ("revizijski zahtevek", "revizijskih zahtevkov"),
        ("javni prevoz", "naročilo publikacij"),
    ),
    Topic(
        "Stalno prebivališče",
        ("stalnega prebivališča", "stalnem prebivališču", "stalno prebivališče"),
        "stalnim prebivališčem",
        "stalnem prebivališču",
        ("potrdilo o prijavi", "potrdila o prijavi"),
        ("stalna razstava", "začasno prebivališče"),
    ),
    Topic(
        "Gradbeno dovoljenje",
        ("gradbenega dovoljenja", "gradbenih dovoljenj", "gradbeno dovoljenje"),
        "gradbenim dovoljenjem",
        "gradbenega dovoljenja",
        ("projektna dokumentacija", "projektne dokumentacije"),
        ("gradbena jama", "dovoljenje za lov"),
    ),
    Topic(
        "Socialna pomoč",
        ("socialne pomoči", "socialno pomočjo", "socialna pomoč"),
        "socialni pomoči",
        "socialne pomoči",
        ("dohodkovni cenzus", "dohodkovnega cenzusa"),
        ("socialna mreža", "pravna pomoč"),
    ),
    Topic(
        "Davčna napoved",
        ("davčne napovedi", "davčno napovedjo", "davčna napoved"),
        "davčnih napovedi",
        "davčne napovedi",
        ("informativni izračun", "informativnega izračuna"),
        ("davčna številka", "vremenska napoved"),
    ),
    Topic(
        "Osebna izkaznica",
        ("osebne izkaznice", "osebno izkaznico", "osebna izkaznica"),
        "osebnih izkaznic",
        "osebno izkaznico",
        ("biometrični podatki", "biometričnih podatkov"),
        ("osebna izkušnja", "zdravstvena izkaznica"),
    ),
    Topic(
        "Potni list",
        ("potnega lista", "potnem listu", "potni list"),
        "potnih listov",
        "potnega lista",
        ("veljavnost dokumenta", "veljavnosti dokumenta"),
        ("potni stroški", "uradni list"),
    ),
    Topic(
        "Vozniško dovoljenje",
        ("vozniškega dovoljenja", "vozniških dovoljenj", "vozniško dovoljenje"),
        "vozniškim dovoljenjem",
        "vozniškega dovoljenja",
        ("zdravniško spričevalo", "zdravniškega spričevala"),
        ("vozniški izpit", "dovoljenje za prodajo"),
    ),
    Topic(
        "Otroški dodatek",
        ("otroškega dodatka", "otroškem dodatku", "otroški dodatek"),
        "otroških dodatkov",
        "otroškega dodatka",
        ("dohodkovni razred", "dohodkovnih razredov"),
        ("otroško igrišče", "dodatek za prevoz"),
    ),
    Topic(
        "Kmetijska subvencija",
        ("kmetijskih subvencij", "kmetijske subvencije", "kmetijska subvencija"),
        "kmetijskim subvencijam",
        "kmetijskih subvencij",
        ("neposredno plačilo", "neposrednih plačil"),
        ("kmetijska zemljišča", "subvencija za elektriko"),
    ),
    Topic(
        "Okoljevarstveno soglasje",
        ("okoljevarstvenega soglasja", "okoljevarstvenih soglasij", "okoljevarstveno soglasje"),
        "okoljevarstvenim soglasjem",
        "okoljevarstvenega soglasja",
        ("presoja vplivov", "presoje vplivov"),
        ("okoljevarstvena organizacija", "soglasje staršev"),
    ),
    Topic(
        "Denarno nadomestilo",
        ("denarnega nadomestila", "denarnih nadomestil", "denarno nadomestilo"),
        "denarnim nadomestilom",
        "denarnega nadomestila",
        ("zavarovalna doba", "zavarovalne dobe"),
        ("denarna kazen", "nadomestilo plače"),
    ),
]

QUERY_KINDS = ("lemma", "inflected", "ascii", "phrase", "document")

_FILLER_TEXT = (
    "Vlada je na seji obravnavala poročilo o delu agencije. Ministrstvo je objavilo novice "
    "o projektih. Predstavniki občin so se srečali z ministrom. Zakon določa postopke in "
    "roke. Urad sprejema vloge v času uradnih ur. Informacije so na voljo na spletni strani. "
    "Svet je sprejel sklep o spremembi pravilnika. Dogodek bo potekal v dvorani. Strokovna "
    "komisija je pregledala predloge. Rezultati bodo objavljeni prihodnji mesec."
)
_FILLER = _FILLER_TEXT.split(". ")


def _filler(rng: random.Random, n: int) -> str:
    return ". ".join(rng.choice(_FILLER) for _ in range(n)) + "."


@dataclass(frozen=True)
class Query:
    text: str
    kind: str
    topic: int
    relevant: dict[int, int]  # page id -> grade


Corpus = tuple[list[SearchDocument], dict[int, int], list["Query"]]


def corpus(filler_pages: int = 600, seed: int = 7) -> Corpus:
    """(documents, in-links per page id, queries with their graded relevant pages)."""
    rng = random.Random(seed)
    docs: list[SearchDocument] = []
    inlinks: dict[int, int] = {}
    queries: list[Query] = []

    def add(title: str, text: str, kind: str = "HTML", links: int = 1) -> int:
        pid = len(docs) + 1
        host = rng.choice(["www.gov.si", "e-uprava.gov.si", "evem.gov.si", "www.fu.gov.si"])
        url = f"https://{host}/{'dokumenti/' if kind != 'HTML' else ''}{pid}"
        docs.append(
            SearchDocument(pid, url, host, kind, title, text, "sl", datetime(2024, 1, 1), 1, "m")
        )
        inlinks[pid] = links
        return pid

    for n, t in enumerate(TOPICS):
        a, b, c = t.forms[0], t.forms[1 % len(t.forms)], t.forms[2 % len(t.forms)]
        # As on a real site: the topic's own page names it in its title and says little,
        # a news item repeats it (BM25 alone puts the news first).
        hub = add(t.title, f"{_filler(rng, 2)} Postopek: {a}. {_filler(rng, 3)}", links=40)
        arts = [
            add(
                f"Novica {n}-{k}",
                f"{_filler(rng, 3)} Spremembe pri {form} začnejo veljati. {_filler(rng, 4)}",
                links=3,
            )
            for k, form in enumerate(t.forms)
        ]
        arts.append(add(f"Novica {n}", f"Novosti: {a}, {b}, {c}. {_filler(rng, 2)}", links=3))
        pdf = add(
            f"Navodila {n}",
            f"{_filler(rng, 2)} Pri {a} je treba predložiti {t.doc_term[0]}. {_filler(rng, 3)}",
            "PDF",
            links=2,
        )
        for d in t.distractors:
            add(
                f"Obvestilo {n}", f"{_filler(rng, 3)} Informacije o {d}. {_filler(rng, 2)}", links=3
            )
        relevant = {hub: 2, pdf: 1, **dict.fromkeys(arts, 1)}
        words = t.title.lower()
        for kind, text in (
            ("lemma", words),
            ("inflected", t.inflected),
            ("ascii", fold(t.inflected)),
            ("phrase", f'"{t.phrase}"'),
        ):
            queries.append(Query(text, kind, n, relevant))
        queries.append(Query(t.doc_term[1], "document", n, {pdf: 2}))
    for k in range(filler_pages):
        add(f"Stran {k}", _filler(rng, 8), links=rng.randint(0, 5))
    return docs, inlinks, queries
