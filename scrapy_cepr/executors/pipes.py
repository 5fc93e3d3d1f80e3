"""The default ``process`` executor on POSIX, :class:`ProcessExecutor`: fresh interpreters
fed over pipes by the event loop itself (frames of :mod:`scrapy_cepr.transport`; no
helper thread). A worker answers in order, so the crawler knows which page each worker
runs: a timeout or a dead worker costs only that page."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

from ..exceptions import ExtractionTimeout, WorkerDied
from ..options import PageResult
from ..transport import REPLY_HEADER, decode_reply, encode_request, encode_setup
from .base import IN_FLIGHT_PER_WORKER, WARM_UP_TIMEOUT, Overrides, _retrieve, _WorkersExecutor

__all__ = ["EXIT_GRACE", "PIPE_BYTES", "READ_BYTES", "ProcessExecutor"]

logger = logging.getLogger(__name__)


class _NotStarted(Exception):
    """The worker holding a page stopped before it started that page (it was queued
    behind the page the worker was running): the page gets one more try."""


#: The command a process worker runs (``sys.executable -c``): the transport's server loop.
#: SIGINT is ignored first thing: Ctrl-C in a terminal reaches the whole process group,
#: and it is the crawler's to handle (it then closes the workers' input).
_BOOTSTRAP = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
              "from scrapy_cepr.worker import serve; serve()")

#: Bytes asked for each worker's request pipe (Linux ``F_SETPIPE_SZ``; the default is
#: 64 KiB, less than a typical page, so a page would take several event-loop turns).
PIPE_BYTES = 1 << 20

#: Bytes the event loop asks for in each read of a worker's replies (asyncio's default
#: is 256 KiB: every read then allocates 256 KiB, above glibc's mmap threshold, for a
#: reply of a few kB: ~0.1 ms of mmap, page faults and munmap per reply against ~8 µs).
READ_BYTES = 1 << 16

#: Seconds :meth:`ProcessExecutor.aclose` waits for idle workers to exit on their own
#: (closing their input) before killing them.
EXIT_GRACE = 5.0


class _WorkerChannel(asyncio.SubprocessProtocol):
    """The crawler's side of one worker process: it writes page requests to the
    worker's standard input and reads its replies from its standard output, in the
    event loop (no thread), resolving the pages' futures first in, first out
    (:mod:`scrapy_cepr.transport`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_lost: Callable[[_WorkerChannel], None],
                 on_exit: Callable[[_WorkerChannel], None] | None = None) -> None:
        self.loop = loop
        self.on_lost = on_lost
        self.on_exit = on_exit
        self.transport: asyncio.SubprocessTransport | None = None
        self.stdin: Any = None
        self.pid: int | None = None
        #: The set-up reply (the worker's pid), or the reason it could not start.
        self.ready: asyncio.Future = loop.create_future()
        self.ready.add_done_callback(_retrieve)
        #: One future per page sent and not answered yet, oldest (the running page) first.
        self.pending: deque[asyncio.Future] = deque()
        self.alive = True
        #: Why the crawler stopped this worker (None: it was not stopped by us).
        self.stopped: str | None = None
        self.exited: asyncio.Future = loop.create_future()
        self.launch: asyncio.Future | None = None
        self._buffer = bytearray()
        self._gone = False

    @property
    def usable(self) -> bool:
        """Alive and ready for pages."""
        ready = self.ready
        return self.alive and ready.done() and not ready.cancelled() and ready.exception() is None

    # -- asyncio.SubprocessProtocol ------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport
        self.pid = transport.get_pid()
        self.stdin = transport.get_pipe_transport(0)
        replies = transport.get_pipe_transport(1)
        if replies is not None and isinstance(getattr(replies, "max_size", None), int):
            replies.max_size = READ_BYTES  # type: ignore[attr-defined]
        pipe = self.stdin.get_extra_info("pipe")
        with contextlib.suppress(ImportError, AttributeError, OSError, ValueError):  # Linux only; best effort
            import fcntl

            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[attr-defined,unused-ignore]

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        # The replies are unpickled from views of what was read (no copy); only a
        # reply cut by the end of this read waits in the buffer for the rest.
        buffer = self._buffer
        chunk: bytes | bytearray = data
        if buffer:
            buffer += data
            chunk = buffer
        head, start, size_read = REPLY_HEADER.size, 0, len(chunk)
        with memoryview(chunk) as view:
            while size_read - start >= head:
                (size,) = REPLY_HEADER.unpack_from(view, start)
                end = start + head + size
                if size_read < end:
                    break
                with view[start + head:end] as payload:
                    reply = decode_reply(payload)
                self._resolve(*reply)
                start = end
        if chunk is buffer:
            del buffer[:start]
        elif start < size_read:
            buffer += chunk[start:]

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:  # the worker's output ended: every reply it wrote has been read
            self._lost()

    def connection_lost(self, exc: Exception | None) -> None:
        # The process has exited and been reaped, its pipes are closed: closing the
        # transport now cannot race asyncio's child watcher (closing it earlier polls,
        # and may reap, the process behind the watcher's back).
        self._lost()
        if self.transport is not None:
            self.transport.close()
        if self.on_exit is not None:
            self.on_exit(self)
        if not self.exited.done():
            self.exited.set_result(None)

    # -- pages ---------------------------------------------------------------------------
    def send(self, parts: tuple[Any, ...]) -> asyncio.Future:
        """Write one page request (:func:`scrapy_cepr.transport.encode_request`); the
        future of its reply."""
        future = self.loop.create_future()
        self.pending.append(future)
        self.write(parts)
        return future

    def write(self, parts: tuple[Any, ...]) -> None:
        """Write a frame's parts (buffered by the transport if the pipe is full)."""
        for part in parts:
            self.stdin.write(part)

    def _resolve(self, ok: bool, value: Any) -> None:
        if not self.ready.done():
            if ok:
                self.ready.set_result(value)
            else:
                self.ready.set_exception(value)
            return
        if not self.pending:  # pragma: no cover - a reply nobody asked for
            logger.error("Process worker %s sent an unexpected reply; stopping it", self.pid)
            self.stop("protocol error")
            return
        future = self.pending.popleft()
        if not future.done():  # done: abandoned after a timeout
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def _lost(self) -> None:
        """The worker is gone: its running page (the oldest) died with it, the pages
        queued behind it were never started."""
        if self._gone:
            return
        self._gone, self.alive = True, False
        reason = self.stopped or "the worker process died"
        if not self.ready.done():
            self.ready.set_exception(WorkerDied(f"{reason} while starting"))
        running = True
        while self.pending:
            future = self.pending.popleft()
            if not future.done():
                future.set_exception(WorkerDied(f"worker died: {reason}") if running else _NotStarted())
            running = False
        self.on_lost(self)

    def stop(self, reason: str) -> None:
        """Kill the worker (SIGKILL); its pages are settled when its output ends."""
        self.stopped = reason
        self.alive = False
        if self.transport is not None and self.transport.get_returncode() is None:
            with contextlib.suppress(ProcessLookupError):
                self.transport.kill()

    def close_input(self) -> None:
        """Close the worker's input: an idle worker then exits on its own."""
        self.alive = False
        if self.stdin is not None:
            self.stdin.close()

    def close(self) -> None:
        """Close the transport (which kills the worker if it is still running)."""
        self.alive = False
        if self.launch is not None and not self.launch.done():
            self.launch.cancel()
        if self.transport is not None:
            self.transport.close()


class ProcessExecutor(_WorkersExecutor):
    """``max_workers`` worker processes fed over pipes from the event loop (the default
    ``process`` executor on POSIX).

    Each worker is a fresh interpreter (``sys.executable -c``, the crawler's
    ``sys.path``, in the crawler's process group, ignoring SIGINT) running
    :func:`scrapy_cepr.worker.serve`; it exits when its input closes (the crawler
    closed it, or died); pages and results travel in the frames of
    :mod:`scrapy_cepr.transport`, written and read by asyncio pipe transports: no helper
    thread, and the page's bytes go from the response body to the pipe without being
    pickled. A page goes to the worker with the fewest pages in flight (at most
    ``IN_FLIGHT_PER_WORKER × max_workers`` at once). Because a worker answers in order,
    the executor knows which page each worker is running:

    * a page that takes longer than ``timeout`` seconds (from its submission) raises
      :class:`ExtractionTimeout`; if its worker was running it, that worker is killed and
      replaced, and the page queued behind it is sent again (one more try, fresh
      timeout); other workers are untouched;
    * a worker that dies (killed by the OS, out of memory, a crash in a C library) fails
      the page it was running with :class:`WorkerDied`; the page queued behind it is sent
      again, and the worker is replaced;
    * every replacement calls ``on_restart(reason)``.

    :raises ValueError: ``max_workers < 1``.
    """

    name = "process"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._channels: list[_WorkerChannel] = []
        self._slots: asyncio.Semaphore | None = None
        self._shut = False
        self._exit_codes: dict[int, int | None] = {}

    @property
    def worker_pids(self) -> list[int | None]:
        """The process ids of the current workers (None: not launched yet), in order."""
        return [channel.pid for channel in self._channels]

    @property
    def in_flight(self) -> list[int]:
        """Pages sent to each current worker and not answered yet, in :attr:`worker_pids` order."""
        return [len(channel.pending) for channel in self._channels]

    @property
    def exit_codes(self) -> dict[int, int | None]:
        """Process id -> exit code of every worker that has exited (negative: killed by
        that signal)."""
        return dict(self._exit_codes)

    def _exited(self, channel: _WorkerChannel) -> None:
        if channel.pid is not None and channel.transport is not None:
            self._exit_codes[channel.pid] = channel.transport.get_returncode()

    async def start(self) -> None:
        """Start the workers and wait until each has imported and warmed up the method.

        :raises WorkerDied: a worker could not start (its error is in the message).
        """
        if self._slots is not None:
            return
        self._slots = asyncio.Semaphore(IN_FLIGHT_PER_WORKER * self.max_workers)
        channels = [self._add_worker() for _ in range(self.max_workers)]
        try:
            await asyncio.gather(*(asyncio.shield(c.ready) for c in channels))
        except Exception as exc:
            self.shutdown()
            raise WorkerDied(f"the process pool could not start its workers: {exc}") from exc

    def _add_worker(self) -> _WorkerChannel:
        channel = _WorkerChannel(asyncio.get_running_loop(), self._lost, self._exited)
        self._channels.append(channel)
        channel.launch = asyncio.ensure_future(self._launch(channel))
        channel.launch.add_done_callback(_retrieve)
        return channel

    async def _launch(self, channel: _WorkerChannel) -> None:
        loop = asyncio.get_running_loop()
        try:
            if not sys.executable:
                raise RuntimeError("sys.executable is unknown: cannot start a Python worker process")
            path = os.pathsep.join(p or os.getcwd() for p in sys.path)  # the crawler's imports
            await loop.subprocess_exec(lambda: channel, sys.executable, "-c", _BOOTSTRAP,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                                       env={**os.environ, "PYTHONPATH": path})
            channel.write(encode_setup(self.worker, self.options))  # its reply resolves `ready`
            await asyncio.wait_for(asyncio.shield(channel.ready), WARM_UP_TIMEOUT)
        except BaseException as exc:
            if not channel.ready.done():
                channel.ready.set_exception(exc if isinstance(exc, Exception) else WorkerDied("cancelled"))
            channel.stop(f"could not start: {exc!r}")  # its transport closes when it has exited
            if channel in self._channels:
                self._channels.remove(channel)
            if isinstance(exc, asyncio.CancelledError):
                raise

    def _lost(self, channel: _WorkerChannel) -> None:
        """A worker's output ended. If it was serving pages (not stopped by us, not
        still starting: :meth:`_launch` handles that), replace it."""
        if channel in self._channels and not self._shut and channel.ready.done() and not channel.ready.cancelled() \
                and channel.ready.exception() is None:
            self._replace(channel, f"worker {channel.pid} died")

    def _replace(self, channel: _WorkerChannel, reason: str) -> None:
        """Stop *channel*'s worker (if still running) and start a fresh one in its place."""
        self._channels.remove(channel)
        channel.stop(reason)
        self.restarts += 1
        logger.warning("Restarting a process worker (pid %s): %s", channel.pid, reason)
        self._add_worker()
        if self.on_restart is not None:
            self.on_restart(reason)

    async def run(self, html: str | bytes, url: str | None, overrides: Overrides = None) -> tuple[PageResult, float]:
        if self._slots is None:
            raise RuntimeError(f"the {self.name} executor is not started (call start() first)")
        if overrides:
            self.options.replace(**overrides)  # refused here, not in the worker
        parts = encode_request(html, url, overrides)
        async with self._slots:
            try:
                return await self._run_once(parts, url)
            except _NotStarted:  # it waited behind a page that died, or that is too slow
                logger.info("Sending %s again: it waited behind a page that failed or timed out", url)
                return await self._run_once(parts, url, last_try=True)

    async def _run_once(self, parts: tuple[Any, ...], url: str | None, last_try: bool = False) -> tuple[PageResult, float]:
        channel = await self._channel()
        future = channel.send(parts)
        try:
            return await asyncio.wait_for(future, self.timeout)
        except _NotStarted:
            if last_try:
                raise WorkerDied("worker died: two workers stopped before starting this page") from None
            raise
        except asyncio.TimeoutError:  # noqa: UP041 - distinct from TimeoutError on Python 3.10
            running = bool(channel.pending) and channel.pending[0] is future and channel.stopped is None
            if running:  # its worker is stuck on it
                if channel in self._channels:
                    self._replace(channel, f"a page timed out ({url})")
            elif not last_try:  # queued behind a slow page: the worker will skip its reply
                raise _NotStarted from None
            raise ExtractionTimeout(f"timed out after {self.timeout:g} s") from None

    async def _channel(self) -> _WorkerChannel:
        """The usable worker with the fewest pages in flight (waiting for one to start
        if none is ready)."""
        while True:
            if self._shut:
                raise RuntimeError(f"the {self.name} executor is shut down")
            best: _WorkerChannel | None = None
            for channel in self._channels:
                if channel.usable and (best is None or len(channel.pending) < len(best.pending)):
                    best = channel
            if best is not None:
                return best
            starting = [c.ready for c in self._channels if not c.ready.done()]
            if not starting:  # the workers failed to start: try one more
                starting = [self._add_worker().ready]
            await asyncio.wait(starting, return_when=asyncio.FIRST_COMPLETED)
            failed = [f for f in starting if f.done() and not f.cancelled() and f.exception() is not None]
            if failed and not any(c.usable or not c.ready.done() for c in self._channels):
                raise WorkerDied(f"no process worker could start: {failed[0].exception()}")

    def shutdown(self) -> None:
        """Stop every worker now (idempotent)."""
        self._shut = True
        channels, self._channels = self._channels, []
        for channel in channels:
            channel.close_input()
            channel.close()

    async def aclose(self) -> None:
        """Close the workers' input, give them up to :data:`EXIT_GRACE` seconds to exit
        on their own (a worker's clean-up runs, e.g. a browser it started is closed), then
        stop the rest (:meth:`shutdown`)."""
        self._shut = True
        channels = list(self._channels)
        for channel in channels:
            channel.close_input()
        exits = [c.exited for c in channels if c.transport is not None]
        if exits:
            await asyncio.wait(exits, timeout=EXIT_GRACE)
        self.shutdown()
