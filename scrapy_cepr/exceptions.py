"""Every exception scrapy-cepr raises, in one module (as :mod:`scrapy.exceptions`).

* For the *input* (a page that cannot be used), :class:`ExtractionError` and its
  subclasses: :class:`NotHTMLError`, :class:`ParseError`, :class:`TooComplexError` (defined in
  :mod:`scrapy_cepr.core.errors`, so that the core needs nothing outside ``core/``) and
  :class:`RenderError` / :class:`BrowserNotFound` (wang2009's browser). The pipeline
  writes their one-line message to the item's ``cepr_error`` field.
* For the crawl's executors: :class:`ExtractionTimeout` and :class:`WorkerDied` (only the
  page concerned fails).
* For the distributed crawl: :class:`RedisUnavailableError`.
* For the command line: :class:`InputError` and :class:`UsageError` (exit status 1, 2).
* :class:`TotalConflictError` (a :class:`ValueError`): Dempster's rule undefined.

Bad *parameters* and settings raise the built-in :class:`ValueError` naming them. Every
name stays importable from the module that defined it before (``scrapy_cepr.executors``,
``scrapy_cepr.render``, ``scrapy_cepr.cli``, ``scrapy_cepr.core.evidence``).
"""

from __future__ import annotations

from .core.errors import ExtractionError, NotHTMLError, ParseError, TooComplexError, TotalConflictError

__all__ = [
    "BrowserNotFound",
    "ExtractionError",
    "ExtractionTimeout",
    "InputError",
    "NotHTMLError",
    "ParseError",
    "RedisUnavailableError",
    "RenderError",
    "TooComplexError",
    "TotalConflictError",
    "UsageError",
    "WorkerDied",
]


class RenderError(ExtractionError):
    """A page could not be rendered: the browser crashed, hung past the timeout, or could
    not be started. The page is failed (the message says why); the next page gets a
    fresh browser."""


class BrowserNotFound(RenderError):
    """No Chromium on this machine (or playwright is not installed); the message names
    the install command (:data:`scrapy_cepr.render.INSTALL_HINT`)."""


class RedisUnavailableError(ConnectionError):
    """The Redis server of ``REDIS_URL`` cannot be reached or refused the login
    (:mod:`scrapy_cepr.distributed`). The message names the host and port, never the
    password."""


class ExtractionTimeout(Exception):
    """A page took longer than ``CEPR_TIMEOUT`` seconds and was abandoned."""


class WorkerDied(Exception):
    """The worker process running the page died (the pool broke); the page was lost."""


class InputError(Exception):
    """An input the command cannot use (missing file, unreachable URL …): one line on
    stderr, exit status 1."""


class UsageError(InputError):
    """A command-line argument the command cannot use (a malformed or non-http(s) URL,
    an unusable output directory): one line on stderr, exit status 2."""
