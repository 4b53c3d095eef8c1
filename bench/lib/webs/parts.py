"""What the generated webs are made of: Slovenian-looking text, plain pages of links,
images, robots.txt and sitemaps (all deterministic for a ``random.Random``)."""

from __future__ import annotations

import random

from testkit.simweb.server import Resource, html

_WORDS = (
    "vlada republika slovenija ministrstvo urad javni razpis sklep odločba zakon uredba "
    "pravilnik predlog sprememba občina državljan državljani prebivalci podjetje storitev "
    "storitve vloga obrazec rok postopek pritožba uradni list objava obvestilo poročilo "
    "program projekt sredstva evropski sklad razvoj okolje prostor zdravje šolstvo kultura "
    "kmetijstvo gozdarstvo promet infrastruktura energija podnebje varnost policija sodišče "
    "pravica dolžnost podatki varstvo osebnih dostop informacije javnega značaja seja "
    "odbor komisija minister ministrica državni sekretar generalni direktorat sektor služba "
    "izvajanje nadzor inšpekcija pregled ukrep ukrepi pomoč subvencija finančna davčna "
    "uprava proračun leto mesec teden dan dopolnitev usklajevanje sodelovanje javnost "
    "mnenje posvetovanje priprava sprejem veljavnost začetek konec obdobje izvedba "
    "sofinanciranje upravičenci merila pogoji prijava oddaja elektronsko prek portala "
    "čezmejni žičnica šumnik življenjski položaj življenje učenje "
    "in ter ali za na v z s pri po od do o kot da se je so bo bodo bil bila lahko ki"
)
WORDS = _WORDS.split()
# The plain pages' smaller vocabulary, without diacritics, and their sections.
_ASCII_WORDS = (
    "vlada ministrstvo urad razpis sklep zakon uredba pravilnik obvestilo porocilo program "
    "projekt sredstva razvoj okolje prostor zdravje kultura promet varnost podatki seja "
    "odbor komisija ukrep pomoc subvencija proracun javnost posvet izvedba pogoji prijava"
)
ASCII_WORDS = _ASCII_WORDS.split()
SECTION_SLUGS = ["novice", "dokumenti", "storitve", "predpisi", "projekti", "o-nas", "zaposlitve"]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(600)


def sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 18))
    if len(words) > 9:
        words[rng.randint(3, len(words) - 4)] += ","
    return " ".join(words).capitalize() + "."


def text(rng: random.Random, chars: int) -> str:
    """Sentences of at least ``chars`` characters in all."""
    out: list[str] = []
    n = 0
    while n < chars:
        s = sentence(rng)
        out.append(s)
        n += len(s) + 1
    return " ".join(out)


def ascii_text(rng: random.Random, words: int) -> str:
    """One sentence of ``words`` words of the plain pages' vocabulary."""
    return " ".join(rng.choices(ASCII_WORDS, k=words)).capitalize() + "."


def link_page(title: str, body: str, links: list[str], images: list[str]) -> Resource:
    """A plain page: images in the header, a title, a paragraph and a list of links."""
    items = "".join(f'<li><a href="{u}">{u}</a></li>' for u in links)
    imgs = "".join(f'<img src="{src}" alt="slika">' for src in images)
    return html(
        f"<!DOCTYPE html><html lang='sl'><head><meta charset='utf-8'><title>{title}</title>"
        f"</head><body><header>{imgs}</header><h1>{title}</h1><p>{body}</p>"
        f"<ul>{items}</ul></body></html>"
    )


def image(body: bytes, png: bool = True) -> Resource:
    return Resource(body, headers={"Content-Type": f"image/{'png' if png else 'jpeg'}"})


def image_bytes(rng: random.Random, png: bool, size: int) -> bytes:
    head = b"\x89PNG\r\n\x1a\n" if png else b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
    return head + rng.randbytes(size - len(head))


def robots_txt(body: str) -> Resource:
    return Resource(body.encode(), headers={"Content-Type": "text/plain"})


def sitemap_xml(urls: list[str]) -> Resource:
    body = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'
    )
    return Resource(xml.encode(), headers={"Content-Type": "application/xml"})
