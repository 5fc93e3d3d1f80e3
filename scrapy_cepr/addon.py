"""The Scrapy add-on: ``ADDONS = {"scrapy_cepr.Addon": 0}`` enables scrapy-cepr.

It adds :class:`~scrapy_cepr.middlewares.CEPRSpiderMiddleware` to
``SPIDER_MIDDLEWARES`` and :class:`~scrapy_cepr.pipelines.CEPRPipeline` to
``ITEM_PIPELINES`` (and :class:`~scrapy_cepr.dedup.DedupPipeline` when ``CEPR_DEDUP`` is
not ``"off"``) (Scrapy add-on API, ``update_settings(settings)``), and the components of
incremental crawling (:mod:`scrapy_cepr.incremental`; the middleware is off without
``CEPR_STATE_DIR``), unless the project
already lists them, in which case its priorities are kept. Everything else is read from
the ``CEPR_*`` settings (see :data:`scrapy_cepr.settings.SETTINGS_DOC`), validated when
the crawl starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .incremental import CanonicalPipeline, IncrementalSpiderMiddleware
from .middlewares import CEPRSpiderMiddleware
from .pipelines import CEPRPipeline

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["DEDUP_PRIORITY", "MIDDLEWARE_PRIORITY", "PIPELINE_PRIORITY", "Addon"]

#: Order of the spider middleware. Low numbers are close to the engine, so the
#: middleware sees each item last on its way out of the spider: later replacements of
#: the item by other middlewares cannot separate it from its page.
MIDDLEWARE_PRIORITY = 10

#: Order of :class:`scrapy_cepr.dedup.DedupPipeline` (``CEPR_DEDUP`` not ``"off"``): after
#: the cleaning pipeline, whose body it compares, before typical storage pipelines.
DEDUP_PRIORITY = 200

#: Order of the pipeline: 100, before the pipeline of ``scrapy startproject``'s
#: template (300) and typical storage pipelines (300–900), so that they see cleaned items
#: (title, body, no raw HTML). A pipeline that must see the raw item goes below 100.
PIPELINE_PRIORITY = 100


class Addon:
    """Enable the scrapy-cepr spider middleware and pipeline.

    >>> from scrapy.settings import Settings
    >>> settings = Settings()
    >>> Addon().update_settings(settings)
    >>> settings.getdict("ITEM_PIPELINES")[CEPRPipeline]
    100
    """

    def update_settings(self, settings: BaseSettings) -> None:
        """Add the components to *settings* (kept if already present)."""
        settings.setdefault_in_component_priority_dict("SPIDER_MIDDLEWARES", CEPRSpiderMiddleware, MIDDLEWARE_PRIORITY)
        settings.setdefault_in_component_priority_dict("ITEM_PIPELINES", CEPRPipeline, PIPELINE_PRIORITY)
        # Incremental crawling (issue 22): before the cleaning, so that a page already
        # exported is neither fetched nor, under another URL, cleaned again.
        settings.setdefault_in_component_priority_dict("SPIDER_MIDDLEWARES", IncrementalSpiderMiddleware, 50)
        settings.setdefault_in_component_priority_dict("ITEM_PIPELINES", CanonicalPipeline, 50)
        if settings.get("CEPR_DEDUP", "off") != "off":  # ImportError naming the extra without datasketch
            from .dedup import DedupPipeline

            settings.setdefault_in_component_priority_dict("ITEM_PIPELINES", DedupPipeline, DEDUP_PRIORITY)
