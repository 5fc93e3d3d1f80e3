"""A throw-away ``redis-server`` for tests and benchmarks: :class:`RedisServer`.

Starts the real server binary on a free loopback port, in a temporary directory, with no
persistence (no RDB snapshot, no AOF), optionally with a password (``requirepass``), and
stops it on exit; :func:`started_redis` for the tests' fixtures. Used by the Redis tests
and ``benchmarks/crawl_distributed.py``.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from types import TracebackType
from typing import Self

logger = logging.getLogger(__name__)

__all__ = ["INSTALL_HINT", "RedisServer", "redis_server_binary", "started_redis"]

INSTALL_HINT = "needs the redis-server binary: apt-get install redis-server (Debian/Ubuntu)"


def redis_server_binary() -> str | None:
    """Path of ``redis-server`` on ``PATH``, or None."""
    return shutil.which("redis-server")


def started_redis(password: str | None = None) -> Iterator[RedisServer]:
    """A started :class:`RedisServer` for a pytest fixture (``yield from started_redis()``):
    without ``redis-server`` the test skips naming the install command, or fails when
    ``CEPR_REQUIRE_REDIS=1`` (CI, where a skip is a failure)."""
    import pytest

    if redis_server_binary() is None:
        if os.environ.get("CEPR_REQUIRE_REDIS") == "1":
            pytest.fail(f"CEPR_REQUIRE_REDIS=1 but redis-server is missing: {INSTALL_HINT}")
        pytest.skip(INSTALL_HINT)
    with RedisServer(password=password) as server:
        yield server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """``with RedisServer() as server: server.url`` is ``redis://127.0.0.1:PORT``; with
    *password*, the server requires it (``--requirepass``) and :attr:`url` is
    ``redis://:PASSWORD@127.0.0.1:PORT`` (:attr:`url_without_password` has none).

    :raises FileNotFoundError: ``redis-server`` is not installed (message: :data:`INSTALL_HINT`).
    :raises RuntimeError: the server did not answer ``PING`` within *startup_timeout* seconds.
    """

    def __init__(self, startup_timeout: float = 10.0, password: str | None = None) -> None:
        self.startup_timeout = startup_timeout
        self.password = password
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def url_without_password(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        if self.password is None:
            return self.url_without_password
        return f"redis://:{self.password}@127.0.0.1:{self.port}"

    def __enter__(self) -> Self:
        binary = redis_server_binary()
        if binary is None:
            raise FileNotFoundError(INSTALL_HINT)
        self._dir = tempfile.TemporaryDirectory(prefix="redis-")
        self.port = _free_port()
        self._proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self._dir.name, "--protected-mode", "yes", "--loglevel", "warning",
             *(["--requirepass", self.password] if self.password is not None else [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                self._cleanup()
                raise RuntimeError(f"redis-server exited at start: {err.strip()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    # -NOAUTH: up, and asking for the password as it should.
                    if conn.recv(16).startswith((b"+PONG", b"-NOAUTH")):
                        logger.debug("redis-server on %s", self.url)
                        return self
            except OSError:
                time.sleep(0.05)
        self._cleanup()
        raise RuntimeError(f"redis-server did not answer PING on port {self.port} in {self.startup_timeout} s")

    def _cleanup(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            if self._proc.stderr:
                self._proc.stderr.close()
            self._proc = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._cleanup()
