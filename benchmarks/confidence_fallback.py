"""A crawl of the WCXB dev pages, served by a local ``http.server``, with
``CEPR_MIN_CONFIDENCE=0.6 CEPR_LOW_CONFIDENCE=fallback``: how many pages fell back, and
their word F1 before (cepr-typed alone) and after (the crawl's items).

    PYTHONPATH=$PWD python benchmarks/confidence_fallback.py [--wcxb DIR] [--limit N]
        [--fallback cepr-article] [--min-confidence 0.6] [--executor process]

The pages are read in place (``html/NNNN.html.gz``, decompressed in memory) and served
at their original path (``/NNNN/<path of the page's URL>``, so that the URL features of
the page-type classifier see the page's own path). A Scrapy spider requests every page
and yields ``{"url": ...}``; the add-on's spider middleware and pipeline clean it with
``CEPR_METHOD=cepr-typed``. "Before" is ``scrapy_cepr.extract`` with cepr-typed on the
same bytes and URL; a page fell back when that result's confidence is below the
threshold (the stats ``cepr/fallback/kept_*`` count them too).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, urlsplit

import numpy as np

from scrapy_cepr import extract
from scrapy_cepr.evaluation import load_wcxb, word_f1


def serve(pages: dict[str, bytes]) -> tuple[ThreadingHTTPServer, str]:
    """An HTTP server in a thread answering *pages* (path -> HTML bytes); its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            body = pages.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def crawl(urls: list[str], settings: dict) -> tuple[dict[str, dict], dict]:
    """Crawl *urls* with the add-on and *settings*; the items by URL and the stats."""
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    items: dict[str, dict] = {}

    class Pages(scrapy.Spider):
        name = "wcxb_pages"

        async def start(self):
            for url in urls:
                yield scrapy.Request(url, dont_filter=True)

        def parse(self, response):
            yield {"url": response.url}

    process = CrawlerProcess({"ADDONS": {"scrapy_cepr.Addon": 0}, "LOG_LEVEL": "INFO", "ROBOTSTXT_OBEY": False,
                              "CONCURRENT_REQUESTS": 8, "TELNETCONSOLE_ENABLED": False, **settings})
    crawler = process.create_crawler(Pages)

    def scraped(item, **_):
        items[item["url"]] = dict(item)

    crawler.signals.connect(scraped, signal=signals.item_scraped)  # a weak reference: *scraped* stays alive here
    process.crawl(crawler)
    process.start()
    return items, crawler.stats.get_stats()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wcxb", default=os.environ.get("CEPR_WCXB_DIR", "/work/shared/data/wcxb-dev"))
    ap.add_argument("--limit", type=int, default=0, help="only the first N pages (0: all)")
    ap.add_argument("--fallback", default="cepr-article")
    ap.add_argument("--min-confidence", type=float, default=0.6)
    ap.add_argument("--executor", default="process")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    samples = list(load_wcxb(args.wcxb))
    if args.limit:
        samples = samples[:args.limit]
    pages, gold, path_of = {}, {}, {}
    for s in samples:
        raw = s.html if isinstance(s.html, bytes) else s.html.encode("utf-8")
        parts = urlsplit(s.url or "")
        path = f"/{s.id}" + quote(parts.path or "/", safe="/%") + (f"?{quote(parts.query, safe='=&%')}" if parts.query else "")
        pages[path], gold[path] = raw, s.gold_body
        path_of[s.id] = path
    server, base = serve(pages)
    try:
        t0 = time.time()
        items, stats = crawl([base + p for p in pages], {
            "CEPR_METHOD": "cepr-typed", "CEPR_MIN_CONFIDENCE": args.min_confidence, "CEPR_LOW_CONFIDENCE": "fallback",
            "CEPR_FALLBACK_METHOD": args.fallback, "CEPR_EXECUTOR": args.executor, "CEPR_MAX_WORKERS": args.workers})
        seconds = time.time() - t0
    finally:
        server.shutdown()
    before, after, fell, kept_fb = [], [], 0, 0
    all_before, all_after = [], []
    for path, raw in pages.items():
        url = base + path
        item = items.get(url)
        if item is None:
            continue
        primary = extract(raw, url=url, method="cepr-typed")
        f_before = word_f1(primary.body, gold[path])[2]
        f_after = word_f1(item.get("body") or "", gold[path])[2]
        all_before.append(f_before)
        all_after.append(f_after)
        if primary.confidence is not None and primary.confidence < args.min_confidence:
            fell += 1
            before.append(f_before)
            after.append(f_after)
            kept_fb += (item.get("body") or "") != primary.body
    print(f"WCXB dev pages served: {len(pages)}, items: {len(items)}, crawl {seconds:.0f} s "
          f"(CEPR_EXECUTOR={args.executor}, {args.workers} worker(s))")
    print(f"CEPR_MIN_CONFIDENCE={args.min_confidence} CEPR_LOW_CONFIDENCE=fallback CEPR_FALLBACK_METHOD={args.fallback}")
    print(f"pages below the threshold (fell back): {fell}; fallback result kept on {kept_fb} "
          f"(stats: low_confidence {stats.get('cepr/low_confidence', 0)}, kept_fallback "
          f"{stats.get('cepr/fallback/kept_fallback', 0)}, kept_primary {stats.get('cepr/fallback/kept_primary', 0)})")
    if before:
        print(f"word F1 on those pages: before (cepr-typed) {np.mean(before):.4f}, after (the crawl's items) "
              f"{np.mean(after):.4f}")
    print(f"word F1 on all pages: before {np.mean(all_before):.4f}, after {np.mean(all_after):.4f}")
    hist = [stats.get(f"cepr/confidence/{k / 10:.1f}", 0) for k in range(10)]
    print("confidence histogram (per tenth): " + " ".join(map(str, hist)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
