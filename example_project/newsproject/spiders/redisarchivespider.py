"""``redisarchivespider``: ``archivespider`` in as many processes (or machines) as wanted,
sharing the archive files through Redis (:mod:`scrapy_cepr.archive_redis`).

Recipe (secure Redis first: ``docs/distributed.md``)::

    export REDIS_URL="redis://:$REDIS_PASSWORD@10.0.0.5:6379"
    # in each of N terminals / machines (the files at the same path on every machine):
    scrapy crawl redisarchivespider -a paths='/data/cc-news/*.warc.gz' -a hosts=example.com \\
        -s SCHEDULER_CRAWLER_ID=crawler-$N -o part-$N.jsonl

Any crawler's ``-a paths`` adds the files to the shared queue (each file once); every
crawler leases files from it, one at a time, and exports the items of their records.
A crawler opens only the queued files under its allowed roots: the directories of its
``-a paths`` files and ``-a roots=DIR[,DIR]`` (real paths: ``..`` and symlinks cannot
leave them); other entries go to ``redisarchivespider:archive:bad``
(``cepr/archive/redis/refused_path``). A crawler that only reads the queue needs
``-a roots=/data/cc-news``; with neither argument it refuses to start. A
crawler that dies has its file taken over by another once its heartbeat expires
(``SCHEDULER_HEARTBEAT_TIMEOUT``, 30 s by default), or at once when it restarts with the
same ``SCHEDULER_CRAWLER_ID`` (with ``-o``, append). The outputs together hold every
record once. The keys stay in Redis (``redisarchivespider:archive:*``): delete them for a
fresh run over the same files.
"""

from __future__ import annotations

import os
from typing import Any

import scrapy

try:
    from scrapy_cepr.archive import ARCHIVE_SETTINGS
    from scrapy_cepr.archive_redis import RedisArchiveSpider
except ImportError as exc:  # the project's other spiders must load without scrapy-redis or warcio
    _MISSING: ImportError | None = exc
    ARCHIVE_SETTINGS = {}
    RedisArchiveSpider = scrapy.Spider  # type: ignore[misc,assignment]
else:
    _MISSING = None


class RedisArchiveNewsSpider(RedisArchiveSpider):
    """One item per archived HTML page, files shared through Redis (see the module docstring)."""

    name = "redisarchivespider"
    custom_settings = {**ARCHIVE_SETTINGS, "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379")}

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Any:
        """:raises ImportError: scrapy-redis or warcio is missing."""
        if _MISSING is not None:
            raise ImportError("redisarchivespider needs pip install 'scrapy-cepr[warc,redis]'") from _MISSING
        return super().from_crawler(crawler, *args, **kwargs)
