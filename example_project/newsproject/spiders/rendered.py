"""``renderedspider``: ``newsspider`` with every page rendered by Chromium through
scrapy-playwright and cleaned by ``wang2009`` (Wang et al., KDD 2009).

Needs ``apt-get install chromium`` and ``pip install "scrapy-cepr[render]"``. Run it
against a site served over HTTP (scrapy-playwright handles ``http(s)://`` only; a
``file://`` page is downloaded as usual and rendered offline by the method instead,
without its stylesheets)::

    python -m http.server 8765 --directory site &      # the demo site, with legacy.css
    scrapy crawl renderedspider -a start_urls=http://127.0.0.1:8765/index.html -O rendered.jsonl

How the geometry gets to the method: each request carries
``meta["playwright_page_methods"] = [scrapy_cepr.render.playwright_page_method()]``. That
page method runs the capture in the live page (one ``evaluate``, with the page's real
stylesheets, at a 1024×768 viewport: the screen the models were trained for), tags every
element and appends the geometry to ``<body>`` as JSON. scrapy-playwright reads the page
content after its page methods, so ``response.body`` carries the geometry through the
spider middleware, the pipeline and the worker process to
``scrapy_cepr.extract(method="wang2009")``, which then does not render again.

Items: ``url``, ``title``, ``body`` and ``body_styled_html`` (the article as HTML in its rendered
style, with absolute image URLs), from ``CEPR_STYLED_HTML = True``.
"""

from __future__ import annotations

from typing import Any

from scrapy.settings import BaseSettings

from scrapy_cepr.render import VIEWPORT, playwright_launch_options, playwright_page_method

from .newsspider import NewsSpider


class RenderedNewsSpider(NewsSpider):
    """:class:`NewsSpider` through scrapy-playwright, cleaned by ``wang2009``."""

    name = "renderedspider"

    custom_settings = {
        "DOWNLOAD_HANDLERS": {
            "http": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
            "https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
        },
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_CONTEXTS": {"default": {"viewport": {"width": VIEWPORT[0], "height": VIEWPORT[1]}}},
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": 4,
        "CEPR_METHOD": "wang2009",
        "CEPR_STYLED_HTML": True,
        # The demo server is local: no politeness delay needed.
        "DOWNLOAD_DELAY": 0.0,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
    }

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        # The system Chromium (found when the crawl starts, not at import), headless.
        if not settings.get("PLAYWRIGHT_LAUNCH_OPTIONS"):
            settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", playwright_launch_options(), priority="spider")

    @staticmethod
    def _meta(url: str) -> dict[str, Any]:
        meta = NewsSpider._meta(url)
        if url.startswith(("http://", "https://")):
            meta.update(playwright=True, playwright_page_methods=[playwright_page_method()])
        return meta
