"""scrapy-cepr: clean news pages while they are crawled.

The extraction core (:func:`extract`, :class:`Extraction`) imports nothing from Scrapy;
the Scrapy components (:class:`Addon`, ``scrapy_cepr.pipelines.CEPRPipeline``,
``scrapy_cepr.middlewares.CEPRSpiderMiddleware``) are loaded lazily on first use.
"""

from __future__ import annotations

from typing import Any

from .api import extract
from .core.errors import ExtractionError, NotHTMLError
from .core.result import Extraction, NodeTable
from .methods import METHOD_NAMES, get_method

__version__ = "0.1.0"

__all__ = [
    "METHOD_NAMES",
    "Addon",
    "Extraction",
    "ExtractionError",
    "NodeTable",
    "NotHTMLError",
    "extract",
    "get_method",
]


def __getattr__(name: str) -> Any:
    # Lazy import (as itemadapter does for optional backends): Scrapy is only loaded when
    # the add-on is asked for.
    if name == "Addon":
        from .addon import Addon

        return Addon
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
