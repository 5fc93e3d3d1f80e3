"""Near-duplicate stories (issue 22): ``CEPR_DEDUP``, :mod:`scrapy_cepr.dedup`.

The pages are written here: one story (a harbour wall falls) on two sites with different
templates, the second copy with another headline, a moved paragraph and an appended
correction; and another story on the same topic (the same town, the same harbour).
They go through the real spider middleware, the cleaning pipeline and the dedup
pipeline, as in a crawl (as ``tests/test_base_install.py`` drives them). The Redis tests
start their own ``redis-server`` on a free port (``tests/redis_fixture.py``).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import scrapy
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

pytest.importorskip("datasketch", reason='needs datasketch: pip install "scrapy-cepr[dedup]"')

from scrapy_cepr.addon import DEDUP_PRIORITY, Addon  # noqa: E402
from scrapy_cepr.dedup import (  # noqa: E402
    DedupIndex,
    DedupPipeline,
    RedisDedupIndex,
    jaccard,
    shingles,
    signature,
    similarity,
)
from scrapy_cepr.middlewares import CEPRSpiderMiddleware  # noqa: E402
from scrapy_cepr.pipelines import CEPRPipeline  # noqa: E402

PARAGRAPHS = [
    "The harbour wall of Porthwen, which was built in 1820, fell into the sea on Sunday night during the storm. "
    "Nobody was hurt, the council said on Monday morning.",
    "It was one of the oldest walls on this stretch of the coast, and the council had said in spring that it "
    "would be repaired before the end of the year, at a cost of two million pounds.",
    "Residents were told to keep away from the harbour, and the road along the sea front was closed until "
    "engineers from the county have inspected what is left of the wall.",
    "Fishermen who keep their boats in the harbour said that they had warned the council for years. "
    "Several boats were damaged by the falling stones, and two sank at their moorings.",
    "The council leader said that a public meeting would be held in the town hall on Thursday evening, where "
    "the engineers would explain what can be done before the winter storms.",
]

#: Another story on the same topic: same town, same harbour, other facts.
OTHER = [
    "The Porthwen harbour festival will return this summer after a break of three years, the organisers said "
    "on Tuesday. The festival brings thousands of visitors to the town every July.",
    "Boats from along the coast will race across the bay on the Saturday, and the sea front will be closed to "
    "traffic for the parade of the lifeboat crews and the brass band.",
    "The organisers said that the festival had been cancelled because of the cost of insurance, which has now "
    "been paid by the town council and a local brewery.",
    "Tickets for the concert on the harbour wall go on sale next week, and the money raised will go to the "
    "lifeboat station and the fishermen's mission.",
]

CORRECTION = ("Correction: an earlier version of this article said that the wall was built in 1802. "
              "It was built in 1820.")


def courier(headline: str, paragraphs: list[str]) -> str:
    """A page of the first site's template."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return f"""<html><head><title>{headline} | Coast Courier</title></head><body>
<div class="nav"><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></div>
<h1>{headline}</h1><div class="story">{body}</div>
<div class="footer"><a href="/about">About us</a> <a href="/contact">Contact</a></div></body></html>"""


def gazette(headline: str, paragraphs: list[str]) -> str:
    """A page of the second site's template: other navigation, a sidebar, a byline."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return f"""<html><head><title>{headline} - The Western Gazette</title></head><body>
<header><ul class="menu"><li><a href="/">Front page</a></li><li><a href="/local">Local</a></li>
<li><a href="/business">Business</a></li><li><a href="/weather">Weather</a></li></ul></header>
<main><article><h2>{headline}</h2><p class="by">Staff reporter</p>{body}</article></main>
<aside><h3>Most read</h3><ul><li><a href="/a">Council tax to rise</a></li><li><a href="/b">New bus route</a></li>
</ul></aside><footer><p>Western Gazette Ltd</p><a href="/privacy">Privacy</a></footer></body></html>"""


FIRST = ("http://courier.example/wall", courier("Harbour wall falls into the sea", PARAGRAPHS))
REPUBLISHED = ("http://gazette.example/local/porthwen-wall", gazette(
    "Storm brings down Porthwen's historic harbour wall",
    [PARAGRAPHS[0], PARAGRAPHS[2], PARAGRAPHS[1], *PARAGRAPHS[3:], CORRECTION]))
DIFFERENT = ("http://courier.example/festival", courier("Harbour festival returns", OTHER))


def _crawler(settings: dict):
    return get_crawler(settings_dict={"CEPR_EXECUTOR": "inline", "ITEM_PIPELINES": {CEPRPipeline: 100},
                                      "CEPR_DEDUP": "mark", **settings})


def crawl(pages, settings: dict | None = None, items=None) -> tuple[list, object]:
    """*pages* ``(url, html)`` through the spider middleware, the cleaning pipeline and
    the dedup pipeline; the exported items (a DropItem for a dropped one) and the stats."""
    crawler = _crawler(settings or {})
    crawler.spider = scrapy.Spider("news")
    cleaning = build_from_crawler(CEPRPipeline, crawler)
    dedup = build_from_crawler(DedupPipeline, crawler)
    middleware = build_from_crawler(CEPRSpiderMiddleware, crawler)
    middleware.pages = cleaning.pages

    async def go():
        await cleaning.open_spider()
        await dedup.open_spider()
        out = []
        try:
            for n, (url, html) in enumerate(pages):
                response = HtmlResponse(url, body=html.encode("utf-8"), encoding="utf-8", request=scrapy.Request(url))
                item = middleware.get_processed_item(items[n] if items else {"url": url}, response)
                try:
                    out.append(await dedup.process_item(await cleaning.process_item(item)))
                except DropItem as exc:
                    out.append(exc)
        finally:
            await dedup.close_spider()
            await cleaning.close_spider()
        return out

    return asyncio.run(go()), crawler.stats


# -- the pure layer ------------------------------------------------------------------------

def test_signature_is_the_same_in_another_process():
    text = " ".join(PARAGRAPHS)
    code = ("import sys; from scrapy_cepr.dedup import signature; "
            "sys.stdout.write(signature(sys.stdin.read()).tobytes().hex())")
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    other = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True, env=env,
                           check=True).stdout
    assert other == signature(text).tobytes().hex()


def test_estimated_similarity_follows_the_exact_jaccard():
    a = " ".join(PARAGRAPHS)
    for b in (" ".join(PARAGRAPHS[:3]), " ".join(PARAGRAPHS + [CORRECTION]), " ".join(OTHER)):
        exact = jaccard(shingles(a), shingles(b))
        assert abs(similarity(signature(a), signature(b)) - exact) < 0.15, (exact, b[:40])


def test_a_text_without_words_has_no_signature():
    with pytest.raises(ValueError, match="no words"):
        signature(" -- !! ")


def test_the_index_keeps_the_first_article():
    index = DedupIndex(0.5)
    story = " ".join(PARAGRAPHS)
    assert index.find_or_add("u1", signature(story)) is None
    assert index.find_or_add("u2", signature(story + " " + CORRECTION)) == "u1"
    assert index.find_or_add("u3", signature(" ".join(OTHER))) is None
    assert index.find_or_add("u4", signature(" ".join(OTHER[:3]))) == "u3"
    assert len(index) == 2  # duplicates are not indexed


@pytest.mark.parametrize("threshold", [0, -0.5, 1.5, "x"])
def test_a_bad_threshold_is_refused(threshold):
    with pytest.raises(ValueError, match="CEPR_DEDUP_THRESHOLD"):
        build_from_crawler(DedupPipeline, _crawler({"CEPR_DEDUP_THRESHOLD": threshold}))


def test_a_bad_mode_is_refused():
    with pytest.raises(ValueError, match="CEPR_DEDUP must be one of off, mark, drop"):
        build_from_crawler(DedupPipeline, _crawler({"CEPR_DEDUP": "yes"}))


# -- the pipeline --------------------------------------------------------------------------

def test_the_same_story_republished_is_marked_and_another_story_is_not():
    items, stats = crawl([FIRST, REPUBLISHED, DIFFERENT])
    first, republished, different = items
    assert "harbour wall" in republished["body"].lower() and "Correction" in republished["body"]
    assert first["duplicate_of"] is None
    assert republished["duplicate_of"] == FIRST[0]
    assert different["duplicate_of"] is None
    assert stats.get_value("cepr/duplicates") == 1
    assert stats.get_value("cepr/dedup/stories") == 2
    assert stats.get_value("cepr/dropped/duplicate") is None
    assert stats.get_value("cepr/dedup_seconds") > 0


def test_drop_drops_the_republished_story():
    items, stats = crawl([FIRST, REPUBLISHED, DIFFERENT], {"CEPR_DEDUP": "drop"})
    assert isinstance(items[1], DropItem) and FIRST[0] in str(items[1])
    assert items[0]["duplicate_of"] is None and items[2]["duplicate_of"] is None
    assert stats.get_value("cepr/duplicates") == 1 and stats.get_value("cepr/dropped/duplicate") == 1


def test_the_canonical_url_is_the_story_url():
    canonical = "http://courier.example/news/2026/harbour-wall"
    items, _ = crawl([FIRST, REPUBLISHED], items=[{"url": FIRST[0], "canonical_url": canonical},
                                                  {"url": REPUBLISHED[0]}])
    assert items[1]["duplicate_of"] == canonical


def test_pages_without_a_body_are_not_compared():
    empty = "<html><body><div></div></body></html>"
    items, stats = crawl([("http://a.example/1", empty), ("http://b.example/2", empty), FIRST])
    assert [i["duplicate_of"] for i in items] == [None, None, None]
    assert items[0]["cepr_error"] and stats.get_value("cepr/dedup/skipped") == 2
    assert stats.get_value("cepr/duplicates") is None


def test_off_is_not_configured_and_writes_no_field():
    with pytest.raises(NotConfigured):
        build_from_crawler(DedupPipeline, _crawler({"CEPR_DEDUP": "off"}))
    crawler = _crawler({"CEPR_DEDUP": "off"})
    cleaning = build_from_crawler(CEPRPipeline, crawler)
    assert "duplicate_of" not in [name for _, name in cleaning.config.outputs()]


def test_the_index_persists_in_the_state_dir(tmp_path):
    state = str(tmp_path / "state")
    items, _ = crawl([FIRST, DIFFERENT], {"CEPR_STATE_DIR": state})
    assert [i["duplicate_of"] for i in items] == [None, None]
    assert (tmp_path / "state" / "dedup.sqlite").is_file()
    # The second run, a new crawler: the republished story is found in the first run's index.
    items, stats = crawl([REPUBLISHED, FIRST], {"CEPR_STATE_DIR": state})
    assert items[0]["duplicate_of"] == FIRST[0]
    assert items[1]["duplicate_of"] is None  # the first article itself, fetched again
    assert stats.get_value("cepr/duplicates") == 1


def test_a_state_file_of_other_signatures_is_refused(tmp_path):
    import sqlite3

    index = DedupIndex(0.5, tmp_path / "dedup.sqlite")
    index.close()
    with sqlite3.connect(tmp_path / "dedup.sqlite") as db:
        db.execute("UPDATE meta SET value = '64' WHERE key = 'num_perm'")
    db.close()
    with pytest.raises(ValueError, match="other signatures"):
        DedupIndex(0.5, tmp_path / "dedup.sqlite")


def test_the_addon_registers_the_pipeline_only_when_asked():
    settings = Settings({"CEPR_DEDUP": "mark"})
    Addon().update_settings(settings)
    assert settings.getdict("ITEM_PIPELINES")[DedupPipeline] == DEDUP_PRIORITY
    assert DEDUP_PRIORITY > settings.getdict("ITEM_PIPELINES")[CEPRPipeline]
    settings = Settings()
    Addon().update_settings(settings)
    assert DedupPipeline not in settings.getdict("ITEM_PIPELINES")


def test_without_datasketch_the_error_names_the_extra(monkeypatch):
    monkeypatch.delitem(sys.modules, "scrapy_cepr.dedup")
    monkeypatch.setitem(sys.modules, "datasketch", None)
    with pytest.raises(ImportError, match=r'pip install "scrapy-cepr\[dedup\]"'):
        importlib.import_module("scrapy_cepr.dedup")


# -- Redis: the distributed mode -----------------------------------------------------------

@pytest.fixture(scope="module")
def redis_url():
    if os.environ.get("CEPR_REQUIRE_REDIS") != "1":
        pytest.importorskip("scrapy_redis", reason="needs scrapy-redis: pip install 'scrapy-cepr[redis]'")
    from redis_fixture import started_redis

    for server in started_redis():
        yield server.url


@pytest.fixture
def fresh_redis(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushall()
    yield redis_url
    client.close()


def test_two_crawlers_share_the_index_in_redis(fresh_redis, tmp_path):
    settings = {"REDIS_URL": fresh_redis, "CEPR_STATE_DIR": str(tmp_path / "not-used")}
    items, _ = crawl([FIRST, DIFFERENT], settings)
    assert [i["duplicate_of"] for i in items] == [None, None]
    items, stats = crawl([REPUBLISHED, FIRST], settings)  # another crawler, another process's view
    assert items[0]["duplicate_of"] == FIRST[0] and items[1]["duplicate_of"] is None
    assert stats.get_value("cepr/duplicates") == 1
    assert not (tmp_path / "not-used" / "dedup.sqlite").exists()


def test_concurrent_crawlers_never_both_claim_a_story(fresh_redis):
    import redis

    story = " ".join(PARAGRAPHS)
    variants = [story, story + " " + CORRECTION, " ".join(PARAGRAPHS[1:]), " ".join(PARAGRAPHS[:4])]
    results: list[tuple[str, str | None]] = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        index = RedisDedupIndex(redis.Redis.from_url(fresh_redis), "news:dedup", 0.5)
        barrier.wait()
        for k in range(5):
            url = f"http://site{n}.example/{k}"
            first = index.find_or_add(url, signature(variants[(n + k) % len(variants)]))
            with lock:
                results.append((url, first))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    firsts = [url for url, first in results if first is None]
    assert len(firsts) == 1, results  # exactly one crawler indexed the story
    assert all(first == firsts[0] for url, first in results if first is not None)


# -- a real crawl: the example project, as a user runs it ----------------------------------

PROJECT = Path(__file__).resolve().parents[1] / "example_project"


def _scrapy_crawl(out: Path, *args: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "newsspider", "-O", str(out), "-s",
                           "CEPR_EXECUTOR=inline", "-s", "CEPR_DEDUP=mark", *args], check=False, cwd=PROJECT,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_a_mirror_of_the_site_is_marked_in_the_next_crawl(tmp_path):
    # `scrapy crawl newsspider -s CEPR_DEDUP=mark -s CEPR_STATE_DIR=DIR`, twice: the demo site,
    # then a copy of it under other URLs. The add-on registers the dedup pipeline.
    state = str(tmp_path / "state")
    first = _scrapy_crawl(tmp_path / "run1.jsonl", "-s", f"CEPR_STATE_DIR={state}")
    stories = {Path(i["url"]).name: i["url"] for i in first if i["body"] and not i["cepr_error"]}
    assert len(stories) >= 10 and all("duplicate_of" in i for i in first)
    assert [i["duplicate_of"] for i in first] == [None] * len(first)  # different stories: none marked
    mirror = tmp_path / "mirror"
    shutil.copytree(PROJECT / "site", mirror)
    second = _scrapy_crawl(tmp_path / "run2.jsonl", "-s", f"CEPR_STATE_DIR={state}",
                           "-a", f"start_urls={(mirror / 'index.html').as_uri()}")
    marked = {Path(i["url"]).name: i["duplicate_of"] for i in second if i["body"] and not i["cepr_error"]}
    # A page that declares its canonical URL is the same article under the mirror's URL:
    # the canonical pipeline drops it before dedup (incremental crawling); every other
    # page of the mirror repeats its story in the first crawl.
    declared = {Path(i["url"]).name for i in first if not i["canonical_url"].startswith("file:")}
    assert declared == {"clinic-waiting-times.html"}
    assert marked == {name: url for name, url in stories.items() if name not in declared}


def test_an_item_class_without_the_field_is_counted_and_warned_once(caplog):
    class Article(scrapy.Item):
        url = scrapy.Field()
        title = scrapy.Field()
        body = scrapy.Field()
        cepr_error = scrapy.Field()
        html = scrapy.Field()

    items, stats = crawl([FIRST, REPUBLISHED, REPUBLISHED], items=[Article(url=FIRST[0]),
                                                                   Article(url=REPUBLISHED[0]),
                                                                   Article(url=REPUBLISHED[0] + "?page=2")])
    assert all("duplicate_of" not in i for i in items)
    assert stats.get_value("cepr/duplicates") == 2
    warnings = [r for r in caplog.records if "has no field 'duplicate_of'" in r.getMessage()]
    assert len(warnings) == 1


@pytest.mark.parametrize(("settings", "expected"), [
    ({}, False),
    ({"SCHEDULER": "scrapy_cepr.distributed.RecoveringScheduler"}, True),
    ({"SCHEDULER": "scrapy_redis.scheduler.Scheduler"}, True),
    ({"REDIS_URL": "redis://127.0.0.1:6379"}, True),
])
def test_the_distributed_mode_is_recognised(settings, expected):
    from scrapy_cepr.dedup import _distributed

    assert _distributed(Settings(settings)) is expected


@pytest.mark.slow
def test_two_distributed_crawlers_mark_each_story_once(fresh_redis, tmp_path):
    # Two `scrapy crawl redisnewsspider -s CEPR_DEDUP=mark` processes at the same time on
    # one Redis (scrapy_cepr.distributed): each story is published at three URLs; over both
    # outputs exactly one page per story is its first, and the others name that page.
    import redis
    from httpserver import PageServer, ServedPage

    stories = {"wall": PARAGRAPHS, "festival": OTHER}
    site = {}
    for name, paragraphs in stories.items():
        site[f"/a/{name}.html"] = ServedPage(courier(f"{name} story", paragraphs).encode())
        site[f"/b/{name}.html"] = ServedPage(courier(f"Update on the {name}", paragraphs).encode())
        site[f"/m/{name}.html"] = ServedPage(gazette(f"{name}", [*paragraphs, CORRECTION]).encode())
    links = "".join(f'<a href="{path}">{path}</a>\n' for path in site)
    site["/"] = ServedPage(f"<html><body><h1>Index</h1>{links}</body></html>".encode())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT.parent),
                                                                     os.environ.get("PYTHONPATH")]))}
    outs = [tmp_path / f"part-{k}.jsonl" for k in range(2)]
    with PageServer(site) as server:
        base = server.url
        redis.Redis.from_url(fresh_redis).lpush("redisnewsspider:start_urls", base + "/")
        procs = []
        for k, out in enumerate(outs):
            cmd = [sys.executable, "-m", "scrapy", "crawl", "redisnewsspider", "-O", str(out)]
            for setting in (f"REDIS_URL={fresh_redis}", "DEPTH_LIMIT=1", "CEPR_EXECUTOR=inline", "CEPR_DEDUP=mark",
                            "ROBOTSTXT_OBEY=False", "AUTOTHROTTLE_ENABLED=False", "DOWNLOAD_DELAY=0",
                            "MAX_IDLE_TIME_BEFORE_CLOSE=2", "SCHEDULER_HEARTBEAT_TIMEOUT=3",
                            f"SCHEDULER_CRAWLER_ID=crawler-{k}", "LOG_LEVEL=INFO"):
                cmd += ["-s", setting]
            procs.append(subprocess.Popen(cmd, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, text=True))
        logs = [proc.communicate(timeout=180)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], "\n".join(log[-2000:] for log in logs)
    items = [json.loads(line) for out in outs for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(i["url"] for i in items) == sorted(base + path for path in site if path != "/")
    client = redis.Redis.from_url(fresh_redis)
    assert client.hlen("redisnewsspider:dedup:seq") == len(stories)  # the shared index: one first per story
    for name in stories:
        group = [i for i in items if i["url"].endswith(f"/{name}.html")]
        firsts = [i["url"] for i in group if i["duplicate_of"] is None]
        assert len(firsts) == 1, group
        assert all(i["duplicate_of"] == firsts[0] for i in group if i["url"] != firsts[0])
