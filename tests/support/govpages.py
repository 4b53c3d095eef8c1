"""Pages built like government sites, for the duplicate and change tests: a heavy template
(header, menu, cookie banner, footer with a date or a view counter) around little content."""

from __future__ import annotations

MENU = " ".join(f'<a href="/r{i}">Rubrika številka {i}</a>' for i in range(30))
FOOTER = "Gregorčičeva 20, 1000 Ljubljana. Telefon 01 478 10 00. Vse pravice pridržane."
COOKIE = "Spletno mesto uporablja piškotke za boljšo uporabniško izkušnjo. Se strinjam."
NEWS_1 = (
    "Vlada je na današnji seji sprejela uredbo o spremembah pravil za javna naročila. "
    "Uredba začne veljati naslednji teden in velja za vse občine."
)
NEWS_2 = (
    "Ministrstvo za okolje je objavilo razpis za sofinanciranje čistilnih naprav. "
    "Prijave sprejemajo do konca meseca na elektronski naslov ministrstva."
)


def semantic(content: str, date: str = "23. 11. 2026") -> str:
    return (
        f"<html><body><header><h1>Republika Slovenija</h1></header><nav>{MENU}</nav>"
        f"<div class='cookie-banner'>{COOKIE}</div>"
        f"<main><h2>Novica</h2><p>{content}</p></main>"
        f"<aside>Objavljeno {date}</aside><footer>{FOOTER}</footer></body></html>"
    )


def soup(content: str, counter: int = 1) -> str:
    # No semantic tags: the template is plain divs, told apart by classes and link density.
    return (
        f"<html><body><div class='top-bar'><div class='logo'>Republika Slovenija</div></div>"
        f"<div class='main-menu'>{MENU}</div><div id='breadcrumbs'><a href='/'>Domov</a></div>"
        f"<div class='vsebina'><h2>Novica</h2><p>{content}</p></div>"
        f"<div class='blok'>{MENU}</div><div class='footer-info'>{FOOTER} Ogledov: {counter}</div>"
        f"</body></html>"
    )
