"""The contract between the crawler and its workers: :class:`ExtractOptions` goes to a
worker once, :class:`PageResult` comes back for every page.

Both are plain, picklable data (no Scrapy, no lxml tree, no numpy array), so they cross
a process boundary as they are (:mod:`scrapy_cepr.transport`). :class:`ExtractOptions` is
built once per crawl by :class:`scrapy_cepr.settings.CEPRConfig` from the ``CEPR_*``
settings and sent to each worker when it starts; a page then carries only its bytes, its
URL and, rarely, per-request overrides (:meth:`ExtractOptions.replace`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .core.formats import BODY_FORMATS
from .methods import DEFAULT_METHOD, get_method

__all__ = ["BYLINE", "ExtractOptions", "PageResult"]

#: Accepted values of ``byline`` (``CEPR_BYLINE``): leave the byline in the body, or move it out.
BYLINE: tuple[str, ...] = ("keep", "move")


@dataclass(frozen=True)
class ExtractOptions:
    """What a worker does with every page: frozen, picklable, validated on construction.

    :param method: one of :data:`scrapy_cepr.METHOD_NAMES` (``CEPR_METHOD``).
    :param params: the method parameters that were set, as ``(name, value)`` pairs
        (unset ones take the method's defaults); checked by the method's parameters class.
    :param formats: body formats besides text, ``"html"`` and/or ``"markdown"``
        (``CEPR_BODY_FORMATS``).
    :param metadata: also read the article's metadata (``CEPR_METADATA``).
    :param byline: ``"keep"`` or ``"move"`` (``CEPR_BYLINE``).
    :param page_type: detect the page type (False with ``CEPR_NON_ARTICLE="keep"``).
    :param min_confidence: None, or the confidence in [0, 1] below which a page is
        re-run with *fallback_method* (``CEPR_MIN_CONFIDENCE``).
    :param fallback_method: None, or the method (with its default parameters) that
        re-runs a page whose confidence is below *min_confidence*, on the same parse;
        the result with the higher confidence is kept (``CEPR_FALLBACK_METHOD`` with
        ``CEPR_LOW_CONFIDENCE="fallback"``).
    :raises ValueError: unknown method, bad parameter, format or byline value.

    New per-page options (a confidence score, an item schema) are new fields with a
    default, so that older callers keep working.

    >>> ExtractOptions("setpr", (("alpha", 0.9),)).params_dict
    {'alpha': 0.9}
    >>> ExtractOptions("setpr").replace(method="nce").method
    'nce'
    """

    method: str = DEFAULT_METHOD
    params: tuple[tuple[str, Any], ...] = ()
    formats: tuple[str, ...] = ()
    metadata: bool = False
    byline: str = "keep"
    page_type: bool = True
    min_confidence: float | None = None
    fallback_method: str | None = None

    def __post_init__(self) -> None:
        get_method(self.method).make_params(**dict(self.params))
        if self.fallback_method is not None:
            get_method(self.fallback_method)
        if not isinstance(self.formats, tuple) or any(f not in BODY_FORMATS or f == "text" for f in self.formats):
            raise ValueError(f"formats must be a tuple of {', '.join(f for f in BODY_FORMATS if f != 'text')}; "
                             f"got {self.formats!r}")
        if self.byline not in BYLINE:
            raise ValueError(f"byline must be one of {', '.join(BYLINE)}; got {self.byline!r}")

    @property
    def params_dict(self) -> dict[str, Any]:
        """The set method parameters as keyword arguments of :func:`scrapy_cepr.extract`."""
        return dict(self.params)

    def replace(self, **overrides: Any) -> ExtractOptions:
        """A copy with *overrides* (field name -> value), validated; ``self`` when empty.

        :raises TypeError: an unknown field name.
        :raises ValueError: as the constructor.
        """
        return dataclasses.replace(self, **overrides) if overrides else self

    def extras(self) -> tuple[str, ...]:
        """The extra outputs of the method (:attr:`scrapy_cepr.methods.Method.extras`)
        that these parameters ask for: the :attr:`PageResult.extras` keys the worker fills
        beside the body formats and the metadata (``("body_styled_html",)`` for
        ``wang2009`` with ``styled_html=True``)."""
        params = self.params_dict
        return tuple(name for name, param in get_method(self.method).extras if params.get(param))


@dataclass
class PageResult:
    """What comes back from a worker for one page.

    :param title: the headline, or None.
    :param body: the main content, plain text, one block per line (``""``: no main
        content); None when the page was not extracted.
    :param page_type: one of :data:`scrapy_cepr.core.pagetype.PAGE_TYPES`, or None when
        not detected.
    :param confidence: the predicted word F1 of the body in [0, 1]
        (:attr:`scrapy_cepr.core.result.Extraction.confidence`), or None; output field
        ``cepr_confidence``.
    :param fallback: None when no fallback ran, else which result was kept:
        ``"primary"`` or ``"fallback"`` (:attr:`ExtractOptions.fallback_method`).
    :param error: why the page was not cleaned (set by the pipeline: ``"timeout: …"``,
        ``"failed: …"``), else None.
    :param extras: the further outputs asked for, by output field name: ``body_html``,
        ``body_markdown`` (:attr:`ExtractOptions.formats`), ``metadata``, and the
        method's own extras (:meth:`ExtractOptions.extras`).
    """

    title: str | None = None
    body: str | None = None
    page_type: str | None = None
    error: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    confidence: float | None = None
    fallback: str | None = None

    def get(self, name: str) -> Any:
        """The value of output *name*: a field of this class (``cepr_confidence`` is
        :attr:`confidence`), else an extra (None when absent)."""
        if name in _FIELDS:
            return getattr(self, _FIELDS[name])
        return self.extras.get(name)


_FIELDS = {name: name for name in ("title", "body", "page_type", "error")} | {"cepr_confidence": "confidence"}
