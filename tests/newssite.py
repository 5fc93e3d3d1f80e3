"""A small news site for the discovery and incremental-crawling tests (issue 22):
:class:`NewsSite`, served over HTTP on a free loopback port by ``http.server``.

State 1 (:meth:`NewsSite.__enter__`):

* ``/`` the home page: links its RSS feed (``<link rel="alternate">``) and **no
  article**; ``/robots.txt`` names ``/sitemap_index.xml``;
* the sitemap index lists ``/sitemaps/news.xml`` (a Google News sitemap with
  ``<news:publication_date>``) and ``/sitemaps/archive.xml.gz`` (gzipped, ``lastmod``
  30 and 60 days ago);
* ``/feed.xml`` (RSS 2.0) lists two articles also in the news sitemap, one only in the
  feed (``s7``) and ``s8`` under a second URL (``?utm_source=rss``) whose page declares
  the sitemap URL as canonical.

So a crawl finds 8 articles (:data:`STATE1_ARTICLES`), 6 of them newer than 2 days.

State 2 (:meth:`NewsSite.advance`) adds ``s9`` and ``s10``, updates ``s2`` (a new
paragraph, a sitemap ``lastmod`` of now) and republishes two stories under other URLs:
``s1`` word for word in another site's template (``/wire/s1-copy``) and ``s3`` with small
edits (a new headline, a reworded sentence, an appended correction) at ``/partner/s3``.

Every page's text is written here (no corpus text). :attr:`NewsSite.hits` lists the
paths requested, in order.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Self
from xml.sax.saxutils import escape

__all__ = ["CRAWL_SETTINGS", "NewsSite", "STATE1_ARTICLES", "STATE2_EXPORTED", "STORIES", "run_newsspider"]

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "example_project"

#: Settings of the test crawls: no politeness delay on the local server.
CRAWL_SETTINGS = ("CEPR_EXECUTOR=inline", "AUTOTHROTTLE_ENABLED=False", "DOWNLOAD_DELAY=0", "LOG_LEVEL=INFO")


def crawl_env() -> dict[str, str]:
    """The environment of a crawl subprocess: this checkout first on ``PYTHONPATH``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def run_newsspider(start_url: str, out: Path, *settings: str, spider_args: Sequence[str] = (),
                   timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``scrapy crawl newsspider -a start_urls=START_URL -O OUT`` in ``example_project``,
    with :data:`CRAWL_SETTINGS` and *settings* (``NAME=VALUE``) as ``-s``."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "newsspider", "-a", f"start_urls={start_url}", "-O", str(out)]
    for arg in spider_args:
        cmd += ["-a", arg]
    for setting in (*CRAWL_SETTINGS, *settings):
        cmd += ["-s", setting]
    return subprocess.run(cmd, check=False, cwd=PROJECT, env=crawl_env(), capture_output=True, text=True,
                          timeout=timeout)

#: slug -> (headline, paragraphs). Ten unrelated stories, each its own words.
STORIES: dict[str, tuple[str, list[str]]] = {
    "s1": ("Harbour ferry timetable doubles on weekends", [
        "The harbour ferry between Eastwick pier and the island will run every twenty minutes on Saturdays and "
        "Sundays from next month, the transport board confirmed on Tuesday.",
        "Commuters had complained for years that the single boat, built in 1987, was too slow and too small for "
        "the crowds of summer visitors who queue along the sea wall.",
        "A second vessel, leased from a shipyard in Rotterdam, arrives in early spring and will be crewed by eight "
        "new deckhands recruited locally.",
        "Fares stay at three pounds for adults, although season tickets rise by four percent to cover the cost of "
        "fuel and the extended evening service.",
    ]),
    "s2": ("Library reopens after roof repair", [
        "Northgate library welcomed readers back on Monday after a fourteen-month closure caused by a leaking "
        "copper roof that soaked part of the local history archive.",
        "Conservators dried more than two thousand parish registers in a freezer trailer parked behind the "
        "building, saving all but a handful of the oldest volumes.",
        "The refurbished reading room now has step-free access, a children's corner with beanbags and a small "
        "studio where residents can digitise family photographs.",
        "Opening hours are longer than before the closure, with late evenings on Thursdays for students preparing "
        "for exams.",
    ]),
    "s3": ("Farmers trial drones to count sheep on the moor", [
        "Hill farmers above Caldbeck have begun flying thermal-camera drones at dawn to count flocks scattered "
        "across eleven square miles of open moorland.",
        "A tally that once took three shepherds a whole weekend on quad bikes is now finished in ninety minutes, "
        "according to the cooperative running the pilot.",
        "The images also reveal ewes stuck in drainage ditches, which volunteers rescue before the heat of the "
        "day sets in.",
        "National park rangers asked pilots to avoid nesting curlews and to keep every flight below the height "
        "agreed with the civil aviation authority.",
    ]),
    "s4": ("Choir wins national amateur title", [
        "The Riverside Community Choir lifted the national amateur trophy in Birmingham on Saturday night, beating "
        "forty-two groups from across the country.",
        "Its programme of sea shanties arranged for eight voices earned the highest marks from all five judges, "
        "who praised the tenors' tuning.",
        "Founded in a church hall twelve years ago with just nine singers, the choir now rehearses weekly with more "
        "than sixty members aged sixteen to ninety-one.",
        "The prize of five thousand pounds will pay for a tour of Norwegian fjord towns next summer.",
    ]),
    "s5": ("Council approves new cycle bridge over the canal", [
        "Planners voted seven to two on Wednesday to build a lightweight steel bridge linking the railway station "
        "with the science park across the Grand Union canal.",
        "The crossing, forty metres long, will be lifted into place by a floating crane during a weekend closure "
        "of the towpath.",
        "Objectors warned that narrowboat crews would lose two overnight moorings, but engineers promised "
        "replacement berths a short distance upstream.",
        "Construction costs of 3.2 million pounds come from a national active travel grant.",
    ]),
    "s6": ("Museum unveils restored Victorian carousel", [
        "A steam-driven carousel that delighted seaside crowds in the 1890s spins again at the town museum after "
        "a painstaking six-year restoration.",
        "Volunteers carved replacement ears and tails for eleven of the thirty-six galloping horses, matching "
        "the original pine grain by hand.",
        "The organ, rebuilt from punched cardboard books found in an attic, plays waltzes and music hall tunes.",
        "Rides cost one pound on the first Sunday of every month, with profits funding the next restoration.",
    ]),
    "s7": ("Bakery apprentices open pop-up shop", [
        "Six catering students have taken over an empty unit on the high street to sell sourdough loaves and "
        "cardamom buns for a fortnight.",
        "Their tutor says running a real till, ordering flour and serving customers teaches more than any "
        "classroom exercise can.",
        "Queues formed before seven o'clock on the opening morning, and the buns sold out within an hour.",
        "The landlord has offered the unit rent-free for a longer trial if takings stay strong.",
    ]),
    "s8": ("Wildflower verges bring back rare bees", [
        "Road verges left uncut since spring have attracted a bumblebee species not recorded in the county for "
        "almost forty years, ecologists said.",
        "The shrill carder bee was photographed foraging on red clover beside the bypass by a retired teacher on "
        "her morning walk.",
        "Highways staff now mow most verges once a year in late autumn rather than every six weeks, saving money "
        "on diesel and labour.",
        "Residents can map wildflowers they spot through a free phone app run by the wildlife trust.",
    ]),
    "s9": ("Night market returns to the old tram depot", [
        "Street food stalls, vintage clothing racks and a brass band filled the old tram depot on Friday as the "
        "night market reopened for the winter season.",
        "Organisers counted four thousand visitors between six and midnight, double the attendance of the "
        "opening night last year.",
        "Traders pay a flat pitch fee of twenty pounds, which organisers say keeps the market open to first-time "
        "sellers testing a business idea.",
        "The depot's restored cobbles and iron roof trusses were lit with lanterns made by a local school.",
    ]),
    "s10": ("Swimming pool switches to heat from the sewer", [
        "The leisure centre pool is now warmed by heat pumps that draw energy from wastewater flowing through a "
        "trunk sewer beneath the car park.",
        "Engineers expect gas use at the site to fall by four fifths, cutting the centre's annual energy bill by "
        "roughly ninety thousand pounds.",
        "Swimmers noticed no difference on the first morning, apart from a new display in the foyer showing the "
        "water temperature in real time.",
        "Two more council buildings could be connected to the same system if the first winter goes well.",
    ]),
}

#: Article paths of state 1, one per story (``s8`` is also served under an alias URL).
STATE1_ARTICLES = [f"/news/s{i}" for i in range(1, 9)]
#: Paths fetched and exported by a second run against state 2.
STATE2_EXPORTED = ["/news/s2", "/news/s9", "/news/s10", "/wire/s1-copy", "/partner/s3"]

_UPDATE = "Update: the council has promised a mobile library van for villages while a new branch is planned."
_CORRECTION = "Correction: an earlier version of this article gave the wrong size for the moorland."


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _rfc822(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")


def _courier_page(title: str, paragraphs: list[str], canonical: str, published: datetime) -> str:
    body = "\n".join(f"    <p>{escape(p)}</p>" for p in paragraphs)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)} | The Courier</title>
<link rel="canonical" href="{canonical}">
<meta property="og:url" content="{canonical}">
</head><body>
<header><a href="/">The Courier</a> <nav><a href="/">Home</a> News Sport Weather Opinion</nav></header>
<main><article>
  <h1>{escape(title)}</h1>
  <p class="byline">By Staff Reporter, {published:%d %B %Y}</p>
{body}
</article></main>
<aside><h3>Newsletter</h3><p>Sign up for the morning briefing.</p></aside>
<footer><p>Copyright The Courier. All rights reserved.</p><p>Privacy Cookies Contact</p></footer>
</body></html>
"""


def _wire_page(title: str, paragraphs: list[str], canonical: str) -> str:
    body = "\n".join(f"<div class='para'><p>{escape(p)}</p></div>" for p in paragraphs)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{escape(title)} - Regional Wire</title>
<link rel="canonical" href="{canonical}"></head><body>
<div id="top"><span>Regional Wire</span> <a href="/">Front page</a> Markets Business Travel</div>
<div id="content"><div class="story"><h2 class="headline">{escape(title)}</h2>
{body}
</div></div>
<div id="side"><ul><li>Most read</li><li>Subscribe</li></ul></div>
<div id="foot">Regional Wire syndication service. Terms of use.</div>
</body></html>
"""


class NewsSite:
    """The site in state 1 on ``127.0.0.1`` (context manager); :meth:`advance` moves it
    to state 2. :attr:`url` is the base URL with a trailing ``/``."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[bytes, str]] = {}
        self.hits: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.state = 0

    # -- content ----------------------------------------------------------------------
    def _build(self, state: int, now: datetime) -> dict[str, tuple[bytes, str]]:
        t0 = self.t0
        html, xml = "text/html; charset=utf-8", "application/xml"
        pages: dict[str, tuple[bytes, str]] = {}
        published = {f"s{i}": t0 - timedelta(hours=i) for i in range(1, 9)}
        published["s5"], published["s6"] = t0 - timedelta(days=40), t0 - timedelta(days=60)
        published["s7"] = t0 - timedelta(hours=7)
        published["s9"], published["s10"] = now - timedelta(minutes=5), now - timedelta(minutes=3)
        stories = dict(STORIES)
        if state == 2:
            title, paras = stories["s2"]
            stories["s2"] = (title, [*paras, _UPDATE])
        live = [f"s{i}" for i in range(1, 9)] + (["s9", "s10"] if state == 2 else [])
        for slug in live:
            title, paras = stories[slug]
            canonical = f"{self.url}news/{slug}"
            pages[f"/news/{slug}"] = (_courier_page(title, paras, canonical, published[slug]).encode(), html)
        # s8 also under a tracking URL; its page declares the plain URL as canonical.
        pages["/news/s8?utm_source=rss"] = pages["/news/s8"]
        if state == 2:
            title, paras = STORIES["s1"]
            pages["/wire/s1-copy"] = (_wire_page(title, paras, f"{self.url}wire/s1-copy").encode(), html)
            _, paras = STORIES["s3"]
            edited = [paras[0], paras[1].replace("according to the cooperative running the pilot",
                                                 "the cooperative running the trial said"), *paras[2:], _CORRECTION]
            pages["/partner/s3"] = (_wire_page("Drones now count the moorland sheep", edited,
                                               f"{self.url}partner/s3").encode(), html)
        pages["/"] = (b"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>The Courier</title>
<link rel="alternate" type="application/rss+xml" title="Latest" href="/feed.xml"></head>
<body><h1><a href="/">The Courier</a></h1><p>Local news, every day. Read the latest in our feed.</p></body></html>
""", html)
        pages["/robots.txt"] = (b"User-agent: *\nDisallow: /private/\n\nSitemap: /sitemap_index.xml\n",
                                "text/plain")
        pages["/sitemap_index.xml"] = (f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>{self.url}sitemaps/news.xml</loc><lastmod>{_iso(now)}</lastmod></sitemap>
  <sitemap><loc>{self.url}sitemaps/archive.xml.gz</loc><lastmod>{_iso(t0 - timedelta(days=30))}</lastmod></sitemap>
</sitemapindex>
""".encode(), xml)
        news_paths = [(f"/news/s{i}", f"s{i}") for i in (1, 2, 3, 4, 8)]
        if state == 2:
            news_paths += [("/news/s9", "s9"), ("/news/s10", "s10"), ("/wire/s1-copy", "s9"),
                           ("/partner/s3", "s10")]
        entries = []
        for path, dated in news_paths:
            title = STORIES[path.rsplit("/", 1)[-1].replace("-copy", "")][0] if path.startswith("/news/") else path
            lastmod = f"<lastmod>{_iso(now)}</lastmod>" if state == 2 and path == "/news/s2" else ""
            entries.append(f"""  <url><loc>{self.url}{path.lstrip("/")}</loc>{lastmod}
    <news:news><news:publication><news:name>The Courier</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>{_iso(published[dated])}</news:publication_date><news:title>{escape(title)}</news:title></news:news></url>""")
        pages["/sitemaps/news.xml"] = (("""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
""" + "\n".join(entries) + "\n</urlset>\n").encode(), xml)
        archive = "".join(f"  <url><loc>{self.url}news/{s}</loc><lastmod>{_iso(published[s])}</lastmod></url>\n"
                          for s in ("s5", "s6"))
        pages["/sitemaps/archive.xml.gz"] = (gzip.compress(f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
{archive}</urlset>
""".encode(), mtime=0), "application/gzip")
        feed_items = [("/news/s1", "s1"), ("/news/s2", "s2"), ("/news/s7", "s7"), ("/news/s8?utm_source=rss", "s8")]
        if state == 2:
            feed_items.insert(0, ("/news/s10", "s10"))
        items = "".join(f"""    <item><title>{escape(STORIES[s][0])}</title><link>{escape(self.url + p.lstrip("/"))}</link>
      <guid>{escape(self.url + p.lstrip("/"))}</guid><pubDate>{_rfc822(published[s])}</pubDate></item>
""" for p, s in feed_items)
        pages["/feed.xml"] = (f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>The Courier</title><link>{self.url}</link><description>Latest</description>
{items}</channel></rss>
""".encode(), "application/rss+xml")
        return pages

    def advance(self) -> None:
        """Move the site to state 2 (see the module docstring)."""
        self.pages = self._build(2, datetime.now(UTC))
        self.state = 2
        with self._lock:
            self.hits = []

    # -- server -----------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("NewsSite is not running (use it as a context manager)")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/"

    def article_hits(self) -> list[str]:
        """Paths requested so far that are article pages (not robots, sitemaps, feeds or
        the home page)."""
        return [p for p in self.hits if p.startswith(("/news/", "/wire/", "/partner/"))]

    def __enter__(self) -> Self:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                with site._lock:
                    site.hits.append(self.path)
                page = site.pages.get(self.path)
                body, ctype, status = (page[0], page[1], 200) if page else (b"<p>not found</p>", "text/html", 404)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.t0 = datetime.now(UTC)
        self.pages = self._build(1, self.t0)
        self.state = 1
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


if __name__ == "__main__":  # serve the site by hand: python tests/newssite.py [2]
    import sys
    import time

    with NewsSite() as demo:
        if sys.argv[1:] == ["2"]:
            demo.advance()
        print(demo.url, flush=True)
        while True:
            time.sleep(3600)
