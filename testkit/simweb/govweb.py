"""The standard simulated .gov.si web the end-to-end tests crawl.

Five in-scope hosts (two share an address, one speaks https), three hosts outside
.gov.si, and on them: robots.txt files (present, missing, blocking only us), nested pages,
relative links, <base href>, fragments, URL spellings that canonicalize to one page,
onclick links, <area>, images (one shown on several pages and hosts, one data: URI, one
outside scope), documents (by type, by extension only, a lying extension, a large one),
redirects (one hop and a loop), 404 and 500, windows-1250 pages, and plain text.
"""

from __future__ import annotations

import codecs

from testkit.simweb.documents import make_docx, make_pdf, make_ppt
from testkit.simweb.server import Host, Resource, SimWeb, html, redirect

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
    b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)
GIF = (
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00"
    b"\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)
# Real documents, whose text the crawl reads (page_text) and search finds.
PDF = make_pdf(
    ["Poročilo o javnih naročilih v letu 2025\nObčine so oddale 1204 naročila.",
     "Uredba o javnem naročanju velja za vse občine in ministrstva."],
    title="Letno poročilo o javnih naročilih", date="D:20250301090000+01'00'",
)  # fmt: skip
DOCX = make_docx(
    ["Navodila za potrdilo o stalnem prebivališču", "Vlogo oddate na upravni enoti."],
    title="Navodila",
    modified="2025-02-01T10:00:00Z",
)
PPT = make_ppt(["Predstavitev elektronskih storitev", "Storitve za državljane in podjetja"])
# Dates past what Tantivy takes (1677 to 2262), as real software writes them: "never"
# and Windows' zero. The crawl keeps their text and drops the dates.
FOREVER_PDF = make_pdf(["Večni razpis brez roka veljavnosti"], title="Večni razpis",
                       date="D:99991231235959")  # fmt: skip
DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
OLD_DOCX = make_docx(["Arhivski zapisnik seje sveta"], title="Arhivski zapisnik",
                     modified="1601-01-01T00:00:00Z")  # fmt: skip
BIG_PDF_SIZE = 4 * 1024 * 1024
BIG_PDF = b"%PDF-1.4\n" + b"0" * (BIG_PDF_SIZE - 9)

SUMNIKI = "Čestitke vsem občanom: šola, žaba, čebela. ČŠŽ čšž."


def page(title: str, body: str, head: str = "") -> str:
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{head}</head>"
        f"<body><h1>{title}</h1>{body}</body></html>"
    )


WWW_INDEX = page(
    "GOV.SI",
    """
<nav>
 <a href="podrocja/">Področja</a>
 <a href="./o-vladi">O vladi</a>
 <a href="HTTP://WWW.GOV.SI:80/o-vladi#zgodovina">O vladi, zgodovina</a>
 <a href="/podrocja/../o-vladi">O vladi (dot segments)</a>
 <a href="/novice/?b=2&amp;a=1">Novice</a>
 <a href="/novice/?a=1&b=2#vrh">Novice, vrh</a>
 <a href="/%7Eosebje/">Osebje</a> <a href="/~osebje/">Osebje</a>
 <a href="#vsebina">Na vsebino</a>
</nav>
<a href="mailto:gp@gov.si">pišite</a> <a href="tel:+38614781000">pokličite</a>
<a href="javascript:void(0)">meni</a>
<a href="https://www.google.com/">Google</a> <a href="http://gov.si.example.com/">lažni</a>
<a href="http://notgov.si/">ne gov</a>
<a href="http://evem.gov.si/">eVEM</a> <a href="https://e-uprava.gov.si/">eUprava</a>
<button onclick="location.href='/dogodki/'">Dogodki</button>
<img src="/img/grb.png" alt="grb"> <img src="data:image/png;base64,iVBORw0KGgo=">
<img src="https://www.google.com/logo.png">
<a href="/dokumenti/porocilo.pdf">Poročilo</a>
<a href="/dokumenti/prenos?id=7">Prenos</a>
<a href="/dokumenti/navodila.docx">Navodila</a>
<a href="/dokumenti/lazni.pdf">Lažni PDF</a>
<a href="/dokumenti/velik.pdf">Velik PDF</a>
<a href="/dokumenti/vecni.pdf">Večni razpis</a> <a href="/dokumenti/zapisnik.docx">Zapisnik</a>
<a href="/star-naslov">Stari naslov</a> <a href="/ni-strani">Manjka</a>
<a href="/napaka">Napaka</a> <a href="/zasebno/skrivnost">Zasebno</a>
<map name="m"><area shape="rect" coords="0,0,1,1" href="/zemljevid"></map>
""",
)


def www() -> Host:
    r: dict[str, Resource] = {
        "/robots.txt": Resource(
            b"User-agent: *\nDisallow: /zasebno/\n", headers={"Content-Type": "text/plain"}
        ),
        "/": html(WWW_INDEX),
        "/podrocja/": html(page("Področja", '<a href="a/">A</a> <a href="/">Domov</a>')),
        "/podrocja/a/": html(page("A", '<a href="b/">B</a>')),
        "/podrocja/a/b/": html(page("B", '<a href="c/">C</a>')),
        "/podrocja/a/b/c/": html(page("C", "<p>Dno.</p>")),
        "/o-vladi": html(page("O vladi", '<a href="/">Domov</a><img src="img/grb.png">')),
        "/novice/?a=1&b=2": html(page("Novice", "<p>Ni novic.</p>")),
        "/~osebje/": html(page("Osebje", "<p>Seznam.</p>")),
        "/dogodki/": html(page("Dogodki", "<p>Koledar.</p>")),
        "/zemljevid": html(page("Zemljevid", "<p>Karta.</p>")),
        "/img/grb.png": Resource(PNG, headers={"Content-Type": "image/png"}),
        "/dokumenti/porocilo.pdf": Resource(PDF, headers={"Content-Type": "application/pdf"}),
        "/dokumenti/prenos?id=7": Resource(
            PDF,
            headers={
                "Content-Type": "application/pdf",
                "Content-Disposition": 'attachment; filename="porocilo.pdf"',
            },
        ),
        "/dokumenti/navodila.docx": Resource(
            DOCX, headers={"Content-Type": "application/octet-stream"}
        ),
        "/dokumenti/lazni.pdf": html(page("Lažni PDF", "<p>To je HTML.</p>")),
        "/dokumenti/vecni.pdf": Resource(FOREVER_PDF, headers={"Content-Type": "application/pdf"}),
        "/dokumenti/zapisnik.docx": Resource(OLD_DOCX, headers={"Content-Type": DOCX_TYPE}),
        "/dokumenti/velik.pdf": Resource(
            BIG_PDF, headers={"Content-Type": "application/pdf"}, chunk=65536, pause=0.01
        ),
        "/star-naslov": redirect("/nov-naslov"),
        "/nov-naslov": html(page("Novi naslov", "<p>Preselili smo se.</p>")),
        "/ni-strani": html(page("Ni strani", '<a href="/">Domov</a>'), status=404),
        "/napaka": html(page("Napaka", "<p>Strežnik.</p>"), status=500),
        "/zasebno/skrivnost": html(page("Skrivnost", "<p>Ne za robote.</p>")),
    }
    return Host("www.gov.si", 0, r)


EVEM_INDEX = page(
    "eVEM",
    """
<a href="obrazec">Obrazec</a> <a href="../pomoc">Pomoč</a> <a href="#x">Tu</a>
<span onclick='document.location = "/sumniki"'>Šumniki</span>
<div onclick="window.location.assign('/sumniki-meta');">Meta</div>
<p onclick="window.location.href='http://podatki.e-uprava.gov.si/'">Podatki</p>
<p onclick="location.href = dest">ne literal</p>
<a href="/zanka1">Zanka</a>
<img src="http://www.gov.si/img/grb.png"> <img src="/slike/logo.gif">
""",
    head='<base href="/storitve/">',
)


def evem() -> Host:
    cp1250 = page("Šumniki", f"<p>{SUMNIKI}</p>")
    meta_only = page("Šumniki meta", f"<p>{SUMNIKI}</p>", head='<meta charset="windows-1250">')
    r = {
        "/": html(EVEM_INDEX),
        "/storitve/": html(page("Storitve", '<a href="obrazec">Obrazec</a>')),
        "/storitve/obrazec": html(page("Obrazec", "<form></form>")),
        "/pomoc": html(page("Pomoč", "<p>Pomoč.</p>")),
        "/sumniki": html(cp1250, charset="windows-1250"),
        "/sumniki-meta": Resource(
            meta_only.encode("windows-1250"), headers={"Content-Type": "text/html"}
        ),
        "/slike/logo.gif": Resource(GIF, headers={"Content-Type": "image/gif"}),
        "/zanka1": redirect("/zanka2", 302),
        "/zanka2": redirect("http://evem.gov.si/zanka1", 302),
    }
    return Host("evem.gov.si", 1, r)


def euprava() -> Host:
    r = {
        "/robots.txt": Resource(
            b"User-agent: *\nAllow: /\n", headers={"Content-Type": "text/plain"}
        ),
        "/": html(
            page(
                "eUprava",
                '<a href="/prijava">Prijava</a> <a href="http://www.gov.si/">GOV.SI</a>'
                ' <a href="/datoteka.ppt">Predstavitev</a> <a href="/besedilo.txt">Besedilo</a>',
            )
        ),
        "/prijava": html(page("Prijava", '<a href="/">eUprava</a>')),
        "/datoteka.ppt": Resource(PPT),
        "/besedilo.txt": Resource(b"Samo besedilo.\n", headers={"Content-Type": "text/plain"}),
    }
    return Host("e-uprava.gov.si", 1, r, tls=True)


def podatki() -> Host:
    r = {
        "/robots.txt": Resource(
            b"User-agent: govsi-crawler\nDisallow: /api/\n", headers={"Content-Type": "text/plain"}
        ),
        "/": html(page("Podatki", '<a href="/katalog">Katalog</a> <a href="/api/v1">API</a>')),
        "/katalog": html(page("Katalog", "<p>Zbirke.</p>")),
        "/api/v1": Resource(b"{}", headers={"Content-Type": "application/json"}),
    }
    return Host("podatki.e-uprava.gov.si", 2, r)


def eprostor() -> Host:
    r = {
        "/robots.txt": Resource(
            b"User-agent: govsi-crawler\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
            headers={"Content-Type": "text/plain"},
        ),
        "/": html(page("e-Prostor", '<a href="/karte">Karte</a>')),
    }
    return Host("e-prostor.gov.si", 3, r)


# Unlabelled Slovenian text in ISO-8859-2: long enough for detection, and a case the
# detector on its own gets wrong.
OBVESTILO = page(
    "Obvestilo",
    "<p>Vlada Republike Slovenije je na današnji seji sprejela sklep o spremembah uredbe. "
    "Občine morajo do konca leta poročati o porabi sredstev, ki so jih prejele za šolstvo, "
    f"zdravstvo in ceste. Več o tem v sporočilu za javnost.</p><p>{SUMNIKI}</p>",
)
# A page whose markup is broken in every common way, with a link that must still be found.
BROKEN_HTML = (
    b"<html><head><title>Pokvarjen</title><body><h1>Pokvarjen<div><p>Nezaprto <b><i>"
    b"</div></span>\x00\x00 \xff\xfe\xc3 <table><tr><td><a href='/najden'>najden</a"
    b"<td><img src=/slike/manjka.png <p>\x80\x81 <!-- nezaprt komentar"
)
LONG_LINK = "/" + "dolga-pot/" * 210  # over MAX_URL_LENGTH (2000) once absolute


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, mtime=0)


BOMB_SIZE = 64 * 1024 * 1024


def napake() -> Host:
    """Everything a server can get wrong, on one host reached as a seed."""
    cases = [
        "/neskoncno",
        "/pocasi",
        "/brez-tipa",
        "/napacen-charset",
        "/pokvarjen",
        "/prazen",
        "/gzip",
        "/bomba",
        "/ven",
        "/brez-lokacije",
        "/dolg",
        "/utf16",
        "/latin2",
    ]
    links = " ".join(f'<a href="{c}">{c}</a>' for c in cases)
    r = {
        # A CMS's "not found" page served with 200 as robots.txt: no rules, so allow all.
        "/robots.txt": html("<html><body><h1>Stran ne obstaja</h1></body></html>"),
        "/": html(page("Napake", links)),
        # Never ends: cut at DOWNLOAD_MAXSIZE and recorded as an error.
        "/neskoncno": Resource(
            b"<p>" + b"x" * 65536 + b"</p>", headers={"Content-Type": "text/html"}, endless=True
        ),
        # Sends its headers, then hangs past DOWNLOAD_TIMEOUT.
        "/pocasi": Resource(
            page("Počasi", "").encode(), headers={"Content-Type": "text/html"}, stall=5
        ),
        "/brez-tipa": Resource(page("Brez tipa", '<a href="/najden">najden</a>').encode()),
        "/napacen-charset": Resource(
            page("Napačen charset", f"<p>{SUMNIKI}</p>").encode(),
            headers={"Content-Type": "text/html; charset=x-neznan"},
        ),
        "/pokvarjen": Resource(BROKEN_HTML, headers={"Content-Type": "text/html"}),
        "/najden": html(page("Najden", "<p>Našli ste me.</p>")),
        "/prazen": Resource(b"", headers={"Content-Type": "text/html"}),
        "/gzip": Resource(
            _gzip(page("Stisnjen", '<a href="/najden">najden</a>').encode()),
            headers={"Content-Type": "text/html", "Content-Encoding": "gzip"},
        ),
        # 64 KiB on the wire, 64 MiB once decompressed.
        "/bomba": Resource(
            _gzip(b" " * BOMB_SIZE),
            headers={"Content-Type": "text/html", "Content-Encoding": "gzip"},
        ),
        "/ven": redirect("https://www.google.com/", 302),
        "/brez-lokacije": html(page("Premaknjeno", "<p>Ni naslova.</p>"), status=302),
        "/dolg": html(page("Dolg", f'<a href="{LONG_LINK}">dolg</a> <a href="/">domov</a>')),
        "/utf16": Resource(
            codecs.BOM_UTF16_LE + page("UTF-16", f"<p>{SUMNIKI}</p>").encode("utf-16-le"),
            headers={"Content-Type": "text/html"},
        ),
        "/latin2": Resource(OBVESTILO.encode("iso-8859-2"), headers={"Content-Type": "text/html"}),
    }
    return Host("napake.gov.si", 4, r)


ARTICLE = (
    "Vlada Republike Slovenije je na današnji seji sprejela sklep o novih pravilih za "
    "sofinanciranje občinskih projektov. Občine bodo lahko sredstva porabile za obnovo "
    "šol, vrtcev in zdravstvenih domov ter za gradnjo kolesarskih poti. Razpis bo objavljen "
    "prihodnji mesec, prijave pa bodo odprte do konca leta. Ministrstvo bo za vsako občino "
    "pripravilo pregled porabe in ga objavilo na svoji spletni strani. Pri pripravi pravil "
    "so sodelovali predstavniki skupnosti občin, ki so predlagali poenostavitev postopkov in "
    "krajše roke za odločanje. Vlada je večino predlogov upoštevala. Sredstva bodo na voljo "
    "tudi manjšim občinam, ki doslej niso imele dovolj lastnih virov za sofinanciranje, zato "
    "bo delež države pri njihovih projektih višji. Prvi razpis bo namenjen predvsem projektom, "
    "ki izboljšujejo dostopnost javnih storitev za starejše in za ljudi s posebnimi potrebami."
)
NEWS = (
    "Ministrstvo za okolje je objavilo poziv za oddajo mnenj o osnutku zakona o vodah.",
    "Na upravni enoti Ljubljana bodo v petek zaradi prenove sistema zaprta vsa okenca.",
)


def _template(content: str, *, date: str = "23. 11. 2026", views: int = 10, extra: str = "") -> str:
    menu = " ".join(f'<a href="/">Rubrika {i}</a>' for i in range(25)) + extra
    return (
        "<!DOCTYPE html><html><head><title>Kopije</title></head><body>"
        f"<header><h1>Republika Slovenija</h1></header><nav>{menu}</nav>"
        "<div class='cookie-banner'>Spletno mesto uporablja piškotke. Se strinjam.</div>"
        f"<main><h2>Obvestilo</h2><p>{content}</p></main>"
        f"<aside>Objavljeno {date}. Ogledov: {views}.</aside>"
        "<footer>Gregorčičeva 20, 1000 Ljubljana. Vse pravice pridržane.</footer></body></html>"
    )


# What the index of kopije.gov.si links to, in order: the original first.
KOPIJE_LINKED = (
    "/clanek",
    "/clanek-kopija",
    "/clanek?print=1",
    "/clanek-datum",
    "/novica-1",
    "/novica-2",
)


def kopije() -> Host:
    """The same content under several URLs, and different content on the same template."""
    index = page("Kopije", " ".join(f'<a href="{p}">{p}</a>' for p in KOPIJE_LINKED))
    # A "last updated" stamp inside the content, and another date and counter around it.
    near = ARTICLE + " Posodobljeno 24. 11. 2026 ob 10.15."
    r = {
        "/": html(index),
        "/clanek": html(_template(ARTICLE)),
        # All a reader sees is /clanek's, an exact copy; its markup links (without text) to a
        # page nothing else links to: a copy's links are not followed.
        "/clanek-kopija": html(_template(ARTICLE, extra='<a href="/samo-v-kopiji"></a>')),
        "/clanek?print=1": html(
            f"<html><body><h1>Republika Slovenija</h1><main><h2>Obvestilo</h2><p>{ARTICLE}</p>"
            "</main></body></html>"
        ),
        "/clanek-datum": html(_template(near, date="24. 11. 2026", views=11)),
        "/novica-1": html(_template(NEWS[0])),
        "/novica-2": html(_template(NEWS[1])),
        "/samo-v-kopiji": html(page("Samo v kopiji", "")),
    }
    return Host("kopije.gov.si", 5, r)


OUTSIDE = ["www.google.com", "gov.si.example.com", "notgov.si"]
SEEDS = [
    "http://www.gov.si/",
    "http://evem.gov.si/",
    "https://e-uprava.gov.si/",
    "http://e-prostor.gov.si/",
    "http://napake.gov.si/",
    "http://kopije.gov.si/",
]


def build() -> SimWeb:
    return SimWeb(
        [www(), evem(), euprava(), podatki(), eprostor(), napake(), kopije()], outside=OUTSIDE
    )
