"""Shared fixtures. The real corpus is read in place from ``CEPR_BENCHMARK_DIR``."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from scrapy_cepr.evaluation import CORPUS_ENV, load_corpus

FIXTURES = Path(__file__).parent / "fixtures"

_HOW_TO_GET = (
    f"real-page tests need the article-extraction-benchmark corpus: download it from "
    f"https://github.com/scrapinghub/article-extraction-benchmark (MIT) and set "
    f"{CORPUS_ENV}=/path/to/article-extraction-benchmark"
)


def _corpus_path() -> Path | None:
    value = os.environ.get(CORPUS_ENV)
    if value and (Path(value) / "ground-truth.json").is_file():
        return Path(value)
    return None


@pytest.fixture
def storm_page() -> str:
    """The shared sample news page (:data:`pages.STORM_PAGE`); its title and body are
    :data:`pages.STORM_TITLE` and :data:`pages.STORM_BODY`."""
    from pages import STORM_PAGE

    return STORM_PAGE


def _best_seconds(function: Callable[[], object], repeat: int = 3) -> float:
    """The shortest of *repeat* wall-clock timings of ``function()``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.fixture
def best_seconds() -> Callable[..., float]:
    """``best_seconds(function, repeat=3)``: the shortest of *repeat* timings, in seconds.
    Tests compare two such timings (a scaling ratio), never one against a fixed limit:
    the machine is shared and its speed varies."""
    return _best_seconds


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """Path of the real corpus; skips (or fails, with CEPR_REQUIRE_CORPUS=1, as in CI)
    when it is not there."""
    path = _corpus_path()
    if path is None:
        if os.environ.get("CEPR_REQUIRE_CORPUS") == "1":
            pytest.fail(f"CEPR_REQUIRE_CORPUS=1 but the corpus is missing: {_HOW_TO_GET}")
        pytest.skip(_HOW_TO_GET)
    return path


@pytest.fixture(scope="session")
def corpus(corpus_dir: Path) -> list:
    """All samples of the real corpus (181 pages), loaded once per session."""
    return list(load_corpus(corpus_dir))


def pytest_configure(config: pytest.Config) -> None:
    """Scrapy 2.14's ``scrapy.utils.test.get_crawler()`` needs an installed reactor (later
    versions do not); ``.ci/run`` also runs the tests on the oldest Scrapy that setup.cfg
    declares, so install Scrapy's default (asyncio) reactor when it is asked for."""
    from scrapy.utils.test import get_reactor_settings

    try:
        get_reactor_settings()
    except RuntimeError:
        from scrapy.utils.reactor import install_reactor

        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """With ``CEPR_NO_SKIPS=1`` (set by ``.ci/run``) a skipped test is a failure: CI has
    every package, binary and data set the tests need, so a skip there hides a missing
    install step. Locally, tests that need a missing package skip with a message naming
    the install command."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CEPR_NO_SKIPS") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, but CEPR_NO_SKIPS=1 (CI) makes a skip a failure: {reason}"
