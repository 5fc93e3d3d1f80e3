"""Settings of the scrapy-cepr example project.

The only line that matters for scrapy-cepr is ``ADDONS``: the add-on enables the CEPR
spider middleware (attaches each response's HTML to the items) and the CEPR pipeline
(fills ``title`` and ``body``). Everything else is ordinary polite-crawler configuration.
Override any of it on the command line, e.g. ``-s CEPR_EXECUTOR=process`` or
``-s DEPTH_LIMIT=1``.
"""

BOT_NAME = "newsproject"

SPIDER_MODULES = ["newsproject.spiders"]
NEWSPIDER_MODULE = "newsproject.spiders"

# scrapy-cepr: clean every item's page with CEPR-Article (built on CEPR-SETPR) while crawling.
ADDONS = {"scrapy_cepr.Addon": 0}
# CEPR_METHOD = "cepr-article"    # cepr-article | tpr | etpr | setpr | cetr | cetr-tm | nce | cedst | wang2009
# CEPR_EXECUTOR = "process"       # inline | thread | process (the pool starts after 1 s of inline work)
# CEPR_NON_ARTICLE = "mark"       # keep | mark (page_type field) | drop non-article pages
# CEPR_OVERWRITE = "fill"         # keep | fill | overwrite a title/body the spider set itself
# CEPR_KEEP_HTML = False

# Identify the crawler and obey robots.txt (file:// URLs have no robots.txt and are
# never checked).
USER_AGENT = "scrapy-cepr-example/0.1 (+https://github.com/scrapy-cepr/scrapy-cepr)"
ROBOTSTXT_OBEY = True

# Polite defaults for real sites: at most 4 requests at a time per site, at least 0.5 s
# between them, AutoThrottle adapting the delay to the server's latency.
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0.5
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 2.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0

# The spider yields at most one item per page. Scrapy (2.19) starts CONCURRENT_ITEMS
# asyncio tasks for every response; the default 100 cost ~3 ms of CPU per page, a third
# of the crawler's CPU (benchmarks/crawl_throughput.py: 172 -> 260 pages/s without
# cleaning, 59 -> 96 pages/s with the process executor, on 2 cores).
CONCURRENT_ITEMS = 4

# The spider sends file:// requests (the offline demo site) to this download slot, with
# no delay; AutoThrottle leaves its delay alone (meta autothrottle_dont_adjust_delay).
DOWNLOAD_SLOTS = {"local-files": {"delay": 0.0, "concurrency": 8}}

# Start page = depth 0, pages it links to = depth 1, their links = depth 2.
DEPTH_LIMIT = 2
# A safety net for real sites: stop after this many responses.
CLOSESPIDER_PAGECOUNT = 1000

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"

TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
