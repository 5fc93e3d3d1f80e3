"""``archivespider``: clean the news pages of web archives (WARC, WARC.gz, WACZ) with the
project's settings and pipelines, as a live crawl would.

::

    scrapy crawl archivespider -a paths='crawl/*.warc.gz' -O cleaned.jsonl
    scrapy crawl archivespider -a paths=CC-NEWS-20240101.warc.gz -a hosts=bbc.co.uk,reuters.com \\
        -a since=2024-01-01 -a until=2024-01-01 -s CEPR_EXECUTOR=process -o cleaned.jsonl
    # resumable: kill it, run the same command again (with -o, append)
    scrapy crawl archivespider -a paths='cc-news/*.warc.gz' -s JOBDIR=job1 -o cleaned.jsonl

Arguments: ``paths`` (files or glob patterns, comma-separated), ``hosts`` /
``exclude_hosts``, ``since`` / ``until`` (``WARC-Date``, ``YYYY-MM-DD`` inclusive), ``status``
(default 200), ``mime`` (default HTML), ``lang`` (``Content-Language`` or ``<html lang>``),
``max_bytes``, ``downloader`` (``true``: through the downloader middlewares). Nothing is
fetched from the network: each archived response goes straight to the spider
middlewares and the callback, or with ``-a downloader=true`` is served by the ``warc:``
download handler (:mod:`scrapy_cepr.archive`).

Each item: ``url`` (``WARC-Target-URI``), ``warc_date``, ``warc_record_id``, ``warc_file``,
``warc_offset``, then the pipeline's ``title``, ``body``, ``cepr_error``, ``page_type``.
Skipped records (non-HTML, non-200, revisits, truncated …) are counted in the stats
``cepr/archive/skipped/<reason>``, not exported.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import scrapy
from scrapy.http import Response

try:
    from scrapy_cepr.archive import ArchiveSpider, record_item
except ImportError as exc:  # the project's other spiders must load without warcio
    _MISSING: ImportError | None = exc
    ArchiveSpider = scrapy.Spider  # type: ignore[misc,assignment]
else:
    _MISSING = None


class ArchiveNewsSpider(ArchiveSpider):
    """One item per archived HTML page (see the module docstring)."""

    name = "archivespider"

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Any:
        """:raises ImportError: warcio is missing (``pip install 'scrapy-cepr[warc]'``)."""
        if _MISSING is not None:
            raise ImportError("archivespider needs warcio: pip install 'scrapy-cepr[warc]'") from _MISSING
        return super().from_crawler(crawler, *args, **kwargs)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        yield record_item(response)
