"""Exceptions raised by the extraction core (all re-exported by
:mod:`scrapy_cepr.exceptions`, with those of the crawl and the command line).

Bad *parameters* raise the built-in :class:`ValueError` (naming the parameter and its
allowed range). Bad *input* that is not a usable HTML page raises :class:`NotHTMLError`;
input that is HTML but has no text gives an empty :class:`~scrapy_cepr.Extraction`.
"""

from __future__ import annotations

__all__ = ["ExtractionError", "NotHTMLError", "ParseError", "TooComplexError", "TotalConflictError"]


class ExtractionError(Exception):
    """Base class of every error the extractor raises for its *input* (never for a bug).

    Catch this one type to handle all unusable pages; the message is one line, suitable
    for an item's ``cepr_error`` field or a command-line error.
    """


class NotHTMLError(ExtractionError):
    """The input is not an HTML page: binary data (PDF, image, archive), JSON, or plain
    text without any markup.

    Raised by :func:`scrapy_cepr.extract` before parsing, from a sniff of the first
    kilobytes (see :func:`scrapy_cepr.core.page.sniff_not_html`).
    """


class ParseError(ExtractionError):
    """The HTML cannot be parsed whole: libxml2 stopped early (nesting deeper than it
    allows even after the page was flattened), so any body would be made from part of
    the page.

    Raised by :func:`scrapy_cepr.extract` (see :mod:`scrapy_cepr.core.parse`).
    """


class TooComplexError(ExtractionError):
    """The HTML is above a bound that keeps its parse linear and its memory bounded:
    too many attributes on one element, attributes in all, or elements (the limits of
    :func:`scrapy_cepr.core.parse.check_bounds`, checked before the parse).

    Raised by :func:`scrapy_cepr.extract`; a crawl exports the page with
    ``cepr_error`` = ``"failed: TooComplexError: page too complex: …"``.
    """


class TotalConflictError(ValueError):
    """Dempster's rule is undefined
    (:func:`scrapy_cepr.core.evidence.dempster`; CEDST, Zhang et al. 2018): the sources are in total conflict (K = 0 in Eq. 5),
    e.g. one source says ``m({news}) = 1`` and another ``m({~news}) = 1``."""
