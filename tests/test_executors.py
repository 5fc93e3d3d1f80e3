"""Executors: all agree with the core. The process executor (workers fed over pipes from
the event loop) knows which page each worker runs: a killed worker costs only its running
page (the page queued behind it is sent again), a timed-out page's worker is killed and
replaced while the other workers go on, a failing page does not stop its worker, stray
output cannot corrupt the pipe, idle workers exit on their own at close. The fallback
pool (:class:`PoolProcessExecutor`) keeps its own guarantees."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import time
from functools import partial
from pathlib import Path

import pytest
from pages import STORM_PAGE
from scrapy.http import HtmlResponse
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_cepr import extract
from scrapy_cepr.core.errors import NotHTMLError
from scrapy_cepr.executors import (
    ExtractionTimeout,
    LazyPoolExecutor,
    PoolProcessExecutor,
    ProcessExecutor,
    WorkerDied,
    make_executor,
)
from scrapy_cepr.middlewares import CEPRSpiderMiddleware
from scrapy_cepr.options import ExtractOptions, PageResult
from scrapy_cepr.pipelines import CEPRPipeline
from scrapy_cepr.worker import extract_page

PAGE = STORM_PAGE


def blocking_worker(html, url, options):
    """extract_page, except for ``PIDFILE:<path>`` input (str, or bytes from a response):
    write this worker's pid to <path> and block for 60 s (a page stuck in a worker)."""
    text = html.decode() if isinstance(html, bytes) else html
    if text.startswith("PIDFILE:"):
        Path(text[len("PIDFILE:"):]).write_text(str(os.getpid()))
        time.sleep(60)
    return extract_page(html, url, options)


def chatty_worker(html, url, options):
    """extract_page after printing to stdout (a library that prints)."""
    print("a stray line on stdout", html[:20])
    os.write(1, b"raw bytes on fd 1\n")
    return extract_page(html, url, options)


def _refuse(name: str) -> None:
    raise ValueError(f"{name} cannot be loaded here")


class Unloadable:
    """Pickles fine, but cannot be unpickled (in a worker's set-up: the worker cannot start)."""

    def __reduce__(self):
        return (_refuse, ("this worker function",))


def unloadable_worker(marker, html, url, options):
    return extract_page(html, url, options)


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



#: The options of these tests: CEPR-SETPR as published, text only.
SETPR = ExtractOptions("setpr")


def make(kind: str, **kwargs):
    """An executor: a ``make_executor`` name, or ``"pool-process"`` (the fallback), for
    :data:`SETPR` unless told."""
    kwargs.setdefault("options", SETPR)
    if kind == "pool-process":
        return PoolProcessExecutor(**kwargs)
    return make_executor(kind, **kwargs)


@pytest.mark.parametrize("name", ["inline", "thread", "process", "pool-process"])
def test_executors_agree_with_the_core(name):
    async def go():
        executor = make(name, max_workers=1, timeout=60, options=ExtractOptions("setpr", (("alpha", 0.8),)))
        await executor.start()
        try:
            return await executor.run(PAGE, "http://news.example/a")
        finally:
            executor.shutdown()
            executor.shutdown()  # idempotent

    result, seconds = asyncio.run(go())
    expected = extract(PAGE, url="http://news.example/a", alpha=0.8)
    # Only what the pipeline writes.
    core = extract(PAGE, url="http://news.example/a", method="setpr", alpha=0.8)  # issue 20: its confidence
    assert result == PageResult(expected.title, expected.body, "article", confidence=core.confidence)
    assert result.title == "Storm hits coast"
    assert 0 < seconds < 60


def test_process_workers_get_the_page_as_sent():
    # str (with a lone surrogate), bytes, and HtmlBytes in a legacy charset: the worker
    # rebuilds exactly what the crawler sent (the same results as in this process).
    from scrapy_cepr.transport import HtmlBytes

    pages = [PAGE.replace("Storm", "Storm\ud800"), PAGE.encode("utf-8"),
             HtmlBytes(PAGE.replace("coast", "côte").encode("cp1252"), "cp1252")]

    async def go():
        executor = ProcessExecutor(options=SETPR, max_workers=2, timeout=60)
        await executor.start()
        try:
            return await asyncio.gather(*(executor.run(p, None) for p in pages))
        finally:
            await executor.aclose()

    results = asyncio.run(go())
    for page, (result, _) in zip(pages, results, strict=True):
        assert result == extract_page(page, None, SETPR)[0]
    assert results[2][0].title == "Storm hits côte"
    assert results[0][0].title == "Storm\ufffd hits coast"  # the core replaces the lone surrogate


def test_replies_are_read_whole_whatever_the_pieces_the_pipe_gives():
    """Replies split anywhere by the reads (header, payload), several in one read: each
    resolves its own page, in order."""
    from scrapy_cepr.executors.pipes import _WorkerChannel
    from scrapy_cepr.transport import encode_reply

    frames = b"".join(encode_reply(True, (PageResult(title=f"t{i}", body="é" * (i * 700)), 0.0)) for i in range(8))

    async def go(cuts):
        loop = asyncio.get_running_loop()
        channel = _WorkerChannel(loop, on_lost=lambda c: None)
        channel.ready.set_result(1)
        futures = [loop.create_future() for _ in range(8)]
        channel.pending.extend(futures)
        for start, end in zip((0, *cuts), (*cuts, len(frames)), strict=True):
            channel.pipe_data_received(1, frames[start:end])
        assert not channel._buffer
        return [f.result()[0].title for f in futures]

    expected = [f"t{i}" for i in range(8)]
    assert asyncio.run(go(())) == expected  # all in one read
    assert asyncio.run(go(tuple(range(1, len(frames))))) == expected  # one byte per read
    assert asyncio.run(go((2, 7, 3000, 3001, 9000))) == expected


def test_process_replies_reach_the_page_that_asked_even_for_pages_larger_than_the_pipe():
    # 40 pages with distinct headlines, in flight together on 2 workers, one of them ~4 MB
    # (several times the pipe buffer, so it is written in pieces as the worker reads):
    # each reply must be the one of its own page (replies are matched first in, first out).
    pages = [PAGE.replace("Storm hits coast", f"Storm number {i} hits coast") for i in range(40)]
    filler = "<p>" + "Filler words, in a long paragraph; " * 60 + "</p>\n"
    pages[7] = pages[7].replace("</body>", filler * (4_000_000 // len(filler)) + "</body>")
    assert len(pages[7].encode()) > 3_900_000

    async def go():
        executor = ProcessExecutor(options=SETPR, max_workers=2, timeout=120)
        await executor.start()
        try:
            return await asyncio.gather(*(executor.run(p.encode(), None) for p in pages))
        finally:
            await executor.aclose()

    results = asyncio.run(go())
    assert [r.title for r, _ in results] == [f"Storm number {i} hits coast" for i in range(40)]


def test_bad_arguments():
    with pytest.raises(ValueError, match="executor must be one of"):
        make_executor("gpu")
    with pytest.raises(ValueError, match="start_method"):
        make_executor("process", start_method="fork")
    with pytest.raises(ValueError, match="start_method"):
        PoolProcessExecutor(start_method="fork")
    with pytest.raises(ValueError, match="max_workers"):
        make_executor("thread", options=SETPR, max_workers=0)
    with pytest.raises(ValueError, match="max_workers"):
        ProcessExecutor(options=SETPR, max_workers=0)


@pytest.mark.parametrize("name", ["thread", "process"])
def test_run_before_start_is_an_error(name):
    with pytest.raises(RuntimeError, match="not started"):
        asyncio.run(make_executor(name).run(PAGE, None))


def test_a_worker_that_cannot_start_is_a_clear_error():
    async def go():
        executor = ProcessExecutor(options=SETPR, max_workers=2, timeout=60, worker=partial(unloadable_worker, Unloadable()))
        await executor.start()

    with pytest.raises(WorkerDied, match="could not start its workers: .*cannot be loaded here"):
        asyncio.run(go())


def test_a_failing_page_fails_alone_and_stray_output_is_harmless():
    async def go():
        executor = ProcessExecutor(options=SETPR, max_workers=1, timeout=60, worker=chatty_worker)
        await executor.start()
        try:
            [pid] = executor.worker_pids
            with pytest.raises(NotHTMLError):
                await executor.run(bytes(range(256)) * 4, None)  # binary: not HTML
            result, _ = await executor.run(PAGE, None)
            return result, pid, executor.worker_pids[0], executor.restarts
        finally:
            await executor.aclose()

    result, pid_before, pid_after, restarts = asyncio.run(go())
    assert result.title == "Storm hits coast"
    assert pid_before == pid_after and restarts == 0  # the same worker went on


@needs_proc
@pytest.mark.parametrize("kind", ["process", "pool-process"])
def test_process_timeout_stops_the_stuck_worker(tmp_path, kind):
    restarts = []

    async def go():
        executor = make(kind, max_workers=1, timeout=60, worker=blocking_worker, on_restart=restarts.append)
        await executor.start()
        try:
            # The first page makes the worker import this test module (slow, unrelated).
            await executor.run(PAGE, None)
            executor.timeout = 1.0
            with pytest.raises(ExtractionTimeout, match="timed out after 1 s"):
                await executor.run(f"PIDFILE:{tmp_path / 'pid'}", "http://news.example/slow")
            stuck = wait_for_pid(tmp_path / "pid")
            executor.timeout = 60  # the fresh worker imports this module again
            result, _ = await executor.run(PAGE, None)  # a fresh worker serves it
            return stuck, result, executor.restarts
        finally:
            executor.shutdown()

    stuck, result, n_restarts = asyncio.run(go())
    assert result.title == "Storm hits coast"
    assert n_restarts == 1 and len(restarts) == 1 and "timed out" in restarts[0]
    deadline = time.monotonic() + 10
    while running(stuck) and time.monotonic() < deadline:  # stopped, not left sleeping 60 s
        time.sleep(0.05)
    assert not running(stuck)


@needs_proc
def test_timeout_replaces_only_the_stuck_worker_and_resends_the_page_behind_it(tmp_path):
    # Two workers. Worker A runs a page stuck for 60 s and has a normal page queued
    # behind it; worker B is busy with normal pages. The stuck page times out: A is
    # killed and replaced, the queued page is sent again and cleaned, B keeps its pid.
    async def go():
        executor = ProcessExecutor(options=SETPR, max_workers=2, timeout=60, worker=blocking_worker)
        await executor.start()
        try:
            await asyncio.gather(*(executor.run(PAGE, None) for _ in range(4)))  # import this module
            pid_a, pid_b = executor.worker_pids
            executor.timeout = 3.0
            stuck = asyncio.ensure_future(executor.run(f"PIDFILE:{tmp_path / 'pid'}", None))
            await asyncio.sleep(0)  # sent: A has 1 page, B none
            normal = asyncio.ensure_future(executor.run(PAGE, None))  # -> B (fewest pages)
            await asyncio.sleep(0)
            queued = asyncio.ensure_future(executor.run(PAGE, None))  # tie -> A, behind the stuck page
            await asyncio.sleep(0)
            behind_stuck = executor.in_flight == [2, 1]
            executor.timeout = 60
            outcomes = await asyncio.gather(stuck, normal, queued, return_exceptions=True)
            return outcomes, behind_stuck, (pid_a, pid_b), executor.worker_pids, executor.restarts
        finally:
            await executor.aclose()

    (stuck, normal, queued), behind_stuck, (pid_a, pid_b), pids_after, restarts = asyncio.run(go())
    assert behind_stuck
    assert isinstance(stuck, ExtractionTimeout)
    assert normal[0].title == queued[0].title == "Storm hits coast"
    assert restarts == 1 and pid_b in pids_after and pid_a not in pids_after and len(pids_after) == 2


class BlockingPipeline(CEPRPipeline):
    worker = staticmethod(blocking_worker)


@needs_proc
def test_killed_worker_costs_only_its_running_page(tmp_path, caplog):
    # One worker runs page a (stuck) with page b queued behind it. The worker is killed
    # (SIGKILL, as the OS' out-of-memory killer would): a, the page it was running, fails;
    # b was never started and is sent again to the fresh worker; c after it is cleaned.
    crawler = get_crawler(settings_dict={"CEPR_EXECUTOR": "process", "CEPR_MAX_WORKERS": 1, "CEPR_TIMEOUT": 60,
                                         "CEPR_POOL_AFTER_SECONDS": 0, "ITEM_PIPELINES": {CEPRPipeline: 100}})
    pipeline = build_from_crawler(BlockingPipeline, crawler)
    middleware = build_from_crawler(CEPRSpiderMiddleware, crawler)
    middleware.pages = pipeline.pages

    def item(name: str, body: str) -> dict:
        url = f"http://news.example/{name}"
        return middleware.get_processed_item({}, HtmlResponse(url, body=body.encode(), encoding="utf-8"))

    async def go():
        await pipeline.open_spider()
        try:
            a = asyncio.ensure_future(pipeline.process_item(item("a", f"PIDFILE:{tmp_path / 'a'}")))
            b = asyncio.ensure_future(pipeline.process_item(item("b", PAGE)))
            pid = await asyncio.to_thread(wait_for_pid, tmp_path / "a")
            os.kill(pid, signal.SIGKILL)
            a, b = await asyncio.wait_for(asyncio.gather(a, b), 60)
            c = await asyncio.wait_for(pipeline.process_item(item("c", PAGE)), 60)
            return a, b, c
        finally:
            await pipeline.close_spider()

    a, b, c = asyncio.run(go())
    assert a["cepr_error"].startswith("failed: worker died")
    assert a["body"] is None and "html" not in a
    for cleaned in (b, c):
        assert cleaned["title"] == "Storm hits coast" and cleaned["cepr_error"] is None
    stats = crawler.stats
    assert stats.get_value("cepr/failed") == 1
    assert stats.get_value("cepr/cleaned") == 2
    assert stats.get_value("cepr/worker_restarts") == 1
    assert "http://news.example/a" in caplog.text


@needs_proc
def test_killed_pool_worker_costs_the_pages_in_flight(tmp_path):
    # The fallback pool cannot tell which page its dead worker ran: both pages in flight fail.
    async def go():
        executor = PoolProcessExecutor(options=SETPR, max_workers=2, timeout=60, worker=blocking_worker)
        await executor.start()
        try:
            a = asyncio.ensure_future(executor.run(f"PIDFILE:{tmp_path / 'a'}", None))
            b = asyncio.ensure_future(executor.run(f"PIDFILE:{tmp_path / 'b'}", None))
            pid = await asyncio.to_thread(wait_for_pid, tmp_path / "a")
            await asyncio.to_thread(wait_for_pid, tmp_path / "b")
            os.kill(pid, signal.SIGKILL)
            outcomes = await asyncio.wait_for(asyncio.gather(a, b, return_exceptions=True), 60)
            c, _ = await executor.run(PAGE, None)
            return outcomes, c, executor.restarts
        finally:
            executor.shutdown()

    outcomes, c, restarts = asyncio.run(go())
    assert all(isinstance(o, WorkerDied) for o in outcomes)
    assert c.title == "Storm hits coast" and restarts == 1


@needs_proc
def test_idle_workers_exit_on_their_own_at_close():
    async def go():
        executor = ProcessExecutor(options=SETPR, max_workers=2, timeout=60)
        await executor.start()
        await executor.run(PAGE, None)
        pids = executor.worker_pids
        await executor.aclose()
        return [executor.exit_codes.get(pid) for pid in pids], pids

    codes, pids = asyncio.run(go())
    assert codes == [0, 0]  # exited on end of input, not killed (-9)
    assert not any(running(pid) for pid in pids)


@needs_proc
@pytest.mark.parametrize("kind", ["process", "pool-process"])
def test_shutdown_while_the_pool_restarts_logs_no_asyncio_error(tmp_path, kind):
    # Issue 10 item 19: a page times out, the pool is restarted (the fresh workers are
    # still starting), the spider closes: asyncio used to log "_GatheringFuture exception
    # was never retrieved" for the fresh pool's warm-up.
    reported = []

    async def go():
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context))
        executor = make(kind, max_workers=1, timeout=60, worker=blocking_worker)
        await executor.start()
        await executor.run(PAGE, None)  # the worker imports this module
        executor.timeout = 0.5
        with pytest.raises(ExtractionTimeout):
            await executor.run(f"PIDFILE:{tmp_path / 'pid'}", None)
        assert executor.restarts == 1
        await asyncio.sleep(0.05)  # the crawl goes on a little: the warm-up starts
        executor.shutdown()  # the fresh worker is still warming up
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
        executor = make_executor("thread", options=SETPR, max_workers=1, timeout=60, pool_after_seconds=0.05)
        assert isinstance(executor, LazyPoolExecutor)
        await executor.start()
        try:
            first, _ = await executor.run(PAGE, None)
            started_after_one = executor.pool_started
            while executor.inline_seconds < 0.05:
                await executor.run(PAGE, None)
            inline_pages = executor.inline_pages
            for _ in range(100):  # the pool starts in the background
                if executor.pool_ready:
                    break
                await asyncio.sleep(0.02)
            last, _ = await executor.run(PAGE, None)
            return first, last, started_after_one, inline_pages, executor.inline_pages
        finally:
            executor.shutdown()

    first, last, started_after_one, inline_pages, inline_after = asyncio.run(go())
    assert first == last and first.title == "Storm hits coast"
    assert not started_after_one
    assert inline_pages >= 1 and inline_after == inline_pages  # the last page went to the pool


# Issue 18 item 4: a runaway page must not keep the crawl alive, and no page may hold
# the reactor longer than CEPR_TIMEOUT, from the first page on.
_THREAD_EXIT_SCRIPT = """
import asyncio, time
from scrapy_cepr.executors import ExtractionTimeout, ThreadExecutor

def runaway(html, url, options):
    time.sleep(float(html))  # an hour: the subprocess' own timeout fails the test if it waits
    return None, 0.0

async def go():
    executor = ThreadExecutor(max_workers=1, timeout=0.5, worker=runaway)
    await executor.start()
    try:
        await executor.run("3600", None)
    except ExtractionTimeout:
        print("timeout")
    await executor.aclose()

asyncio.run(go())
"""


def test_thread_executor_does_not_keep_the_process_alive_after_a_timeout(tmp_path):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _THREAD_EXIT_SCRIPT], check=False, capture_output=True, text=True, timeout=50,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "timeout"  # and it exited (within the 50 s), not after the hour


def _where_worker(html, url, options):
    import threading

    return PageResult(threading.current_thread().name, "x"), 0.0


def test_lazy_pool_sends_a_large_page_to_the_pool_even_before_it_starts():
    # The inline phase only takes pages up to INLINE_MAX_BYTES (their worst case under the
    # parse bounds is well below CEPR_TIMEOUT); a larger first page waits for the pool.
    from scrapy_cepr.executors import INLINE_MAX_BYTES

    async def go():
        executor = make_executor("thread", options=SETPR, max_workers=1, timeout=30, worker=_where_worker, pool_after_seconds=60)
        await executor.start()
        try:
            small, _ = await executor.run("<p>small</p>", None)
            large, _ = await executor.run("<p>" + "x" * INLINE_MAX_BYTES + "</p>", None)
            return small.title, large.title
        finally:
            executor.shutdown()

    small, large = asyncio.run(go())
    assert small == "MainThread"
    assert large.startswith("cepr")


def test_lazy_pool_has_no_inline_phase_when_the_timeout_is_below_its_worst_case():
    from scrapy_cepr.executors import INLINE_WORST_SECONDS

    async def go():
        executor = make_executor("thread", options=SETPR, max_workers=1, timeout=INLINE_WORST_SECONDS / 2, worker=_where_worker,
                                 pool_after_seconds=60)
        await executor.start()
        try:
            result, _ = await executor.run("<p>small</p>", None)
            return result.title
        finally:
            executor.shutdown()

    assert asyncio.run(go()).startswith("cepr")


# Issue 19: the options go to each worker once; a page carries itself, its URL and its
# per-page overrides only.
def test_a_page_request_carries_no_options():
    from scrapy_cepr.transport import REQUEST_HEADER, decode_request, encode_request

    head, body = encode_request(PAGE, "http://news.example/a")
    assert decode_request(head[REQUEST_HEADER.size:], body) == (PAGE, "http://news.example/a", None)
    assert b"setpr" not in head and b"cepr-article" not in head


@pytest.mark.parametrize("name", ["inline", "process"])
def test_per_page_overrides_change_only_that_page(name):
    async def go():
        executor = make(name, max_workers=1, timeout=60)
        await executor.start()
        try:
            nce, _ = await executor.run(PAGE, None, {"method": "nce", "formats": ("markdown",)})
            setpr, _ = await executor.run(PAGE, None)
            return nce, setpr
        finally:
            await executor.aclose()

    nce, setpr = asyncio.run(go())
    assert nce == extract_page(PAGE, None, ExtractOptions("nce", formats=("markdown",)))[0]
    assert setpr == extract_page(PAGE, None, SETPR)[0] and setpr.extras == {}


def test_bad_overrides_are_refused_in_the_crawler():
    async def go():
        executor = make("process", max_workers=1, timeout=60)
        await executor.start()
        try:
            with pytest.raises(ValueError, match="method must be one of"):
                await executor.run(PAGE, None, {"method": "boilerpipe"})
            return (await executor.run(PAGE, None))[0].title
        finally:
            await executor.aclose()

    assert asyncio.run(go()) == "Storm hits coast"
