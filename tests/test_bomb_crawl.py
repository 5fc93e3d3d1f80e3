"""Issue 18 item 4, must show: a crawl whose FIRST page is a 200,000-attribute bomb
finishes within CEPR_TIMEOUT + 10 s, with that page exported as failed and the other
pages cleaned, and the reactor never held longer than CEPR_TIMEOUT. Failed before the
fix: the bomb was parsed inline (libxml2's duplicate-attribute check is quadratic) for
minutes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from httpserver import PageServer, ServedPage

pytestmark = pytest.mark.slow

TIMEOUT = 10  # CEPR_TIMEOUT of the crawl (s)

STORY = """<html><head><title>Story {n}</title></head><body>
<div class="nav"><a href="/">Home</a> <a href="/news">News</a></div>
<h1>Harbour story number {n}</h1>
<p>The harbour bridge reopened on Monday, three weeks after a barge struck one of its piers, officials said.</p>
<p>Engineers replaced two damaged bearings and checked every cable, and traffic is back to normal, they added.</p>
<p>Residents who had to take the ferry for three weeks said they were glad to drive to work again.</p>
</body></html>"""

SCRIPT = textwrap.dedent('''
    import json, sys, time
    import scrapy
    from scrapy.crawler import CrawlerProcess

    GAPS = [0.0]

    class BombSpider(scrapy.Spider):
        name = "bomb"

        async def start(self):
            from twisted.internet import task
            last = [time.monotonic()]
            def tick():  # the longest time the reactor was held
                now = time.monotonic()
                GAPS[0] = max(GAPS[0], now - last[0])
                last[0] = now
            task.LoopingCall(tick).start(0.05)
            base = sys.argv[1]
            yield scrapy.Request(base + "/bomb.html", priority=10)  # the first page
            for n in range(1, 4):
                yield scrapy.Request(f"{base}/story{n}.html")

        def parse(self, response):
            yield {"url": response.url}

    if __name__ == "__main__":
        process = CrawlerProcess({
            "ADDONS": {"scrapy_cepr.Addon": 0},
            "CEPR_EXECUTOR": sys.argv[3], "CEPR_TIMEOUT": float(sys.argv[4]),
            "CONCURRENT_REQUESTS": 1,
            "FEEDS": {sys.argv[2]: {"format": "jsonlines"}},
            "LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False,
        })
        crawler = process.create_crawler(BombSpider)
        process.crawl(crawler)
        process.start()
        stats = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith("cepr/")}
        stats["finish_reason"] = crawler.stats.get_value("finish_reason")
        stats["longest_reactor_gap"] = GAPS[0]
        print(json.dumps(stats))
''')


def bomb(attributes: int = 200_000) -> bytes:
    names = " ".join(f"a{i}=x" for i in range(attributes))
    return f"<html><head><title>Bomb</title></head><body><div {names}><p>Hi.</p></div></body></html>".encode()


@pytest.mark.parametrize("executor", ["process", "thread", "inline"])
def test_a_crawl_whose_first_page_is_an_attribute_bomb_finishes(tmp_path, executor):
    pages = {"/bomb.html": ServedPage(bomb())}
    pages.update({f"/story{n}.html": ServedPage(STORY.format(n=n).encode()) for n in range(1, 4)})
    script = tmp_path / "crawl.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out.jsonl"
    with PageServer(pages) as server:
        start = time.monotonic()
        proc = subprocess.run([sys.executable, str(script), server.url, str(out), executor, str(TIMEOUT)],
                              check=False, capture_output=True, text=True, timeout=TIMEOUT + 60, cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    stats = json.loads(proc.stdout.strip().splitlines()[-1])
    items = {Path(i["url"]).name: i for i in map(json.loads, out.read_text().splitlines())}
    assert set(items) == {"bomb.html", "story1.html", "story2.html", "story3.html"}
    assert items["bomb.html"]["cepr_error"].startswith("failed: TooComplexError: page too complex: 200,000 attributes")
    for n in range(1, 4):
        assert items[f"story{n}.html"]["title"] == f"Harbour story number {n}"
        assert "glad to drive to work" in items[f"story{n}.html"]["body"]
        assert items[f"story{n}.html"].get("cepr_error") is None
    assert stats["cepr/cleaned"] == 3 and stats["cepr/failed"] == 1
    assert stats["finish_reason"] == "finished"
    assert stats["longest_reactor_gap"] < TIMEOUT
    assert elapsed < TIMEOUT + 10
