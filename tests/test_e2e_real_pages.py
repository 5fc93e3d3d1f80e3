"""End to end on real pages: the example spider crawls the 181 corpus pages from a local
HTTP server, and the exported bodies score what :func:`scrapy_cepr.extract` scores on the
same pages directly.

The server (``tests/httpserver.py``) serves the decompressed corpus pages at
``/pages/<id>.html`` with ``Content-Type: text/html; charset=utf-8`` and an index at ``/``
linking them all, plus four problem responses linked from the index:

* ``/pages/missing.html``: 404 (dropped by Scrapy's HttpErrorMiddleware, counted);
* ``/files/annual-report``: a PDF (``application/pdf``; no ``.pdf`` extension, so that the
  link extractor follows it): not a page to clean, so an item with ``title``, ``body``
  and ``cepr_error`` None, counted ``cepr/skipped/non_html``;
* ``/pages/empty.html``: an empty 200 page: an item with an empty body;
* ``/pages/truncated.html``: the first half of a real page (cut mid-tag): cleaned as
  ``extract()`` cleans it.

``DEPTH_LIMIT=1``: the corpus pages keep their original relative links, which on this
server would all be 404s; depth 1 stops the crawl at the pages the index links to.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from httpserver import PageServer, ServedPage, parse_stats_dump

from scrapy_cepr import extract
from scrapy_cepr.evaluation import benchmark_counts, benchmark_summary

PROJECT = Path(__file__).resolve().parents[1] / "example_project"

# A minimal PDF (header, one empty page): binary, so the pipeline must skip it.
PDF = (
    b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)

CRAWL_SETTINGS = {
    "DEPTH_LIMIT": "1",
    "ROBOTSTXT_OBEY": "False",
    "AUTOTHROTTLE_ENABLED": "False",
    "DOWNLOAD_DELAY": "0",
    "CONCURRENT_REQUESTS": "32",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "32",
    "CLOSESPIDER_PAGECOUNT": "0",
    # truncated.html is a cut copy of a corpus page, with the same <link rel="canonical">:
    # newsspider would export it once (issue 22); here both are wanted.
    "ITEM_PIPELINES": '{"scrapy_cepr.incremental.CanonicalPipeline": null}',
}


def _truncated(corpus: list) -> bytes:
    """The first half of the first page that still has article paragraphs in that half
    (10 or more ``<p``), so that the cut page has main content to find."""
    halves = (s.html[: len(s.html) // 2] for s in corpus)
    return next(h for h in halves if h.count(b"<p") >= 10)


def _site(corpus: list) -> dict[str, ServedPage]:
    pages = {f"/pages/{s.id}.html": ServedPage(s.html) for s in corpus}
    pages["/pages/truncated.html"] = ServedPage(_truncated(corpus))
    pages["/pages/empty.html"] = ServedPage(b"")
    pages["/files/annual-report"] = ServedPage(PDF, content_type="application/pdf")
    links = [*pages, "/pages/missing.html"]
    index = "".join(f'<li><a href="{p}">{p}</a></li>\n' for p in links)
    pages["/"] = ServedPage(f"<html><body><h1>Index</h1><ul>\n{index}</ul></body></html>".encode())
    return pages


@pytest.mark.slow
def test_crawl_real_pages_over_http(corpus: list, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with PageServer(_site(corpus)) as server:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "newsspider", "-a", f"start_urls={server.url}/",
               "-O", str(out)]
        for name, value in CRAWL_SETTINGS.items():
            cmd += ["-s", f"{name}={value}"]
        proc = subprocess.run(cmd, check=False, cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Spider closed (finished)" in proc.stderr
    stats = parse_stats_dump(proc.stderr)

    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_path = {urlparse(item["url"]).path: item for item in items}
    assert len(by_path) == len(items) == len(corpus) + 3  # + truncated, empty, PDF

    # One item per real page, with url, title and body, and no raw HTML left.
    pred, direct = [], []
    for s in corpus:
        item = by_path[f"/pages/{s.id}.html"]
        assert isinstance(item.get("title"), str) and isinstance(item.get("body"), str), s.id
        assert item["cepr_error"] is None and "html" not in item, s.id
        assert "<html" not in item["body"].lower() and "<div" not in item["body"].lower(), s.id
        pred.append(benchmark_counts(item["body"], s.gold_body))
        # The default (cepr-typed) reads the URL (its page-type features), as the crawl does.
        direct.append(benchmark_counts(extract(s.html, url=item["url"], encoding="utf-8").body, s.gold_body))
    crawled_f1 = benchmark_summary(pred)["f1"]
    direct_f1 = benchmark_summary(direct)["f1"]
    differing = [s.id for s, p, d in zip(corpus, pred, direct) if p != d]
    assert crawled_f1 == pytest.approx(direct_f1, abs=1e-9), differing
    assert crawled_f1 >= 0.85

    # The problem responses: counted, and the crawl still finished.
    pdf = by_path["/files/annual-report"]
    assert (pdf["title"], pdf["body"], pdf["cepr_error"]) == (None, None, None)
    assert by_path["/pages/empty.html"].get("body", "") == ""
    truncated = by_path["/pages/truncated.html"]["body"]
    truncated_url = by_path["/pages/truncated.html"]["url"]
    assert truncated and truncated == extract(_truncated(corpus), url=truncated_url, encoding="utf-8").body
    # missing.html, and /robots.txt (requested by newsspider's sitemap discovery even with
    # ROBOTSTXT_OBEY=False; a missing robots.txt is no error, so not in httperror/...)
    assert stats["downloader/response_status_count/404"] == 2
    assert stats["httperror/response_ignored_count"] == 1
    assert stats["cepr/skipped/non_html"] == 1
    assert stats["cepr/empty"] == 1
    # Every page is cleaned (+ truncated); a page whose served URL (/pages/<sha1>.html, not
    # its own) tips the page type away from "article" is cleaned and marked non-article.
    assert stats["cepr/cleaned"] + stats.get("cepr/non_article", 0) == len(corpus) + 1
    assert stats.get("cepr/non_article", 0) <= 2
    assert stats["item_scraped_count"] == len(items)
    assert stats["finish_reason"] == "finished"
