"""scrapy_cepr.render: the system Chromium, offline geometry capture, embedded capture,
crash and restart.

Needs Chromium and playwright; without them the tests skip with the install command
(CI sets CEPR_REQUIRE_RENDER=1, which turns the skip into a failure)."""

from __future__ import annotations

import json
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from scrapy_cepr.render import (
    CAPTURE_SCRIPT,
    EMBED_ID,
    INSTALL_HINT,
    BrowserNotFound,
    Geometry,
    Renderer,
    RenderError,
    embedded_geometry,
    find_chromium,
)


def _require_browser() -> str:
    try:
        import playwright  # noqa: F401

        return find_chromium()
    except (ImportError, BrowserNotFound) as exc:
        if os.environ.get("CEPR_REQUIRE_RENDER") == "1":
            pytest.fail(f"CEPR_REQUIRE_RENDER=1 but the browser is missing: {exc}")
        pytest.skip(f"needs Chromium and playwright: {INSTALL_HINT}")


@pytest.fixture(scope="module")
def renderer():
    _require_browser()
    r = Renderer(timeout=20)
    yield r
    r.close()


PAGE = """<!DOCTYPE html><html><head><style>
body { margin: 0; }
#box { position: absolute; left: 100px; top: 50px; width: 300px; height: 120px; font-size: 24px; font-weight: 700;
       color: rgb(10, 20, 30); }
#gone { display: none; }
</style></head><body>
<div id="box">Box</div><p id="gone">hidden</p>
<img src="http://example.invalid/never-fetched.png" width="10" height="10">
<script>document.body.setAttribute("data-ran", "yes");</script>
</body></html>"""


def test_missing_browser_names_the_install_command(monkeypatch):
    monkeypatch.setenv("CEPR_CHROMIUM", "/nonexistent/chromium")
    with pytest.raises(BrowserNotFound, match="apt-get install chromium"):
        find_chromium()


def test_geometry_of_a_positioned_box(renderer):
    out = renderer.render(PAGE)
    g = out.geometry
    # Elements in document order: body=0, div#box=1, p#gone=2, img=3, script=4.
    assert out.html.count('data-cepr-i="') == len(g) == 5
    assert g.rect[1].tolist() == [100.0, 50.0, 300.0, 120.0]
    assert g.font[1] == 24.0 and g.weight[1] == 700
    assert g.shown.tolist()[:3] == [True, True, False]
    family, size, weight, style, color, align, line = g.styles[g.style[1]]
    assert (size, weight, color) == ("24px", "700", "rgb(10, 20, 30)")
    assert g.viewport == (1024, 768)
    # Page scripts do not run by default.
    assert 'data-ran="yes"' not in out.html
    assert out.load_ms > 0 and out.capture_ms > 0


def test_geometry_json_round_trip(renderer):
    g = renderer.render(PAGE).geometry
    again = Geometry.from_json(json.loads(json.dumps(g.to_json())))
    assert again.rect.tolist() == g.rect.tolist() and again.styles == g.styles


def test_malformed_capture_is_a_render_error():
    with pytest.raises(RenderError, match="unequal length"):
        Geometry.from_json({"viewport": [1, 1], "page": [1, 1], "rect": [0, 0, 1, 1], "font": [1, 2],
                            "weight": [1], "shown": [1], "style": [0], "styles": [["a"] * 7]})


def test_embedded_capture_travels_in_the_page_content():
    # What the scrapy-playwright page method does: evaluate the capture with embed=True,
    # then read page.content() (as scrapy-playwright does after its page methods).
    path = _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1024, "height": 768})
        page.set_content(PAGE)
        assert page.evaluate(CAPTURE_SCRIPT, {"embed": True}) == 5
        content = page.content()
        browser.close()
    assert f'id="{EMBED_ID}"' in content
    g = embedded_geometry(content)
    assert g is not None and len(g) == 5
    assert g.rect[1].tolist() == [100.0, 50.0, 300.0, 120.0]


def test_crashed_browser_fails_the_page_and_restarts():
    _require_browser()
    big = "<div>" + "<p>row <b>bold</b> text</p>" * 60000 + "</div>"  # about a second to load and capture
    with Renderer(timeout=60) as r:
        r.render("<p>first</p>")
        pid = r.browser_pid
        assert pid and r.starts == 1
        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(r.render, big)
            time.sleep(0.3)  # the big page is being rendered now
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(RenderError, match="crashed"):
                future.result(timeout=120)
        out = r.render("<p>next page</p>")
        assert "next page" in out.html
        assert r.starts == 2 and r.browser_pid not in (None, pid)


# --------------------------------------------------------------------------- no network
# Issue 18 item 3: a render of a response body must not reach the network. A server on
# 127.0.0.1 counts every TCP connection, every HTTP request line and every UDP datagram
# (WebRTC's STUN) that arrives while pages full of network probes are rendered.


class _CountingServer:
    """TCP + UDP listener on one ephemeral 127.0.0.1 port; bounded (2 s socket timeout,
    64 KiB per request, daemon threads, stopped by the fixture)."""

    def __init__(self) -> None:
        import socket
        import socketserver
        import threading

        self.lock = threading.Lock()
        self.connections = 0
        self.requests: list[str] = []
        self.datagrams = 0
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with owner.lock:
                    owner.connections += 1
                self.request.settimeout(2)
                data = b""
                try:
                    while b"\r\n\r\n" not in data and len(data) < 65536:
                        chunk = self.request.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    if data:
                        with owner.lock:
                            owner.requests.append(data.split(b"\r\n", 1)[0].decode("latin-1"))
                        self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx")
                except OSError:
                    pass

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True

        self.tcp = Server(("127.0.0.1", 0), Handler)
        self.port = self.tcp.server_address[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.settimeout(0.2)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self.tcp.serve_forever, daemon=True),
                         threading.Thread(target=self._udp_loop, daemon=True)]
        for t in self._threads:
            t.start()

    def _udp_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.udp.recvfrom(65536)
            except OSError:
                continue
            with self.lock:
                self.datagrams += 1

    def seen(self) -> tuple[int, list[str], int]:
        with self.lock:
            return self.connections, list(self.requests), self.datagrams

    def close(self) -> None:
        self._stop.set()
        self.tcp.shutdown()
        self.tcp.server_close()
        for t in self._threads:
            t.join(timeout=5)
        self.udp.close()


@pytest.fixture()
def counting_server():
    server = _CountingServer()
    yield server
    server.close()


#: One probe per way a page can ask for the network: ``{u}`` is the counting server's
#: base URL, ``{port}`` its port, ``{file}`` a local file that itself loads ``{u}/from-file``.
#: The path of each URL names its probe, so a request that arrives says which probe leaked.
PROBES = {
    "prefetch": '<link rel="prefetch" href="{u}/prefetch">',
    "stylesheet": '<link rel="stylesheet" href="{u}/stylesheet.css">',
    "import": '<style>@import url("{u}/import.css");</style>',
    "font": '<style>@font-face {{ font-family: Probe; src: url("{u}/font.woff"); }} .f {{ font-family: Probe; }}</style>'
            '<p class="f">font probe</p>',
    "background": '<div style="background-image: url({u}/background.png); width: 20px; height: 20px"></div>',
    "img": '<img src="{u}/img.png" width="5" height="5">',
    "iframe": '<iframe src="{u}/iframe.html"></iframe>',
    "script": '<script src="{u}/script.js"></script>',
    "fetch": '<script>fetch("{u}/fetch"); new Image().src = "{u}/js-image";</script>',
    "video poster": '<video poster="{u}/poster.png" width="20" height="20"></video>',
    "file iframe": '<iframe src="file://{file}"></iframe>',
    "object": '<object data="{u}/object.html" width="20" height="20"></object>',
    "preload": '<link rel="preload" href="{u}/preload.js" as="script">',
    "dns-prefetch": '<link rel="dns-prefetch" href="//dns-prefetch.cepr-probe.example">',
    "preconnect": '<link rel="preconnect" href="{u}">',
    "icon": '<link rel="icon" href="{u}/icon.ico">',
    "modulepreload": '<link rel="modulepreload" href="{u}/modulepreload.js">',
    "prerender": '<link rel="prerender" href="{u}/prerender">',
    "srcset": '<img srcset="{u}/srcset.png 1x" width="5" height="5">',
    "embed": '<embed src="{u}/embed.swf" width="20" height="20">',
    "svg image": '<svg width="20" height="20"><image href="{u}/svg-image.png" width="20" height="20"/></svg>',
    "audio": '<audio src="{u}/audio.mp3" preload="auto"></audio>',
    "speculation rules": '<script type="speculationrules">{{"prefetch": [{{"source": "list", "urls": ["{u}/spec-prefetch"]}}], '
                         '"prerender": [{{"source": "list", "urls": ["{u}/spec-prerender"]}}]}}</script>',
    "websocket": '<script>new WebSocket("ws://127.0.0.1:{port}/websocket");</script>',
    "beacon": '<script>navigator.sendBeacon("{u}/beacon", "x");</script>',
    "event source": '<script>new EventSource("{u}/event-source");</script>',
    "webrtc": '<script>const pc = new RTCPeerConnection({{iceServers: [{{urls: "stun:127.0.0.1:{port}"}}]}});'
              'pc.createDataChannel("x"); pc.createOffer().then(o => pc.setLocalDescription(o));</script>',
    "form": '<form id="f" action="{u}/form" method="post"><input name="a" value="b"></form>'
            '<script>document.getElementById("f").submit();</script>',
}


def _probe_page(server: _CountingServer, tmp_path, names) -> str:
    u = f"http://127.0.0.1:{server.port}"
    local = tmp_path / "local.html"
    local.write_text(f'<img src="{u}/from-file">', encoding="utf-8")
    fields = {"u": u, "port": server.port, "file": local}
    head = "".join(PROBES[n].format(**fields) for n in names)
    return f"<!DOCTYPE html><html><head><title>probes</title>{head}</head><body><p>story text</p></body></html>"


def _assert_no_network(server: _CountingServer, wait: float = 2.0) -> None:
    time.sleep(wait)  # prefetches, beacons and STUN go out after the load
    connections, requests, datagrams = server.seen()
    assert (connections, requests, datagrams) == (0, [], 0), (
        f"the render reached the network: {connections} TCP connections, requests {requests}, "
        f"{datagrams} UDP datagrams")


@pytest.mark.parametrize("scripts", [False, True], ids=["scripts-off", "scripts-on"])
def test_render_reaches_no_network(counting_server, tmp_path, scripts):
    # Before the fix: <link rel="prefetch"> made a GET (and iframe/object navigations a
    # TCP connection); with page scripts on, WebSocket, sendBeacon and speculation rules
    # reached the server too.
    _require_browser()
    html = _probe_page(counting_server, tmp_path, PROBES)
    with Renderer(timeout=20, scripts=scripts) as r:
        out = r.render(html)
        assert "story text" in out.html
        _assert_no_network(counting_server)


REFRESHES = {
    "to the server": '<meta http-equiv="refresh" content="0;url=http://127.0.0.1:{port}/refresh">',
    "reload": '<meta http-equiv="refresh" content="0">',
    "to about:blank": '<meta http-equiv="refresh" content="0; URL=\'about:blank\'">',
}


@pytest.mark.parametrize("scripts", [False, True], ids=["scripts-off", "scripts-on"])
@pytest.mark.parametrize("refresh", list(REFRESHES), ids=list(REFRESHES))
def test_meta_refresh_neither_leaves_nor_loses_the_page(counting_server, refresh, scripts):
    # Before the fix: "render failed: Page.evaluate: Execution context was destroyed, most
    # likely because of a navigation", and a TCP connection to the refresh target.
    _require_browser()
    meta = REFRESHES[refresh].format(port=counting_server.port)
    html = f"<html><head>{meta}</head><body><p>the story stays</p></body></html>"
    with Renderer(timeout=20, scripts=scripts) as r:
        if scripts and "about:blank" in meta:
            # With page scripts on, the sandbox allows meta refresh (as it allows
            # location = ...); a navigation the route cannot refuse fails the page clearly.
            with pytest.raises(RenderError, match="navigated away"):
                r.render(html)
        else:
            out = r.render(html)
            assert "the story stays" in out.html
        time.sleep(1.0)
        # The tab is reused: the next page is not disturbed by the refresh either.
        again = r.render("<html><body><p>next page</p></body></html>")
        assert "next page" in again.html
    _assert_no_network(counting_server, wait=0.5)


def test_wang2009_on_a_meta_refresh_page():
    # Issue 18 item 10: wang2009 failed with "Execution context was destroyed".
    _require_browser()
    import scrapy_cepr

    paragraphs = "".join(f"<p>Paragraph {i} of the harbour story, long enough to be the body of the page.</p>"
                         for i in range(8))
    html = ('<html><head><meta http-equiv="refresh" content="0"><title>Harbour</title></head><body>'
            f'<div id="nav"><a href="/">Home</a></div><article><h1>Harbour storm</h1>{paragraphs}</article>'
            '</body></html>')
    res = scrapy_cepr.extract(html, method="wang2009")
    assert "Paragraph 3 of the harbour story" in res.body
