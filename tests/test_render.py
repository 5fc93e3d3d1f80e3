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
    RenderError,
    Renderer,
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
