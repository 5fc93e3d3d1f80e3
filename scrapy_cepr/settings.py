"""The ``CEPR_*`` Scrapy settings, read and validated once: :class:`CEPRConfig`.

Every value is checked when the crawl starts (when the pipeline and the spider
middleware are built): a bad value raises :class:`ValueError` naming the setting and the
value, so a typo never turns into a silently disabled extension. ``CEPR_ENABLED=False``
is the only way to switch the extension off (:class:`scrapy.exceptions.NotConfigured`).

One declarative table, :data:`SETTINGS` (name, type, default, description, allowed
values), is the source of :class:`CEPRConfig`'s defaults, of the reading (Scrapy's typed
getters ``getbool``/``getint``/``getfloat``/``getlist`` for values given as strings), of
the validation and of the settings reference (:data:`SETTINGS_DOC`, docs/settings.rst).
Adding a setting is one row there and one field of :class:`CEPRConfig`. The fields the
pipeline writes are the rows of :data:`OUTPUT_FIELDS`; what the workers get is
:attr:`CEPRConfig.options` (:class:`~scrapy_cepr.options.ExtractOptions`).

Method parameters are mapped generically: each parameter ``p`` of the chosen method
(:meth:`scrapy_cepr.methods.Method.param_names`) is read from the setting
``"CEPR_" + p.upper().strip("_")`` (``alpha`` -> ``CEPR_ALPHA``, ``lambda_`` ->
``CEPR_LAMBDA``). String values (``scrapy crawl -s CEPR_ALPHA=0.9``) are converted to the
parameter's type. A parameter of *another* known method is ignored with an INFO message
(so ``-s CEPR_METHOD=cetr`` works in a project whose ``settings.py`` tunes
``CEPR_RADIUS`` for setpr); a ``CEPR_*`` setting that is neither a general setting nor a
parameter of any method is refused (a typo such as ``CEPR_ALHPA``).

The method can also be chosen per spider: ``custom_settings = {"CEPR_METHOD": "nce"}``,
or a spider attribute ``cepr_method = "nce"`` (also ``scrapy crawl … -a
cepr_method=nce``), which wins over the settings (:meth:`CEPRConfig.from_crawler`).
"""

from __future__ import annotations

import json
import logging
import math
import multiprocessing
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from scrapy.settings import BaseSettings

from .core.formats import BODY_FORMATS
from .methods import METHOD_NAMES, get_method
from .options import BYLINE, ExtractOptions
from .schema import ITEM_SCHEMAS, require_zyte
from .transport import PIPE_WORKERS

__all__ = [
    "EXECUTORS",
    "BYLINE",
    "CONFIDENCE_METHODS",
    "LOW_CONFIDENCE",
    "DEDUP_MODES",
    "NON_ARTICLE",
    "OUTPUT_FIELDS",
    "OVERWRITE",
    "DEFAULTS",
    "SETTINGS",
    "SETTINGS_DOC",
    "START_METHODS",
    "CEPRConfig",
    "OutputField",
    "Setting",
    "method_settings",
    "param_setting_name",
    "settings_table",
]

logger = logging.getLogger(__name__)

#: Accepted values of ``CEPR_EXECUTOR`` (see :mod:`scrapy_cepr.executors`).
EXECUTORS: tuple[str, ...] = ("inline", "thread", "process")

#: Accepted values of ``CEPR_START_METHOD``: how process workers are started. ``fork``
#: is refused: forking the crawler (a running reactor, threads, open sockets) is unsafe.
START_METHODS: tuple[str, ...] = tuple(m for m in ("spawn", "forkserver") if m in multiprocessing.get_all_start_methods())

#: Accepted values of ``CEPR_OVERWRITE``: what the pipeline does with an output field the
#: spider already set (see :mod:`scrapy_cepr.pipelines`).
OVERWRITE: tuple[str, ...] = ("keep", "fill", "overwrite")

#: Accepted values of ``CEPR_LOW_CONFIDENCE``: what happens to a page whose confidence is
#: below ``CEPR_MIN_CONFIDENCE`` (see :mod:`scrapy_cepr.core.confidence`).
LOW_CONFIDENCE: tuple[str, ...] = ("mark", "drop", "fallback")

#: The methods with a confidence (their units are the page's text nodes; CETR's are source
#: lines, Wang 2009's rendered boxes): the accepted values of ``CEPR_FALLBACK_METHOD``,
#: and the methods whose items get the output field ``cepr_confidence``.
CONFIDENCE_METHODS: tuple[str, ...] = tuple(m for m in METHOD_NAMES if m not in ("cetr", "cetr-tm", "wang2009"))

#: Accepted values of ``CEPR_NON_ARTICLE``: what happens to pages that are not articles
#: (any page type but ``article``; :mod:`scrapy_cepr.core.pagetype`).
NON_ARTICLE: tuple[str, ...] = ("keep", "mark", "drop")

#: Accepted values of ``CEPR_DEDUP``: what happens to a page repeating an earlier page's
#: story (:mod:`scrapy_cepr.dedup`).
DEDUP_MODES: tuple[str, ...] = ("off", "mark", "drop")


_PREFIX = "CEPR_"

def param_setting_name(param: str) -> str:
    """The Scrapy setting of a method parameter.

    >>> param_setting_name("lambda_")
    'CEPR_LAMBDA'
    >>> param_setting_name("alpha")
    'CEPR_ALPHA'
    """
    return _PREFIX + param.upper().strip("_")


def method_settings(method: str) -> list[tuple[str, str, str]]:
    """``(setting, default, type)`` of every parameter of *method*, from its parameters
    dataclass (the README's per-method table).

    :raises ValueError: unknown *method*.

    >>> method_settings("setpr")[:2]
    [('CEPR_ALPHA', 'None', 'float | None'), ('CEPR_LAMBDA', '1.0', 'float')]
    """
    spec = get_method(method)
    return [(param_setting_name(f.name), repr(f.default), str(f.type)) for f in fields(spec.params_cls)]


@dataclass(frozen=True)
class Setting:
    """One ``CEPR_*`` setting: a row of :data:`SETTINGS`.

    :param name: the Scrapy setting.
    :param type: how it is read (with Scrapy's typed getters) and checked: ``"bool"``,
        ``"int"``, ``"float"``, ``"str"``, ``"field"`` (an item field name), ``"list"``
        (of names), ``"probability"`` (None or a number in [0, 1]), or ``"param"`` (a method parameter: read, typed and checked by the
        method's parameters class, :func:`method_settings`).
    :param default: the value when the setting is absent (None for a ``"param"``).
    :param doc: the description in the settings reference (docs/settings.rst).
    :param choices: the allowed values (of a ``"str"``, or of each item of a ``"list"``).
    :param low: the smallest allowed number; *open_low*: the bound itself is refused.
    :param shown: the default as documented, when not ``repr(default)``.
    :param high: the largest allowed number (a ``"float"`` that is not in seconds).
    """

    name: str
    type: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    open_low: bool = False
    shown: str | None = None
    high: float | None = None

    @property
    def attr(self) -> str:
        """The :class:`CEPRConfig` attribute: ``CEPR_MAX_WORKERS`` -> ``max_workers``."""
        return self.name[len(_PREFIX):].lower()

    @property
    def documented_default(self) -> str:
        """The default as the settings reference shows it (``"cepr-article"``, ``30.0``)."""
        if self.shown is not None:
            return self.shown
        if self.type == "param":  # the setpr parameter's, from its parameters class
            return {s: d for s, d, _ in method_settings("setpr")}[self.name].replace("'", '"')
        return repr(self.default).replace("'", '"')

    def problem(self, value: Any) -> str | None:
        """Why *value* is not allowed (the end of the error message), or None."""
        if self.type == "bool":
            return None if isinstance(value, bool) else f"must be True or False; got {value!r}"
        if self.type == "int":
            if isinstance(value, bool) or not isinstance(value, int) or (self.low is not None and value < self.low):
                return f"must be an integer >= {self.low:g}; got {value!r}"
        elif self.type == "float":
            if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                    or (self.low is not None and (value <= self.low if self.open_low else value < self.low))):
                return self._range(value)
            if self.high is not None and value > self.high:
                return self._range(value)
        elif self.type == "probability":
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not 0.0 <= value <= 1.0):
                return f"must be None or a number in [0, 1]; got {value!r}"
        elif self.type == "field":
            if not isinstance(value, str) or not value:
                return f"must be a non-empty field name; got {value!r}"
        elif self.type == "list":
            if not isinstance(value, tuple) or not value or any(v not in self.choices for v in value):
                return f"must be a non-empty list of {', '.join(self.choices)}; got {value!r}"
        elif self.choices and value not in self.choices:
            return f"must be one of {', '.join(self.choices)}; got {value!r}"
        return None

    def _range(self, value: Any) -> str:
        """The message of a number out of range (seconds unless :attr:`high` is set)."""
        if self.high is not None:
            return f"must be a number in {'(' if self.open_low else '['}{self.low:g}, {self.high:g}]; got {value!r}"
        return f"must be a number of seconds {'>' if self.open_low else '>='} {self.low:g}; got {value!r}"

    def read(self, settings: BaseSettings) -> Any:
        """The value of this setting in *settings*, converted with Scrapy's typed getters
        when given as a string (``-s CEPR_MAX_WORKERS=4``); the default when absent.
        A value of the wrong type is returned as it is, for :meth:`problem` to name.

        :raises ValueError: a string that does not convert, naming the setting.
        """
        value = settings.get(self.name)
        if value is None:
            return self.default
        try:
            if self.type == "bool" and (isinstance(value, str) or (type(value) is int and value in (0, 1))):
                return settings.getbool(self.name)
            if self.type == "int" and isinstance(value, str):
                return settings.getint(self.name)
            if self.type == "probability" and isinstance(value, str):
                return None if value.strip().lower() in ("", "none", "null") else settings.getfloat(self.name)
            if self.type == "float" and isinstance(value, str):
                return settings.getfloat(self.name)
        except ValueError:
            kind = {"bool": "True or False", "int": "an integer", "float": "a number", "probability": "a number"}[self.type]
            raise ValueError(f"{self.name} must be {kind}; got {value!r}") from None
        if self.type == "list":
            return _names_list(self.name, value, settings)
        return value


#: Every ``CEPR_*`` setting, in the order of the settings reference: the one source of the
#: defaults (:class:`CEPRConfig`'s fields), the reading (:meth:`CEPRConfig.from_settings`),
#: the validation and the generated documentation (:data:`SETTINGS_DOC`). The method
#: parameters besides SETPR's are listed by :func:`method_settings`. The settings that
#: are per-page options take their defaults from :class:`~scrapy_cepr.options.ExtractOptions`.
SETTINGS: tuple[Setting, ...] = (
    Setting("CEPR_ENABLED", "bool", True,
            "Switch the extension off with False (the pipeline and middleware raise NotConfigured)."),
    Setting("CEPR_METHOD", "str", ExtractOptions.method,
            "Extraction method: " + ", ".join(METHOD_NAMES) + "."),
    Setting("CEPR_ALPHA", "param", None,
            "CEPR threshold factor α of τ = α·σ(H'); None = the paper's value (TPR 1.7, ETPR 0.7, SETPR 0.8)."),
    Setting("CEPR_LAMBDA", "param", None,
            "CEPR-SETPR λ ≥ 0 of the tag-path weight 1/dist^λ."),
    Setting("CEPR_RADIUS", "param", None,
            "CEPR-SETPR smoothing window radius r ≥ 0 (window 2r+1 text nodes)."),
    Setting("CEPR_EDGES", "param", None,
            'CEPR-SETPR: "keep" leaves the first/last r nodes unsmoothed (authors\' code), "pad" pads with zeros.'),
    Setting("CEPR_HTML_FIELD", "field", "html",
            "Item field that carries the page's HTML from the spider middleware to the pipeline."),
    Setting("CEPR_URL_FIELD", "field", "url",
            "Item field holding the page URL (filled from the response when empty; used in warnings)."),
    Setting("CEPR_TITLE_FIELD", "field", "title",
            "Output field for the extracted title (None when no title was found)."),
    Setting("CEPR_BODY_FIELD", "field", "body",
            "Output field for the extracted main content (plain text, one block per line)."),
    Setting("CEPR_ERROR_FIELD", "field", "cepr_error",
            "Output field set when a page was skipped, failed, timed out or had no main content."),
    Setting("CEPR_KEEP_HTML", "bool", False,
            "Keep the raw HTML in the exported item (in CEPR_HTML_FIELD) instead of removing it; on item classes without that field the items are exported without it (one warning per class)."),
    Setting("CEPR_EXECUTOR", "str", "process",
            '"inline" (in the reactor thread), "thread" (thread pool) or "process" (process pool).',
            choices=EXECUTORS),
    Setting("CEPR_MAX_WORKERS", "int", os.cpu_count() or 1,
            "Workers of the thread/process pool (≥ 1); each has up to 2 pages in flight (one running, one queued).",
            low=1, shown="os.cpu_count()"),
    Setting("CEPR_START_METHOD", "str", "spawn" if "spawn" in START_METHODS else START_METHODS[0],
            'How the fallback process pool starts its workers, "spawn" or "forkserver" (never "fork"); only where process workers cannot be fed over pipes (Windows). On POSIX every worker is a fresh interpreter fed over pipes, and the setting is ignored (logged at INFO).',
            choices=START_METHODS, shown='"spawn"'),
    Setting("CEPR_TIMEOUT", "float", 30.0,
            "Seconds a page may take in a thread/process worker, counted from its submission (so including the wait behind at most one page), before it is abandoned and recorded (> 0).",
            low=0, open_low=True),
    Setting("CEPR_MIN_CONFIDENCE", "probability", None,
            "None, or a confidence in [0, 1] (the predicted word F1 of the body, output field cepr_confidence): pages below it are handled as CEPR_LOW_CONFIDENCE says (stat cepr/low_confidence). Pages without a confidence (empty body, or a method without one: cetr, cetr-tm, wang2009) are never below it."),
    Setting("CEPR_LOW_CONFIDENCE", "str", "mark",
            'What happens to a page below CEPR_MIN_CONFIDENCE: "mark" writes "low-confidence: 0.42" to CEPR_ERROR_FIELD (unless the page already has an error), "drop" drops the item (stat cepr/dropped/low_confidence), "fallback" re-runs the page with CEPR_FALLBACK_METHOD in the same worker and keeps the result with the higher confidence (stats cepr/fallback/kept_fallback, cepr/fallback/kept_primary).',
            choices=LOW_CONFIDENCE),
    Setting("CEPR_FALLBACK_METHOD", "str", "cepr-article",
            "The method (with its default parameters) that re-runs a low-confidence page with CEPR_LOW_CONFIDENCE=\"fallback\"; one with a confidence: " + ", ".join(CONFIDENCE_METHODS) + ".",
            choices=CONFIDENCE_METHODS),
    Setting("CEPR_MAX_HTML_BYTES", "int", 10_000_000,
            "Pages whose HTML is larger (bytes) are skipped and recorded; 0 = no limit.",
            low=0),
    Setting("CEPR_MAX_PENDING_PAGES", "int", 1000,
            "Bound of the side channel that carries HTML for item classes without CEPR_HTML_FIELD.",
            low=1),
    Setting("CEPR_OVERWRITE", "str", "fill",
            'An output field (title, body, error, page type, body formats, metadata) the spider already set: "fill" writes only empty (None or "") fields, "keep" never touches a field the spider set, "overwrite" always writes (a warning, once per field, when a value is replaced); a None value never replaces a spider\'s value.',
            choices=OVERWRITE),
    Setting("CEPR_NON_ARTICLE", "str", "mark",
            'Pages that are not articles (any page type but "article": forum, product, collection, listing, documentation, service): "mark" writes the type to CEPR_PAGE_TYPE_FIELD, "drop" drops the item (stat cepr/dropped/non_article), "keep" does not detect it.',
            choices=NON_ARTICLE),
    Setting("CEPR_PAGE_TYPE_FIELD", "field", "page_type",
            'Output field for the page type (one of "article", "forum", "product", "collection", "listing", "documentation", "service"; None when not detected); written unless CEPR_NON_ARTICLE="keep".'),
    Setting("CEPR_DEDUP", "str", "off",
            'Near-duplicate stories (scrapy_cepr.dedup, needs the dedup extra): "mark" writes to the field duplicate_of the URL of the first article whose body has the same story (Jaccard of word 3-shingles >= CEPR_DEDUP_THRESHOLD), "drop" drops the item (stat cepr/dropped/duplicate), "off" does not compare. The index of stories persists in CEPR_STATE_DIR, or in Redis in the distributed mode.',
            choices=DEDUP_MODES),
    Setting("CEPR_DEDUP_THRESHOLD", "float", 0.5,
            "Jaccard similarity of the bodies' word 3-shingles (0 < t <= 1) from which two pages carry the same story (chosen on benchmarks/dedup_pairs.py, see docs/dedup.md).",
            low=0, open_low=True, high=1.0),
    Setting("CEPR_OPT_IN", "bool", False,
            'True: clean only responses whose request has meta {"cepr": True}; False: every HTML response except meta {"cepr": False}.'),
    Setting("CEPR_WARN_LIMIT", "int", 5,
            "Per-page warnings logged per kind (failed, timeout, empty …) before the rest are only counted (the closing summary gives the totals); 0 = no limit.",
            low=0),
    Setting("CEPR_STATE_DIR", "str", None,
            "Directory of the state kept between runs of a crawl (the URLs already exported, the near-duplicate index); None keeps no state. In the distributed mode the state lives in Redis instead."),
    Setting("CEPR_SINCE", "str", None,
            'Discovery (scrapy_cepr.discovery, newsspider): sitemap and feed entries older than this are not fetched: "YYYY-MM-DD", an ISO 8601 date-time, "-Nd" or "-Nh" (before the start of the crawl); None fetches all. The spider argument -a since=... takes precedence.'),
    Setting("CEPR_POOL_AFTER_SECONDS", "float", 1.0,
            "thread/process executor: pages are cleaned inline until they have taken this many seconds in total; then the pool starts in the background and takes over when ready (small crawls never start it); 0 = start it when the spider opens.",
            low=0),
    Setting("CEPR_BODY_FORMATS", "list", ("text",),
            'Body formats written to the item: "text" (CEPR_BODY_FIELD, always), "html" (field body_html: clean, safe HTML with absolute links and images) and "markdown" (field body_markdown). A list, or on the command line a JSON list or comma-separated names.',
            choices=BODY_FORMATS),
    Setting("CEPR_METADATA", "bool", ExtractOptions.metadata,
            "Write the article's metadata (authors, dates, language, description, lead image, canonical URL, site name, section, tags and their sources) to the item field metadata, as a dict."),
    Setting("CEPR_BYLINE", "str", ExtractOptions.byline,
            '"keep" leaves the byline in the body (as the benchmark\'s gold does); "move" removes the body line naming an author found in the metadata.',
            choices=BYLINE),
    Setting("CEPR_ITEM_SCHEMA", "str", "cepr",
            'The shape of the exported items: "cepr" (the fields above) or "zyte" (zyte-common-items\' Article: url, headline, articleBody, articleBodyHtml, authors, dates …, with the error and the page type beside; the metadata is read whatever CEPR_METADATA says; needs pip install "scrapy-cepr[zyte]"; docs/formats.rst).',
            choices=ITEM_SCHEMAS),
)

#: The defaults, by setting.
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SETTINGS if s.type != "param"}

#: ``(setting, default, description)`` of every setting of :data:`SETTINGS`, in order.
SETTINGS_DOC: tuple[tuple[str, str, str], ...] = tuple((s.name, s.documented_default, s.doc) for s in SETTINGS)

_GENERAL = tuple(s.name for s in SETTINGS if s.type != "param")


def settings_table() -> str:
    """:data:`SETTINGS_DOC` as a Markdown table (setting, default, description)."""
    rows = ["| Setting | Default | Description |", "|---|---|---|"]
    rows += [f"| `{name}` | `{default}` | {desc} |" for name, default, desc in SETTINGS_DOC]
    return "\n".join(rows)


@dataclass(frozen=True)
class CEPRConfig:
    """The validated ``CEPR_*`` settings of one crawl (see :data:`SETTINGS_DOC`).

    Build it with :meth:`from_settings`; the constructor itself also validates, so a
    config made by hand is checked the same way.

    :param params: the method parameters that were set, as ``(name, value)`` pairs
        (unset ones take the method's defaults, e.g. the paper's α).
    :raises ValueError: naming the setting and the bad value.
    """

    enabled: bool = DEFAULTS["CEPR_ENABLED"]
    method: str = DEFAULTS["CEPR_METHOD"]
    params: tuple[tuple[str, Any], ...] = ()
    html_field: str = DEFAULTS["CEPR_HTML_FIELD"]
    url_field: str = DEFAULTS["CEPR_URL_FIELD"]
    title_field: str = DEFAULTS["CEPR_TITLE_FIELD"]
    body_field: str = DEFAULTS["CEPR_BODY_FIELD"]
    error_field: str = DEFAULTS["CEPR_ERROR_FIELD"]
    keep_html: bool = DEFAULTS["CEPR_KEEP_HTML"]
    executor: str = DEFAULTS["CEPR_EXECUTOR"]
    max_workers: int = DEFAULTS["CEPR_MAX_WORKERS"]
    start_method: str = DEFAULTS["CEPR_START_METHOD"]
    timeout: float = DEFAULTS["CEPR_TIMEOUT"]
    min_confidence: float | None = DEFAULTS["CEPR_MIN_CONFIDENCE"]
    low_confidence: str = DEFAULTS["CEPR_LOW_CONFIDENCE"]
    fallback_method: str = DEFAULTS["CEPR_FALLBACK_METHOD"]
    max_html_bytes: int = DEFAULTS["CEPR_MAX_HTML_BYTES"]
    max_pending_pages: int = DEFAULTS["CEPR_MAX_PENDING_PAGES"]
    overwrite: str = DEFAULTS["CEPR_OVERWRITE"]
    non_article: str = DEFAULTS["CEPR_NON_ARTICLE"]
    page_type_field: str = DEFAULTS["CEPR_PAGE_TYPE_FIELD"]
    dedup: str = DEFAULTS["CEPR_DEDUP"]
    dedup_threshold: float = DEFAULTS["CEPR_DEDUP_THRESHOLD"]
    opt_in: bool = DEFAULTS["CEPR_OPT_IN"]
    warn_limit: int = DEFAULTS["CEPR_WARN_LIMIT"]
    state_dir: str | None = DEFAULTS["CEPR_STATE_DIR"]
    since: str | None = DEFAULTS["CEPR_SINCE"]
    pool_after_seconds: float = DEFAULTS["CEPR_POOL_AFTER_SECONDS"]
    #: Parameter settings of other methods, ignored for this one (logged at INFO).
    ignored: tuple[str, ...] = ()
    body_formats: tuple[str, ...] = DEFAULTS["CEPR_BODY_FORMATS"]
    metadata: bool = DEFAULTS["CEPR_METADATA"]
    byline: str = DEFAULTS["CEPR_BYLINE"]
    item_schema: str = DEFAULTS["CEPR_ITEM_SCHEMA"]

    def __post_init__(self) -> None:
        if self.method not in METHOD_NAMES:
            raise ValueError(f"CEPR_METHOD must be one of {', '.join(METHOD_NAMES)}; got {self.method!r}")
        _validate_params(self.method, dict(self.params))  # CEDST: ImportError naming its extra
        _require_extras(self.method)
        if self.item_schema == "zyte":
            require_zyte()  # ImportError naming the extra, at start
        names: dict[str, str] = {}
        for setting in SETTINGS:
            if setting.type == "param":
                continue
            value = getattr(self, setting.attr)
            problem = setting.problem(value)
            if problem is not None:
                raise ValueError(f"{setting.name} {problem}")
            if setting.type == "field":
                if value in names:
                    raise ValueError(f"{setting.name} and {names[value]} must differ; both are {value!r}")
                names[value] = setting.name

    @property
    def params_dict(self) -> dict[str, Any]:
        """The set method parameters as keyword arguments of :func:`scrapy_cepr.extract`."""
        return dict(self.params)

    @property
    def options(self) -> ExtractOptions:
        """The :class:`~scrapy_cepr.options.ExtractOptions` the workers get (once, at start):
        its fields named as one of this config's are copied (method, params, metadata,
        byline, min_confidence …); ``formats`` are the extra body formats, ``page_type`` is off with
        ``CEPR_NON_ARTICLE="keep"``, ``fallback_method`` is None unless
        ``CEPR_LOW_CONFIDENCE="fallback"`` (and it differs from the method);
        ``CEPR_ITEM_SCHEMA="zyte"`` turns the metadata and the HTML body on (the
        ``Article``'s fields)."""
        shared = {f.name: getattr(self, f.name) for f in fields(ExtractOptions) if f.name in _CONFIG_FIELDS}
        if self.low_confidence != "fallback" or self.fallback_method == self.method:
            shared["fallback_method"] = None
        formats = self.extra_formats
        if self.item_schema == "zyte":  # the Article's authors, dates … and articleBodyHtml
            shared["metadata"] = True
            formats = tuple(dict.fromkeys((*formats, "html")))
        return ExtractOptions(**shared, formats=formats, page_type=self.non_article != "keep")

    def outputs(self) -> tuple[tuple[OutputField, str], ...]:
        """The output fields the pipeline writes on every item, in export order, each with
        its item field name: the rows of :data:`OUTPUT_FIELDS` this config asks for, then
        the method's extras that its parameters ask for (:meth:`ExtractOptions.extras
        <scrapy_cepr.options.ExtractOptions.extras>`, named by the parameter's setting)."""
        rows = [(f, getattr(self, f.attr) if f.attr else f.name) for f in OUTPUT_FIELDS if f.wanted(self)]
        params = {name: param for name, param in get_method(self.method).extras}
        rows += [(OutputField(name, param_setting_name(params[name])), name) for name in self.options.extras()]
        return tuple(rows)

    @classmethod
    def from_crawler(cls, crawler: Any) -> CEPRConfig:
        """:meth:`from_settings` of the crawler's settings (which include the spider's
        ``custom_settings``), with the spider attribute ``cepr_method`` (if the spider has
        one, e.g. from ``-a cepr_method=nce``) taking precedence over ``CEPR_METHOD``.

        :raises ValueError: as :meth:`from_settings`.
        """
        method = getattr(getattr(crawler, "spider", None), "cepr_method", None)
        return cls.from_settings(crawler.settings, method=method)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], method: str | None = None) -> CEPRConfig:
        """Read and validate the ``CEPR_*`` settings of a :class:`scrapy.settings.Settings`
        (a plain dict works too). Values given as strings on the command line
        (``-s CEPR_MAX_WORKERS=4``) are converted.

        :param method: the method, overriding ``CEPR_METHOD`` (a spider's choice).
        :raises ValueError: naming the setting and the value: unknown method, a method
            parameter out of range, a ``CEPR_*`` setting unknown to every method, a bad
            executor, worker count, timeout, size or field name.

        >>> CEPRConfig.from_settings({"CEPR_ALPHA": "0.9", "CEPR_EXECUTOR": "thread"}).params
        (('alpha', 0.9),)
        >>> CEPRConfig.from_settings({"CEPR_ALPHA": -1})
        Traceback (most recent call last):
        ...
        ValueError: CEPR_ALPHA=-1 is invalid: alpha must be a float >= 0, got -1
        >>> CEPRConfig.from_settings({"CEPR_METHOD": "cetr", "CEPR_RADIUS": 2}).ignored
        ('CEPR_RADIUS',)
        """
        if not isinstance(settings, BaseSettings):
            settings = BaseSettings(dict(settings))
        get = settings.get
        method = method or get("CEPR_METHOD") or DEFAULTS["CEPR_METHOD"]
        if method not in METHOD_NAMES:
            raise ValueError(f"CEPR_METHOD must be one of {', '.join(METHOD_NAMES)}; got {method!r}")
        spec = get_method(method)
        param_fields = {f.name: f for f in fields(spec.params_cls)}
        by_setting = {param_setting_name(p): p for p in param_fields}
        clash = sorted(set(by_setting) & set(_GENERAL))
        if clash:  # a method's parameter named like a general setting: a bug in the method
            raise ValueError(f"method {method!r} has a parameter whose setting {clash[0]} clashes with a general setting")
        known = set(_GENERAL) | set(by_setting)
        others = _all_param_settings()
        ignored = []
        for name in list(settings):
            if isinstance(name, str) and name.startswith(_PREFIX) and name not in known:
                if name in others:  # another method's parameter: ignored for this method
                    if settings.get(name) is not None:
                        ignored.append(name)
                    continue
                raise ValueError(
                    f"unknown setting {name}: neither a general setting nor a parameter of any method "
                    f"({', '.join(METHOD_NAMES)}); known for CEPR_METHOD={method!r}: {', '.join(sorted(known))}"
                )
        if ignored:
            logger.info("CEPR_METHOD=%r ignores %s (parameters of other methods)", method, ", ".join(sorted(ignored)))
        if PIPE_WORKERS and get("CEPR_START_METHOD") is not None:
            logger.info("CEPR_START_METHOD is ignored here: process workers are fresh interpreters fed over pipes "
                        "(it applies to the fallback pool, where pipes are not available)")
        params = []
        for setting, p in by_setting.items():
            value = get(setting)
            if value is None:
                continue
            value = _coerce(setting, value, str(param_fields[p].type))
            params.append((p, value))
        values = {s.attr: s.read(settings) for s in SETTINGS if s.type != "param" and s.name != "CEPR_METHOD"}
        return cls(method=method, params=tuple(params), ignored=tuple(sorted(ignored)), **values)

    @property
    def extra_formats(self) -> tuple[str, ...]:
        """The body formats besides text (``"html"``, ``"markdown"``) the worker computes."""
        return tuple(f for f in self.body_formats if f != "text")


#: The names of :class:`CEPRConfig`'s fields.
_CONFIG_FIELDS = frozenset(f.name for f in fields(CEPRConfig))


@dataclass(frozen=True)
class OutputField:
    """One output field of the pipeline (a row of :data:`OUTPUT_FIELDS`).

    :param name: the :class:`~scrapy_cepr.options.PageResult` value written
        (:meth:`PageResult.get <scrapy_cepr.options.PageResult.get>`).
    :param setting: the setting that names the field (``CEPR_TITLE_FIELD``) or asks for it
        (``CEPR_BODY_FORMATS``), named in error messages.
    :param required: item classes must declare it (else the pipeline stops the crawl);
        an optional field is written only where the item can take it.
    :param attr: the :class:`CEPRConfig` attribute holding the field's name; None: the
        field is called *name*.
    :param wanted: whether a config writes the field.
    """

    name: str
    setting: str
    required: bool = True
    attr: str | None = None
    wanted: Callable[[CEPRConfig], bool] = lambda config: True


#: The output fields, in export order (a CSV feed's columns): what the pipeline writes,
#: what it requires of item classes, and the setting each error message names.
OUTPUT_FIELDS: tuple[OutputField, ...] = (
    OutputField("title", "CEPR_TITLE_FIELD", attr="title_field"),
    OutputField("body", "CEPR_BODY_FIELD", attr="body_field"),
    OutputField("error", "CEPR_ERROR_FIELD", attr="error_field"),
    OutputField("page_type", "CEPR_PAGE_TYPE_FIELD", required=False, attr="page_type_field",
                wanted=lambda c: c.non_article != "keep"),
    OutputField("cepr_confidence", "CEPR_MIN_CONFIDENCE", required=False,
                wanted=lambda c: c.method in CONFIDENCE_METHODS),
    OutputField("body_html", "CEPR_BODY_FORMATS", wanted=lambda c: "html" in c.body_formats),
    OutputField("body_markdown", "CEPR_BODY_FORMATS", wanted=lambda c: "markdown" in c.body_formats),
    OutputField("metadata", "CEPR_METADATA", wanted=lambda c: c.metadata),
    OutputField("duplicate_of", "CEPR_DEDUP", required=False, wanted=lambda c: c.dedup != "off"),
)


#: The optional packages a method needs beyond ``pip install scrapy-cepr``: method ->
#: ``(import name, PyPI name, extra)``. CEDST's (jieba) are checked by its parameters class.
METHOD_EXTRAS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "wang2009": (("playwright", "playwright", "render"),),
}


def _require_extras(method: str) -> None:
    """Stop at start (not at each page) when *method* needs a package that is missing.

    :raises ImportError: naming the setting, the package and the ``pip install`` command.
    """
    import importlib.util
    import sys

    for module, package, extra in METHOD_EXTRAS.get(method, ()):
        found = sys.modules[module] is not None if module in sys.modules else importlib.util.find_spec(module) is not None
        if not found:
            raise ImportError(f'CEPR_METHOD={method!r} needs {package}: pip install "scrapy-cepr[{extra}]"')


def _all_param_settings() -> frozenset[str]:
    """The settings of every parameter of every method (:data:`METHOD_NAMES`)."""
    return frozenset(param_setting_name(f.name) for m in METHOD_NAMES for f in fields(get_method(m).params_cls))


def _validate_params(method: str, params: dict[str, Any]) -> None:
    """Build the method's parameters; re-raise a ValueError naming the setting."""
    spec = get_method(method)
    for p, value in params.items():  # one at a time, to name the culprit
        try:
            spec.make_params(**{p: value})
        except ValueError as exc:
            raise ValueError(f"{param_setting_name(p)}={value!r} is invalid: {exc}") from None
    try:
        spec.make_params(**params)
    except ValueError as exc:
        names = ", ".join(param_setting_name(p) for p in params)
        raise ValueError(f"the settings {names} are invalid together: {exc}") from None


def _coerce(setting: str, value: Any, annotation: str) -> Any:
    """A method parameter's *value*, a string (from ``-s NAME=value``) converted with
    Scrapy's typed getters to the type named by the parameter's *annotation* (e.g.
    ``"float | None"``); other values pass unchanged, and are checked by the method's
    parameters class.

    :raises ValueError: a string that does not convert, naming the setting and the type.
    """
    if not isinstance(value, str):
        return value
    settings = BaseSettings({setting: value})
    kinds = set(re.findall(r"[A-Za-z_]+", annotation))
    if "None" in kinds and value.strip().lower() in ("", "none", "null"):
        return None
    try:
        if "bool" in kinds:
            return settings.getbool(setting)
        if "int" in kinds and "float" not in kinds:
            return settings.getint(setting)
        if "float" in kinds:
            return settings.getfloat(setting)
    except ValueError:
        raise ValueError(f"{setting} must be of type {annotation}; got {value!r}") from None
    return value


def _names_list(setting: str, value: Any, settings: BaseSettings) -> tuple[str, ...]:
    """A list setting given as a list/tuple, a JSON list string or comma-separated names
    (Scrapy's :meth:`~scrapy.settings.BaseSettings.getlist`), without repeats.

    :raises ValueError: not a list of names, naming the setting.

    >>> _names_list("F", '["text", "html"]', BaseSettings()), _names_list("F", "text, markdown", BaseSettings({"F": "text, markdown"}))
    (('text', 'html'), ('text', 'markdown'))
    """
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError:
                raise ValueError(f"{setting} must be a list of names; got {value!r}") from None
        else:
            value = [v.strip() for v in settings.getlist(setting) if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{setting} must be a list of names; got {value!r}")
    return tuple(dict.fromkeys(value))
