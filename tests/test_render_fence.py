"""What a rendered page may make the browser do (govsi.render.fence), and how Chromium is
started sandboxed (govsi.render.sandbox)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from govsi.render.fence import (
    DOCUMENT,
    FETCH,
    REFUSED_AT_SOURCE,
    addable_switch,
    chromium_args,
    document_headers,
    page_headers,
    verdict,
)
from govsi.render.sandbox import sandbox_problem, sandboxed_launch

PAGE = "https://e-uprava.gov.si/storitve"


@pytest.mark.parametrize(
    ("resource_type", "method", "url", "navigation", "served", "in_scope", "expected"),
    [
        # The page's own document, once; any later navigation is refused.
        ("document", "GET", PAGE, True, False, True, DOCUMENT),
        ("document", "GET", PAGE, True, True, True, "navigation"),
        ("document", "GET", "https://e-uprava.gov.si/drugo", True, False, True, "navigation"),
        ("document", "GET", "http://127.0.0.1:8080/", True, True, False, "navigation"),
        ("document", "POST", PAGE, True, True, True, "navigation"),  # a form posted
        ("document", "GET", "http://169.254.169.254/", True, False, False, "navigation"),
        # Frames are navigations of their own, never loaded.
        ("iframe", "GET", "https://e-uprava.gov.si/okvir", True, False, True, "frame"),
        # What scripts need, in scope, with a safe method: fetched by the crawler.
        ("script", "GET", "https://e-uprava.gov.si/app.js", False, True, True, FETCH),
        ("xhr", "GET", "https://e-uprava.gov.si/api/menu", False, True, True, FETCH),
        ("fetch", "HEAD", "https://evem.gov.si/api", False, True, True, FETCH),
        ("fetch", "POST", "https://e-uprava.gov.si/api/oddaj", False, True, True, "method"),
        ("xhr", "DELETE", "https://e-uprava.gov.si/api/1", False, True, True, "method"),
        ("script", "GET", "https://cdn.example.com/lib.js", False, True, False, "out_of_scope"),
        ("fetch", "GET", "http://127.0.0.1:9/", False, True, False, "out_of_scope"),
        # Nothing collected depends on these.
        ("image", "GET", "https://e-uprava.gov.si/logo.png", False, True, True, "image"),
        ("stylesheet", "GET", "https://e-uprava.gov.si/s.css", False, True, True, "stylesheet"),
        ("font", "GET", "https://e-uprava.gov.si/f.woff2", False, True, True, "font"),
        ("media", "GET", "https://e-uprava.gov.si/v.mp4", False, True, True, "media"),
        ("websocket", "GET", "wss://e-uprava.gov.si/ws", False, True, True, "scheme"),
        ("eventsource", "GET", "https://e-uprava.gov.si/ev", False, True, True, "eventsource"),
        ("ping", "POST", "https://e-uprava.gov.si/ping", False, True, True, "ping"),
        ("other", "GET", "https://e-uprava.gov.si/x", False, True, True, "other"),
        ("", "GET", "https://e-uprava.gov.si/x", False, True, True, "other"),
        ("script", "GET", "ftp://e-uprava.gov.si/x.js", False, True, False, "scheme"),
    ],
)  # fmt: skip
def test_verdict(
    resource_type: str,
    method: str,
    url: str,
    navigation: bool,
    served: bool,
    in_scope: bool,
    expected: str,
) -> None:
    got = verdict(
        resource_type,
        method,
        url,
        navigation=navigation,
        document_url=PAGE,
        document_served=served,
        in_scope=in_scope,
    )
    assert got == expected


def test_document_headers_drop_transfer_headers_and_join_repeats() -> None:
    headers = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Content-Encoding", "gzip"),  # the body handed over is decoded already
        ("Content-Length", "123"),
        ("Set-Cookie", "a=1"),
        ("Content-Security-Policy", "script-src 'self'"),
        ("Link", "</a>; rel=preload"),
        ("link", "</b>; rel=preload"),
    ]
    assert document_headers(headers) == {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": "script-src 'self'",
        "link": "</a>; rel=preload, </b>; rel=preload",
    }


def test_the_page_document_refuses_pictures_styles_fonts_and_media_at_the_source() -> None:
    ours = page_headers([("Content-Type", "text/html")])
    assert ours["content-security-policy"] == REFUSED_AT_SOURCE
    # The site's own policy stays and ours is one more (a comma separates policies).
    both = page_headers([("Content-Security-Policy", "script-src 'self'")])
    assert both["content-security-policy"] == f"script-src 'self', {REFUSED_AT_SOURCE}"
    # A script or data a page fetches is handed over as it came.
    assert "content-security-policy" not in document_headers([("Content-Type", "text/css")])
    directives = dict(d.strip().split(" ", 1) for d in REFUSED_AT_SOURCE.split(";"))
    # Scripts and their requests are never refused here: the routes decide on those.
    assert not {"default-src", "script-src", "connect-src", "worker-src"} & set(directives)
    assert directives["style-src"] == "'unsafe-inline'"  # inline styles apply


def test_chromium_has_no_network_of_its_own() -> None:
    added = ["--lang=sl", "--proxy-server=http://evil:3128", "--host-resolver-rules=MAP * 1.2.3.4"]
    args = chromium_args("127.0.0.1:4567", added, own=["--js-flags=--max-old-space-size=9"])
    assert "--proxy-server=http://127.0.0.1:4567" in args
    assert "--proxy-bypass-list=<-loopback>" in args  # loopback goes to the proxy too
    assert "--host-resolver-rules=MAP * ~NOTFOUND" in args
    assert "--force-webrtc-ip-handling-policy=disable_non_proxied_udp" in args  # no UDP
    # What a user adds comes first, and only what may be added: the fence's switches last.
    assert args[0] == "--lang=sl" and args[-1] == "--js-flags=--max-old-space-size=9"
    assert not any("evil" in a or "1.2.3.4" in a for a in args)
    names = [a.split("=", 1)[0] for a in args]
    assert len(names) == len(set(names))  # no switch twice: none for Chromium to pick


@pytest.mark.parametrize(
    ("arg", "passed"),
    [
        # What a user may add, as Chromium reads it.
        ("--lang=sl", "--lang=sl"),
        ("--lang", "--lang"),
        ("-lang=sl", "--lang=sl"),  # Chromium reads one dash as two
        ("--window-size=1280,800", "--window-size=1280,800"),
        (
            "--user-agent=govsi (+https://x.gov.si/bot) a=b",
            "--user-agent=govsi (+https://x.gov.si/bot) a=b",
        ),
        ("--mute-audio", "--mute-audio"),
        ("--disable-gpu", "--disable-gpu"),
        ("--disable-dev-shm-usage", "--disable-dev-shm-usage"),
        ("--hide-scrollbars", "--hide-scrollbars"),
        ("--force-device-scale-factor=2", "--force-device-scale-factor=2"),
        # The sandbox, however spelt: Chromium reads -x as --x and --x=1 as --x.
        ("--no-sandbox", None),
        ("-no-sandbox", None),
        ("--no-sandbox=1", None),
        ("--disable-setuid-sandbox", None),
        ("--no-zygote-sandbox", None),
        ("--no-zygote", None),
        ("--single-process", None),
        # Other cases are other switches on Linux: never the allowed ones.
        ("--NO-SANDBOX", None),
        ("--LANG=sl", None),
        # The fence's own switches, and what replaces the proxy or the name resolver.
        ("--proxy-server=http://evil:3128", None),
        ("--host-resolver-rules=MAP * 10.0.0.1", None),
        ("--proxy-bypass-list=*", None),
        ("--proxy-pac-url=http://evil/p.pac", None),
        ("--no-proxy-server", None),
        ("--force-webrtc-ip-handling-policy=default", None),
        ("--enable-quic", None),
        # Security checks, remote control, other profiles, extensions, V8 and features.
        ("--disable-web-security", None),
        ("--allow-running-insecure-content", None),
        ("--ignore-certificate-errors", None),
        ("--remote-debugging-port=9222", None),
        ("--remote-debugging-address=0.0.0.0", None),
        ("--user-data-dir=/tmp/x", None),
        ("--load-extension=/tmp/ext", None),
        ("--js-flags=--allow-natives-syntax", None),
        ("--enable-features=NetworkServiceInProcess", None),
        ("--disable-features=HttpsUpgrades", None),
        ("--renderer-cmd-prefix=/bin/sh", None),
        ("--utility-cmd-prefix=/bin/sh", None),
        ("--gpu-launcher=/bin/sh", None),
        # Not switches at all: a URL to open, the end of the switches, nothing.
        ("http://evil.example/", None),
        ("about:blank", None),
        ("--", None),
        ("-", None),
        ("--=sl", None),
        ("", None),
        ("lang=sl", None),
        ("---lang=sl", None),  # the name would be "-lang"
    ],
)
def test_what_a_user_may_add_to_chromiums_switches(arg: str, passed: str | None) -> None:
    assert addable_switch(arg) == passed
    fence = chromium_args("127.0.0.1:1")
    assert chromium_args("127.0.0.1:1", [arg]) == ([passed] if passed else []) + fence


def test_not_root_runs_chromium_itself_sandboxed() -> None:
    launch = sandboxed_launch("/usr/lib/chromium/chromium", "nobody", euid=1000)
    assert launch.executable == "/usr/lib/chromium/chromium"
    assert launch.sandbox and launch.problem is None


def test_root_without_the_account_says_why_there_is_no_sandbox() -> None:
    launch = sandboxed_launch("/usr/lib/chromium/chromium", "no-such-account-here", euid=0)
    assert not launch.sandbox
    assert "no-such-account-here" in (launch.problem or "")
    assert launch.problem == sandbox_problem("no-such-account-here", euid=0)
    assert sandbox_problem("root", euid=0) == "RENDER_BROWSER_USER 'root' is root"
    assert sandbox_problem("no-such-account-here", euid=1000) is None  # not root: no need


@pytest.mark.skipif(os.geteuid() != 0, reason="the wrapper is for a crawler running as root")
def test_root_runs_chromium_as_the_unprivileged_account() -> None:
    # A stand-in for Chromium that reports who it runs as and with which arguments, where
    # the account can reach it (pytest's tmp_path is root's alone).
    folder = Path(tempfile.mkdtemp(prefix="govsi-test-"))
    folder.chmod(0o755)
    fake = folder / "fake-chromium"
    fake.write_text('#!/bin/sh\nid -u; echo "$HOME"; echo "$@"\n')
    fake.chmod(0o755)
    profile = folder / "profile"
    profile.mkdir(mode=0o700)
    launch = sandboxed_launch(str(fake), "nobody", euid=0)
    try:
        assert launch.sandbox and launch.executable != str(fake)
        assert stat.S_IMODE(os.stat(launch.executable).st_mode) == 0o700
        out = subprocess.run(
            [launch.executable, f"--user-data-dir={profile}", "--x"],
            capture_output=True, text=True, check=True,
        ).stdout.split("\n")  # fmt: skip
        assert out[0] == str(65534)  # nobody
        assert out[1] == str(profile)
        assert out[2] == f"--user-data-dir={profile} --x"
        assert os.stat(profile).st_uid == 65534  # the profile is the browser's own
    finally:
        shutil.rmtree(os.path.dirname(launch.executable))
        shutil.rmtree(folder)
