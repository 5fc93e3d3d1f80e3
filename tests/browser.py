"""Whether the tests can render with Chromium (``wang2009``, :mod:`scrapy_cepr.render`).

Without Chromium or playwright, the tests that need them skip with the install command;
with ``CEPR_REQUIRE_RENDER=1`` (as in ``.ci/run``) they fail instead."""

from __future__ import annotations

import os
from collections.abc import Iterable

import pytest

from scrapy_cepr import METHOD_NAMES
from scrapy_cepr.render import INSTALL_HINT, BrowserNotFound, find_chromium

#: The methods that render their pages with Chromium.
RENDERING_METHODS = frozenset(["wang2009"])


def browser_missing() -> str | None:
    """Why the browser cannot be used here, or None."""
    try:
        import playwright  # noqa: F401

        find_chromium()
    except (ImportError, BrowserNotFound) as exc:
        return str(exc)
    return None


def require_browser() -> None:
    """Skip the calling test without a browser (fail under ``CEPR_REQUIRE_RENDER=1``)."""
    missing = browser_missing()
    if missing is not None:
        if os.environ.get("CEPR_REQUIRE_RENDER") == "1":
            pytest.fail(f"CEPR_REQUIRE_RENDER=1 but the browser is missing: {missing}")
        pytest.skip(f"needs Chromium and playwright: {INSTALL_HINT}")


def method_params(names: Iterable[str] = METHOD_NAMES) -> list:
    """*names* as ``pytest.param`` values, the rendering methods marked to skip (or, under
    ``CEPR_REQUIRE_RENDER=1``, to run and fail) when the browser is missing."""
    missing = browser_missing() if os.environ.get("CEPR_REQUIRE_RENDER") != "1" else None
    skip = pytest.mark.skip(reason=f"needs Chromium and playwright: {INSTALL_HINT}")
    return [pytest.param(n, marks=skip) if missing and n in RENDERING_METHODS else n for n in names]
