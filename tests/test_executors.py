"""Executors: the three agree with the core; a killed process worker costs only the pages
in flight and the pool recovers; a timed-out page is abandoned (its process stopped) and
the next page is served by a fresh pool."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import time
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from scrapy_cepr import extract
from scrapy_cepr.executors import ExtractionTimeout, LazyPoolExecutor, ProcessExecutor, make_executor
from scrapy_cepr.middlewares import CEPRSpiderMiddleware
from scrapy_cepr.pipelines import CEPRPipeline
from scrapy_cepr.worker import extract_page

PAGE = """<html><head><title>Storm hits coast | Daily News</title></head><body>
<div class="nav"><a href="/">Home</a> <a href="/world">World</a></div>
<h1>Storm hits coast</h1>
<div class="story">
<p>The storm, which formed on Monday, reached the coast early on Tuesday. Thousands of homes lost power; roads were closed.</p>
<p>Officials said, in a statement, that the damage was severe. Schools will stay closed until Friday, they added.</p>
<p>Residents were told to stay indoors, keep away from windows, and follow the news.</p>
</div>
<div class="footer"><a href="/about">About us</a></div>
</body></html>"""


def blocking_worker(html, url, method, params):
    """extract_page, except for ``PIDFILE:<path>`` input (str, or bytes from a response):
    write this worker's pid to <path> and block for 60 s (a page stuck in a worker)."""
    text = html.decode() if isinstance(html, bytes) else html
    if text.startswith("PIDFILE:"):
        Path(text[len("PIDFILE:"):]).write_text(str(os.getpid()))
        time.sleep(60)
    return extract_page(html, url, method, params)


def wait_for_pid(path: Path, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError(f"no worker wrote {path}")


def running(pid: int) -> bool:
    """True while *pid* exists and is not a zombie (Linux /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


@pytest.mark.parametrize("name", ["inline", "thread", "process"])
def test_executors_agree_with_the_core(name):
    async def go():
        executor = make_executor(name, max_workers=1, timeout=60)
        await executor.start()
        try:
            return await executor.run(PAGE, "http://news.example/a", "setpr", {"alpha": 0.8})
        finally:
            executor.shutdown()
            executor.shutdown()  # idempotent

    result, seconds = asyncio.run(go())
    expected = extract(PAGE, url="http://news.example/a", alpha=0.8)
    # Only what the pipeline writes.
    assert result == {"title": expected.title, "body": expected.body, "page_type": "article"}
    assert result["title"] == "Storm hits coast"
    assert 0 < seconds < 60


def test_bad_arguments():
    with pytest.raises(ValueError, match="executor must be one of"):
        make_executor("gpu")
    with pytest.raises(ValueError, match="start_method"):
        ProcessExecutor(start_method="fork")
    with pytest.raises(ValueError, match="max_workers"):
        make_executor("thread", max_workers=0)


def test_run_before_start_is_an_error():
    with pytest.raises(RuntimeError, match="not started"):
        asyncio.run(make_executor("thread").run(PAGE, None, "setpr", {}))


@needs_proc
def test_process_timeout_stops_the_stuck_worker(tmp_path):
    restarts = []

    async def go():
        executor = make_executor("process", max_workers=1, timeout=60, worker=blocking_worker,
                                 on_restart=restarts.append)
        await executor.start()
        try:
            # The first page makes the worker import this test module (slow, unrelated).
            await executor.run(PAGE, None, "setpr", {})
            executor.timeout = 1.0
            with pytest.raises(ExtractionTimeout, match="timed out after 1 s"):
                await executor.run(f"PIDFILE:{tmp_path / 'pid'}", "http://news.example/slow", "setpr", {})
            stuck = wait_for_pid(tmp_path / "pid")
            executor.timeout = 60  # the fresh pool's worker imports this module again
            result, _ = await executor.run(PAGE, None, "setpr", {})  # a fresh pool serves it
            return stuck, result, executor.restarts
        finally:
            executor.shutdown()

    stuck, result, n_restarts = asyncio.run(go())
    assert result["title"] == "Storm hits coast"
    assert n_restarts == 1 and len(restarts) == 1 and "timed out" in restarts[0]
    deadline = time.monotonic() + 10
    while running(stuck) and time.monotonic() < deadline:  # terminated, not left sleeping 60 s
        time.sleep(0.05)
    assert not running(stuck)


class BlockingPipeline(CEPRPipeline):
    worker = staticmethod(blocking_worker)


@needs_proc
def test_killed_worker_costs_only_the_pages_in_flight(tmp_path, caplog):
    crawler = get_crawler(settings_dict={"CEPR_EXECUTOR": "process", "CEPR_MAX_WORKERS": 2, "CEPR_TIMEOUT": 60,
                                         "CEPR_POOL_AFTER_SECONDS": 0, "ITEM_PIPELINES": {CEPRPipeline: 100}})
    pipeline = BlockingPipeline.from_crawler(crawler)
    middleware = CEPRSpiderMiddleware.from_crawler(crawler)
    middleware.pages = pipeline.pages

    def item(name: str, body: str) -> dict:
        url = f"http://news.example/{name}"
        return middleware.get_processed_item({}, HtmlResponse(url, body=body.encode(), encoding="utf-8"))

    async def go():
        await pipeline.open_spider()
        try:
            # Two pages block both workers (in flight); the third page comes after the kill.
            a = asyncio.ensure_future(pipeline.process_item(item("a", f"PIDFILE:{tmp_path / 'a'}")))
            b = asyncio.ensure_future(pipeline.process_item(item("b", f"PIDFILE:{tmp_path / 'b'}")))
            pid = await asyncio.to_thread(wait_for_pid, tmp_path / "a")
            await asyncio.to_thread(wait_for_pid, tmp_path / "b")
            os.kill(pid, signal.SIGKILL)  # as the OS' out-of-memory killer would
            a, b = await asyncio.wait_for(asyncio.gather(a, b), 60)
            c = await asyncio.wait_for(pipeline.process_item(item("c", PAGE)), 60)
            return a, b, c
        finally:
            await pipeline.close_spider()

    a, b, c = asyncio.run(go())
    # A broken process pool fails every page in flight on it (a and b: it cannot tell
    # which one its dead worker ran); the fresh pool cleans c.
    for lost in (a, b):
        assert lost["cepr_error"].startswith("failed: worker died")
        assert lost["body"] is None and "html" not in lost
    assert c["title"] == "Storm hits coast" and c["cepr_error"] is None
    stats = crawler.stats
    assert stats.get_value("cepr/failed") == 2
    assert stats.get_value("cepr/cleaned") == 1
    assert stats.get_value("cepr/worker_restarts") == 1
    assert "http://news.example/a" in caplog.text


@needs_proc
def test_shutdown_while_the_pool_restarts_logs_no_asyncio_error(tmp_path):
    # Issue 10 item 19: a page times out, the pool is restarted (the fresh pool's workers
    # are still starting), the spider closes: asyncio used to log "_GatheringFuture
    # exception was never retrieved" for the fresh pool's warm-up.
    reported = []

    async def go():
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context))
        executor = make_executor("process", max_workers=1, timeout=60, worker=blocking_worker)
        await executor.start()
        await executor.run(PAGE, None, "setpr", {})  # the worker imports this module
        executor.timeout = 0.5
        with pytest.raises(ExtractionTimeout):
            await executor.run(f"PIDFILE:{tmp_path / 'pid'}", None, "setpr", {})
        assert executor.restarts == 1
        await asyncio.sleep(0.05)  # the crawl goes on a little: the warm-up task starts
        executor.shutdown()  # the fresh pool is still warming up
        for _ in range(20):
            await asyncio.sleep(0.1)
            gc.collect()  # unretrieved exceptions are reported when the future is collected

    asyncio.run(go())
    gc.collect()
    assert [c.get("message") for c in reported] == []


def test_lazy_pool_cleans_small_crawls_inline_and_starts_the_pool_later():
    # Issue 10 item 10: no worker for a small crawl; the pool starts in the background
    # after CEPR_POOL_AFTER_SECONDS of inline extraction and then takes the pages.
    async def go():
        executor = make_executor("thread", max_workers=1, timeout=60, pool_after_seconds=0.05)
        assert isinstance(executor, LazyPoolExecutor)
        await executor.start()
        try:
            first, _ = await executor.run(PAGE, None, "setpr", {})
            started_after_one = executor.pool._pool is not None
            while executor.inline_seconds < 0.05:
                await executor.run(PAGE, None, "setpr", {})
            inline_pages = executor.inline_pages
            for _ in range(100):  # the pool starts in the background
                if executor._ready:
                    break
                await asyncio.sleep(0.02)
            last, _ = await executor.run(PAGE, None, "setpr", {})
            return first, last, started_after_one, inline_pages, executor.inline_pages
        finally:
            executor.shutdown()

    first, last, started_after_one, inline_pages, inline_after = asyncio.run(go())
    assert first == last and first["title"] == "Storm hits coast"
    assert not started_after_one
    assert inline_pages >= 1 and inline_after == inline_pages  # the last page went to the pool
