"""Rendering with the system Chromium: the one module of scrapy-cepr that owns a browser.

The ``wang2009`` method (Wang et al., KDD 2009) needs what only a rendering engine knows:
the bounding rectangle of every element (px), its computed font size and weight, whether
it is displayed at all, and the computed style that the styled output copies. This module
gets them two ways, both through the same JavaScript function, :data:`CAPTURE_SCRIPT`,
run with **one** ``evaluate`` per page:

* **Offline** (:class:`Renderer`): the page's HTML is served from memory into a fixed
  viewport (:data:`VIEWPORT`, 1024×768 px), page scripts disabled by default, and **no
  request leaves the browser** (nothing is fetched, prefetched or connected to; see
  :class:`Renderer` for the four layers that refuse them). The capture returns the
  serialised DOM (each element tagged ``data-cepr-i="k"``) and the geometry arrays.
* **At crawl time, through scrapy-playwright** (:func:`playwright_page_method`): the
  live page (with its real stylesheets) runs the same capture as a ``PageMethod``; it
  tags the elements and appends the geometry to ``<body>`` as ``<script
  type="application/json" id="cepr-geometry">``. scrapy-playwright reads the page
  content *after* its page methods, so ``response.body`` carries both, and the pipeline,
  the worker process and :func:`scrapy_cepr.extract` need nothing new: the method finds
  the geometry in the HTML (:func:`embedded_geometry`) and does not render again.

The browser is found on the machine (:func:`find_chromium`), never downloaded
(``playwright install`` is not needed and not used). A :class:`Renderer` starts it once
and reuses it; it runs the *sync* Playwright API in a dedicated thread, so it works from
plain code, from a thread pool, and from a process that also runs an asyncio event loop
(Scrapy's reactor). If the browser dies or hangs, the page being rendered raises
:class:`RenderError` (it is recorded as failed, not lost) and the next page starts a new
browser.

Playwright is imported only when a browser is started: importing this module is cheap
and needs no extra package (``pip install "scrapy-cepr[render]"`` installs playwright).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import secrets
import shutil
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .exceptions import BrowserNotFound, RenderError

__all__ = [
    "CAPTURE_SCRIPT",
    "CHROMIUM_ARGS",
    "EMBED_ID",
    "INSTALL_HINT",
    "OFFLINE_ARGS",
    "RENDER_ORIGIN",
    "VIEWPORT",
    "Geometry",
    "Rendered",
    "Renderer",
    "embedded_geometry",
    "find_chromium",
    "playwright_launch_options",
    "playwright_page_method",
    "shared_renderer",
]

logger = logging.getLogger(__name__)

#: Viewport of the offline renders, ``(width, height)`` in px: the paper's ScreenWidth ×
#: ScreenHeight (a 1024×768 screen, the common one in 2009; see docs/wang2009_choices.md).
VIEWPORT: tuple[int, int] = (1024, 768)

#: What to install when no browser is found.
INSTALL_HINT = 'apt-get install chromium (the system browser) and pip install "scrapy-cepr[render]" (playwright)'

#: Chromium flags for a quiet headless browser: no sandbox (containers), no GPU, no
#: background traffic (updates, sync, first-run pages).
CHROMIUM_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-extensions",
    "--mute-audio",
)

#: Extra Chromium flags of the offline :class:`Renderer` (not of scrapy-playwright, whose
#: live pages need the network): every connection goes to a proxy on a closed loopback
#: port (``127.0.0.1:9``), loopback included (``<-loopback>`` removes Chromium's implicit
#: bypass); host names never resolve (no DNS query leaves the machine); no DNS prefetch,
#: no hyperlink auditing pings, and WebRTC may not send UDP outside the (dead) proxy.
OFFLINE_ARGS: tuple[str, ...] = (
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--dns-prefetch-disable",
    "--no-pings",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)

#: Origin the offline renders are served from (a reserved ``.invalid`` name: it never
#: resolves; each page is answered from memory by the route, once, at an unguessable path).
RENDER_ORIGIN = "http://render.cepr.invalid"

#: ``Content-Security-Policy`` of an offline render, by whether page scripts run. The
#: sandbox without ``allow-scripts`` also turns ``<meta http-equiv=refresh>`` off
#: (``allow-same-origin`` keeps the page's origin: an opaque one made renders slower); the
#: fetch directives refuse every URL but ``data:``/``blob:`` (inline styles stay).
_CSP_COMMON = ("default-src 'none'; style-src 'unsafe-inline' data:; img-src data: blob:; font-src data: blob:; "
               "media-src data: blob:; form-action 'none'; base-uri 'none'")
_CSP = {
    False: "sandbox allow-same-origin; " + _CSP_COMMON,
    True: "sandbox allow-scripts allow-same-origin; script-src 'unsafe-inline' 'unsafe-eval'; " + _CSP_COMMON,
}

#: ``id`` of the ``<script type="application/json">`` holding embedded geometry.
EMBED_ID = "cepr-geometry"
#: Attribute holding each element's index into the geometry arrays.
INDEX_ATTR = "data-cepr-i"

_EXECUTABLES = ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "chrome")

#: The capture, run in the page with one ``evaluate(CAPTURE_SCRIPT, {"embed": bool})``.
#: For ``<body>`` and every element under it, in document (pre-)order, it tags the element
#: with ``data-cepr-i`` and records its bounding rectangle in document coordinates (px,
#: rounded), computed font size (px) and weight, whether it is displayed, and an index
#: into a table of distinct computed styles (font family, size, weight, style, colour,
#: text alignment, line height) used by the styled output. With ``embed`` the result is
#: appended to ``<body>`` as JSON (``<`` escaped) and only the element count is returned;
#: otherwise the result and the serialised DOM are returned.
CAPTURE_SCRIPT = r"""
(opts) => {
  const body = document.body;
  const out = {v: 1, viewport: [window.innerWidth, window.innerHeight],
               page: [0, 0], rect: [], font: [], weight: [], shown: [], style: [], styles: []};
  if (!body) { return opts && opts.embed ? 0 : {geometry: out, html: document.documentElement ? document.documentElement.outerHTML : ''}; }
  const old = document.getElementById('CEPR_ID');
  if (old) old.remove();
  const els = [body, ...body.getElementsByTagName('*')];
  const sx = window.scrollX, sy = window.scrollY, seen = new Map();
  for (let i = 0; i < els.length; i++) {
    const el = els[i];
    el.setAttribute('data-cepr-i', String(i));
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    out.rect.push(Math.round(r.left + sx), Math.round(r.top + sy), Math.round(r.width), Math.round(r.height));
    out.font.push(Math.round(parseFloat(cs.fontSize) * 10) / 10 || 0);
    out.weight.push(parseInt(cs.fontWeight, 10) || 400);
    out.shown.push(cs.display !== 'none' && cs.visibility !== 'hidden' ? 1 : 0);
    const key = [cs.fontFamily, cs.fontSize, cs.fontWeight, cs.fontStyle, cs.color, cs.textAlign, cs.lineHeight].join('\u0001');
    let s = seen.get(key);
    if (s === undefined) { s = out.styles.length; seen.set(key, s); out.styles.push(key.split('\u0001')); }
    out.style.push(s);
  }
  const de = document.documentElement;
  out.page = [Math.max(de.scrollWidth, body.scrollWidth), Math.max(de.scrollHeight, body.scrollHeight)];
  if (opts && opts.embed) {
    const s = document.createElement('script');
    s.type = 'application/json';
    s.id = 'CEPR_ID';
    s.textContent = JSON.stringify(out).replace(/</g, '\\u003c');
    body.appendChild(s);
    return els.length;
  }
  return {geometry: out, html: '<!DOCTYPE html>' + de.outerHTML};
}
""".replace("CEPR_ID", EMBED_ID)

_EMBED_RE = re.compile(
    r'<script[^>]*\bid="' + EMBED_ID + r'"[^>]*>(.*?)</script>', re.DOTALL | re.IGNORECASE
)


@dataclass(frozen=True, eq=False)
class Geometry:
    """Per-element rendering facts of one page, for ``E`` elements (``<body>`` and its
    descendants in document order; index ``k`` is the element tagged ``data-cepr-i="k"``).

    * ``rect``: float ``(E, 4)``: left, top, width, height in document px;
    * ``font``: float ``(E,)``: computed font size in px;
    * ``weight``: int ``(E,)``: computed font weight (400 normal, 700 bold);
    * ``shown``: bool ``(E,)``: displayed (``display`` not ``none``, ``visibility`` not
      ``hidden``);
    * ``style``: int ``(E,)``: index into ``styles``, the distinct computed styles as
      ``(font-family, font-size, font-weight, font-style, color, text-align,
      line-height)`` tuples of CSS strings;
    * ``viewport``: ``(width, height)`` px; ``page``: the document's scroll ``(width,
      height)`` px.
    """

    rect: np.ndarray
    font: np.ndarray
    weight: np.ndarray
    shown: np.ndarray
    style: np.ndarray
    styles: tuple[tuple[str, ...], ...]
    viewport: tuple[int, int]
    page: tuple[int, int]

    def __len__(self) -> int:
        return int(self.font.shape[0])

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Geometry:
        """Build from the capture's JSON object (:data:`CAPTURE_SCRIPT`).

        :raises RenderError: the object is malformed (missing keys, arrays of unequal
            length).

        >>> g = Geometry.from_json({"viewport": [1024, 768], "page": [1024, 900], "rect": [0, 0, 1024, 900],
        ...                         "font": [16], "weight": [400], "shown": [1], "style": [0],
        ...                         "styles": [["serif", "16px", "400", "normal", "rgb(0, 0, 0)", "start", "normal"]]})
        >>> len(g), g.rect.tolist(), g.page
        (1, [[0.0, 0.0, 1024.0, 900.0]], (1024, 900))
        """
        try:
            rect = np.asarray(data["rect"], dtype=np.float64).reshape(-1, 4)
            font = np.asarray(data["font"], dtype=np.float64)
            weight = np.asarray(data["weight"], dtype=np.int64)
            shown = np.asarray(data["shown"], dtype=bool)
            style = np.asarray(data["style"], dtype=np.int64)
            styles = tuple(tuple(str(v) for v in s) for s in data["styles"])
            viewport = (int(data["viewport"][0]), int(data["viewport"][1]))
            page = (int(data["page"][0]), int(data["page"][1]))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise RenderError(f"malformed geometry capture: {exc}") from None
        n = font.shape[0]
        if not (rect.shape[0] == weight.shape[0] == shown.shape[0] == style.shape[0] == n):
            raise RenderError("malformed geometry capture: arrays of unequal length")
        if n and (style.min() < 0 or style.max() >= len(styles)):
            raise RenderError("malformed geometry capture: style index out of range")
        return cls(rect, font, weight, shown, style, styles, viewport, page)

    def to_json(self) -> dict[str, Any]:
        """The capture's JSON object again (inverse of :meth:`from_json`), e.g. to cache a
        render."""
        return {"v": 1, "viewport": list(self.viewport), "page": list(self.page),
                "rect": self.rect.astype(np.int64).ravel().tolist(), "font": self.font.tolist(),
                "weight": self.weight.tolist(), "shown": self.shown.astype(int).tolist(),
                "style": self.style.tolist(), "styles": [list(s) for s in self.styles]}


@dataclass(frozen=True, eq=False)
class Rendered:
    """One offline render: ``html`` is the serialised DOM (elements tagged
    ``data-cepr-i``), ``geometry`` its :class:`Geometry`, ``load_ms`` the time of
    loading the page (to ``DOMContentLoaded``) and ``capture_ms`` that of the capture
    ``evaluate`` (ms)."""

    html: str
    geometry: Geometry
    load_ms: float
    capture_ms: float
    #: Requests the page made and the route refused (none reached the network).
    refused: int = 0


def embedded_geometry(source: str) -> Geometry | None:
    """The geometry a scrapy-playwright page method embedded in *source* (see
    :func:`playwright_page_method`), or None when there is none.

    :raises RenderError: the embedded JSON is malformed.

    >>> embedded_geometry("<html><body><p>no capture here</p></body></html>") is None
    True
    """
    # The capture appends its script at the end of <body>: search the tail first.
    tail = source[-max(len(source) // 2, 1):]
    match = _EMBED_RE.search(tail) if EMBED_ID in tail else None
    if match is None:
        if EMBED_ID not in source:
            return None
        match = _EMBED_RE.search(source)
        if match is None:
            return None
    try:
        data = json.loads(match.group(1))
    except ValueError as exc:
        raise RenderError(f"malformed embedded geometry: {exc}") from None
    return Geometry.from_json(data)


def find_chromium() -> str:
    """Path of the system Chromium: ``$CEPR_CHROMIUM`` if set, else the first of
    ``chromium``, ``chromium-browser``, ``google-chrome-stable``, ``google-chrome``,
    ``chrome`` on ``PATH``.

    :raises BrowserNotFound: none found (the message names ``apt-get install chromium``).
    """
    env = os.environ.get("CEPR_CHROMIUM")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise BrowserNotFound(f"CEPR_CHROMIUM={env!r} is not an executable file; {INSTALL_HINT}")
    for name in _EXECUTABLES:
        path = shutil.which(name)
        if path:
            return path
    raise BrowserNotFound(f"no Chromium found on PATH (tried {', '.join(_EXECUTABLES)}); {INSTALL_HINT}")


def playwright_launch_options(executable_path: str | None = None) -> dict[str, Any]:
    """``PLAYWRIGHT_LAUNCH_OPTIONS`` for scrapy-playwright: the system Chromium, headless,
    with :data:`CHROMIUM_ARGS`.

    :raises BrowserNotFound: no Chromium (see :func:`find_chromium`).
    """
    return {"executable_path": executable_path or find_chromium(), "headless": True, "args": list(CHROMIUM_ARGS)}


def playwright_page_method() -> Any:
    """A scrapy-playwright ``PageMethod`` that captures the geometry of the live page and
    embeds it in the page (so it travels in ``response.body``). Put it in a request's
    ``meta["playwright_page_methods"]`` with ``meta["playwright"] = True``.

    :raises ImportError: scrapy-playwright is not installed.
    """
    from scrapy_playwright.page import PageMethod

    return PageMethod("evaluate", CAPTURE_SCRIPT, {"embed": True})


# --------------------------------------------------------------------------- renderer


class Renderer:
    """A headless Chromium, started on first use and reused, run by a dedicated thread.

    :param executable_path: the browser; default :func:`find_chromium`.
    :param viewport: ``(width, height)`` px, default :data:`VIEWPORT`.
    :param timeout: seconds allowed to load the page and to the capture each; a page
        over it raises :class:`RenderError` (a stuck capture gets the browser killed).
    :param scripts: run the page's own scripts (default False: the DOM as served).
    :param recycle_after: pages rendered before the tab is replaced (bounds memory).

    No request leaves the browser during a render. Each page is answered from memory, once,
    at a fresh URL under :data:`RENDER_ORIGIN`, and four layers refuse everything else:

    1. the page's ``Content-Security-Policy`` (:data:`_CSP`): a sandbox (scripts off unless
       *scripts*; no meta refresh, popups or forms) and fetch directives that allow only
       inline styles and ``data:``/``blob:`` URLs, so Blink does not even issue the request;
    2. a route on the browser context (every tab and frame) that aborts any other request,
       navigations included (``net::ERR_ABORTED``: the page being rendered stays);
    3. service workers blocked;
    4. the Chromium flags :data:`OFFLINE_ARGS`: a proxy on a closed loopback port, no DNS
       resolution, no DNS prefetch, no pings, no WebRTC UDP. These catch what the browser
       sends on its own (link prefetch, speculative preconnects) past the routes.

    A page that navigates itself away anyway (only possible with *scripts*, e.g.
    ``location = "about:blank"``) raises :class:`RenderError`. Thread-safe: calls are
    serialised through the owner thread. :meth:`close` stops the browser; a closed
    renderer starts again on the next :meth:`render`.
    """

    def __init__(
        self,
        executable_path: str | None = None,
        *,
        viewport: tuple[int, int] = VIEWPORT,
        timeout: float = 15.0,
        scripts: bool = False,
        recycle_after: int = 200,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.executable_path = executable_path
        self.viewport = viewport
        self.timeout = float(timeout)
        self.scripts = scripts
        self.recycle_after = recycle_after
        self._jobs: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {}  # owned by the worker thread
        #: pid of the running Chromium main process (None when stopped or unknown).
        self.browser_pid: int | None = None
        #: Browsers started so far (1 after the first page; +1 per restart).
        self.starts = 0

    # -- public ---------------------------------------------------------------------
    def render(self, html: str) -> Rendered:
        """Load *html* (a ``str``), capture its geometry, return a :class:`Rendered`.

        :raises BrowserNotFound: no Chromium or no playwright.
        :raises RenderError: the browser crashed or the page took longer than
            :attr:`timeout`; the next call starts a new browser.
        """
        if not isinstance(html, str):
            raise TypeError(f"html must be str, not {type(html).__name__}")
        return self._call(lambda: self._render(html), 2 * self.timeout + 30.0)

    def close(self) -> None:
        """Stop the browser and the owner thread (a later :meth:`render` restarts)."""
        with self._lock:
            thread = self._thread
            self._thread = None
        if thread is not None and thread.is_alive():
            self._jobs.put(None)
            thread.join(timeout=30)

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- owner thread -----------------------------------------------------------------
    def _call(self, fn: Callable[[], Any], wait: float) -> Any:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._jobs = queue.Queue()
                self._thread = threading.Thread(target=self._loop, args=(self._jobs,), name="cepr-render", daemon=True)
                self._thread.start()
            jobs = self._jobs
        fut: Future = Future()
        jobs.put((fn, fut))
        try:
            return fut.result(timeout=wait)
        except FutureTimeout:
            # Playwright's evaluate has no timeout of its own: kill the browser so that the
            # owner thread's call fails and the thread serves the next page.
            self._kill_browser()
            raise RenderError(f"render took longer than {wait:.0f} s; browser killed") from None

    def _loop(self, jobs: queue.Queue) -> None:
        try:
            while True:
                job = jobs.get()
                if job is None:
                    break
                fn, fut = job
                if not fut.set_running_or_notify_cancel():
                    continue
                try:
                    fut.set_result(fn())
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    fut.set_exception(exc)
        finally:
            self._stop()

    def _start(self) -> None:
        st = self._state
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            raise BrowserNotFound(f"playwright is not installed; {INSTALL_HINT}") from None
        path = self.executable_path or find_chromium()
        before = _chromium_children()
        pw = sync_playwright().start()
        try:
            browser = pw.chromium.launch(executable_path=path, headless=True,
                                         args=[*CHROMIUM_ARGS, *OFFLINE_ARGS], timeout=self.timeout * 1000)
        except Exception as exc:
            pw.stop()
            raise RenderError(f"could not start {path}: {str(exc).splitlines()[0]}; {INSTALL_HINT}") from None
        st.update(pw=pw, browser=browser, page=None, pages=0, serve=None, refused=0, served=0)
        new = sorted(_chromium_children() - before)
        self.browser_pid = new[0] if new else None
        self.starts += 1
        logger.debug("started %s (%s, pid %s)", path, browser.version, self.browser_pid)

    def _page(self) -> Any:
        st = self._state
        if st.get("browser") is None or not st["browser"].is_connected():
            self._stop()
            self._start()
        if st.get("page") is None or st["pages"] >= self.recycle_after:
            if st.get("context") is not None:
                _quietly(st["context"].close)
            w, h = self.viewport
            ctx = st["browser"].new_context(java_script_enabled=self.scripts, viewport={"width": w, "height": h},
                                            service_workers="block", accept_downloads=False)
            ctx.route("**/*", self._route)
            page = ctx.new_page()
            page.set_default_timeout(self.timeout * 1000)
            st.update(context=ctx, page=page, pages=0)
        st["pages"] += 1
        return st["page"]

    def _route(self, route: Any) -> None:
        """Answer the page being rendered from memory (once); abort every other request."""
        st = self._state
        serve = st.get("serve")
        if serve is not None and route.request.url == serve[0] and route.request.is_navigation_request():
            st["serve"] = None
            route.fulfill(status=200, body=serve[1],
                          headers={"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": _CSP[self.scripts],
                                   "Cache-Control": "no-store"})
            return
        st["refused"] = st.get("refused", 0) + 1
        route.abort("aborted")

    def _render(self, html: str) -> Rendered:
        page = self._page()
        st = self._state
        st["served"] = st.get("served", 0) + 1
        url = f"{RENDER_ORIGIN}/{st['served']}-{secrets.token_hex(8)}"  # a page cannot guess the next one
        st["serve"] = (url, html.encode("utf-8", "replace"))
        st["refused"] = 0
        try:
            t0 = time.perf_counter()
            page.goto(url, wait_until="domcontentloaded", timeout=self.timeout * 1000)
            t1 = time.perf_counter()
            out = page.evaluate(CAPTURE_SCRIPT, {"embed": False})
            t2 = time.perf_counter()
            away = page.url != url
        except Exception as exc:
            crashed = not st["browser"].is_connected()
            st["serve"] = None
            st["page"] = None  # a fresh tab (and browser, if it died) next time
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            # Playwright's words when a navigation replaced the document under the capture.
            away = not crashed and (page.url != url or "because of a navigation" in first)
            if crashed:
                self._stop()
                raise RenderError(f"the browser crashed while rendering this page ({first}); it will be restarted") from None
            if not away:
                raise RenderError(f"render failed: {first}") from None
        if away:  # only page scripts can do this: the sandbox turns meta refresh off without them
            st["serve"] = None
            st["page"] = None
            raise RenderError("the page navigated away while it was rendered (only its scripts can do that: "
                              "render it with scripts off)")
        geometry = Geometry.from_json(out["geometry"])
        if st["refused"]:
            logger.debug("render %s: refused %d requests", url, st["refused"])
        return Rendered(out["html"], geometry, (t1 - t0) * 1000, (t2 - t1) * 1000, st["refused"])

    def _stop(self) -> None:
        st = self._state
        for key in ("context", "browser"):
            obj = st.pop(key, None)
            if obj is not None:
                _quietly(obj.close)
        pw = st.pop("pw", None)
        if pw is not None:
            _quietly(pw.stop)
        st.clear()
        self.browser_pid = None

    def _kill_browser(self) -> None:
        pid = self.browser_pid
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _quietly(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - closing a dead browser may fail; nothing to do
        logger.debug("ignored error while closing", exc_info=True)


def _chromium_children() -> set[int]:
    """pids of Chromium main processes (no ``--type=``) descending from this process
    (Linux ``/proc``; an empty set elsewhere)."""
    me = os.getpid()
    parents: dict[int, int] = {}
    cmdlines: dict[int, list[str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return set()
    for name in names:
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read().decode("latin-1")
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().decode("latin-1").split("\x00")
        except OSError:
            continue
        parents[pid] = int(stat[stat.rfind(")") + 2 :].split()[1])
        cmdlines[pid] = cmd
    found = set()
    for pid, cmd in cmdlines.items():
        if not cmd or "chrom" not in os.path.basename(cmd[0]) or any(a.startswith("--type=") for a in cmd):
            continue
        p, hops = parents.get(pid), 0
        while p and p != me and hops < 10:
            p, hops = parents.get(p), hops + 1
        if p == me:
            found.add(pid)
    return found


@lru_cache(maxsize=4)
def shared_renderer(timeout: float = 15.0, scripts: bool = False) -> Renderer:
    """The process's :class:`Renderer` for these options, created once (one browser per
    worker process, reused by every page it extracts)."""
    return Renderer(timeout=timeout, scripts=scripts)
