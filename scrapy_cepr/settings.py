"""The ``CEPR_*`` Scrapy settings, read and validated once: :class:`CEPRConfig`.

Every value is checked when the crawl starts (when the pipeline and the spider
middleware are built): a bad value raises :class:`ValueError` naming the setting and the
value, so a typo never turns into a silently disabled extension. ``CEPR_ENABLED=False``
is the only way to switch the extension off (:class:`scrapy.exceptions.NotConfigured`).

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

from .core.formats import BODY_FORMATS
from .methods import METHOD_NAMES, get_method
from .options import BYLINE, ExtractOptions
from .transport import PIPE_WORKERS

__all__ = [
    "EXECUTORS",
    "BYLINE",
    "NON_ARTICLE",
    "OUTPUT_FIELDS",
    "OVERWRITE",
    "SETTINGS_DOC",
    "START_METHODS",
    "CEPRConfig",
    "OutputField",
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

#: Accepted values of ``CEPR_NON_ARTICLE``: what happens to pages that are not articles
#: (any page type but ``article``; :mod:`scrapy_cepr.core.pagetype`).
NON_ARTICLE: tuple[str, ...] = ("keep", "mark", "drop")


_PREFIX = "CEPR_"

#: ``(setting, default, description)`` of every general setting, in README order. The
#: method parameters are listed by :func:`method_settings`.
SETTINGS_DOC: tuple[tuple[str, str, str], ...] = (
    ("CEPR_ENABLED", "True", "Switch the extension off with False (the pipeline and middleware raise NotConfigured)."),
    ("CEPR_METHOD", '"cepr-article"', "Extraction method: " + ", ".join(METHOD_NAMES) + "."),
    ("CEPR_ALPHA", "None", "CEPR threshold factor α of τ = α·σ(H'); None = the paper's value (TPR 1.7, ETPR 0.7, SETPR 0.8)."),
    ("CEPR_LAMBDA", "1.0", "CEPR-SETPR λ ≥ 0 of the tag-path weight 1/dist^λ."),
    ("CEPR_RADIUS", "1", "CEPR-SETPR smoothing window radius r ≥ 0 (window 2r+1 text nodes)."),
    ("CEPR_EDGES", '"keep"', 'CEPR-SETPR: "keep" leaves the first/last r nodes unsmoothed (authors\' code), "pad" pads with zeros.'),
    ("CEPR_HTML_FIELD", '"html"', "Item field that carries the page's HTML from the spider middleware to the pipeline."),
    ("CEPR_URL_FIELD", '"url"', "Item field holding the page URL (filled from the response when empty; used in warnings)."),
    ("CEPR_TITLE_FIELD", '"title"', "Output field for the extracted title (None when no title was found)."),
    ("CEPR_BODY_FIELD", '"body"', "Output field for the extracted main content (plain text, one block per line)."),
    ("CEPR_ERROR_FIELD", '"cepr_error"', "Output field set when a page was skipped, failed, timed out or had no main content."),
    ("CEPR_KEEP_HTML", "False", "Keep the raw HTML in the exported item (in CEPR_HTML_FIELD) instead of removing it; on item classes without that field the items are exported without it (one warning per class)."),
    ("CEPR_EXECUTOR", '"process"', '"inline" (in the reactor thread), "thread" (thread pool) or "process" (process pool).'),
    ("CEPR_MAX_WORKERS", "os.cpu_count()", "Workers of the thread/process pool (≥ 1); each has up to 2 pages in flight (one running, one queued)."),
    ("CEPR_START_METHOD", '"spawn"', 'How the fallback process pool starts its workers, "spawn" or "forkserver" (never "fork"); only where process workers cannot be fed over pipes (Windows). On POSIX every worker is a fresh interpreter fed over pipes, and the setting is ignored (logged at INFO).'),
    ("CEPR_TIMEOUT", "30.0", "Seconds a page may take in a thread/process worker, counted from its submission (so including the wait behind at most one page), before it is abandoned and recorded (> 0)."),
    ("CEPR_MAX_HTML_BYTES", "10000000", "Pages whose HTML is larger (bytes) are skipped and recorded; 0 = no limit."),
    ("CEPR_MAX_PENDING_PAGES", "1000", "Bound of the side channel that carries HTML for item classes without CEPR_HTML_FIELD."),
    ("CEPR_OVERWRITE", '"fill"', 'An output field (title, body, error, page type, body formats, metadata) the spider already set: "fill" writes only empty (None or "") fields, "keep" never touches a field the spider set, "overwrite" always writes (a warning, once per field, when a value is replaced); a None value never replaces a spider\'s value.'),
    ("CEPR_NON_ARTICLE", '"mark"', 'Pages that are not articles (any page type but "article": forum, product, collection, listing, documentation, service): "mark" writes the type to CEPR_PAGE_TYPE_FIELD, "drop" drops the item (stat cepr/dropped/non_article), "keep" does not detect it.'),
    ("CEPR_PAGE_TYPE_FIELD", '"page_type"', 'Output field for the page type (one of "article", "forum", "product", "collection", "listing", "documentation", "service"; None when not detected); written unless CEPR_NON_ARTICLE="keep".'),
    ("CEPR_OPT_IN", "False", 'True: clean only responses whose request has meta {"cepr": True}; False: every HTML response except meta {"cepr": False}.'),
    ("CEPR_WARN_LIMIT", "5", "Per-page warnings logged per kind (failed, timeout, empty …) before the rest are only counted (the closing summary gives the totals); 0 = no limit."),
    ("CEPR_POOL_AFTER_SECONDS", "1.0", "thread/process executor: pages are cleaned inline until they have taken this many seconds in total; then the pool starts in the background and takes over when ready (small crawls never start it); 0 = start it when the spider opens."),
    ("CEPR_BODY_FORMATS", '("text",)', 'Body formats written to the item: "text" (CEPR_BODY_FIELD, always), "html" (field body_html: clean, safe HTML with absolute links and images) and "markdown" (field body_markdown). A list, or on the command line a JSON list or comma-separated names.'),
    ("CEPR_METADATA", "False", "Write the article's metadata (authors, dates, language, description, lead image, canonical URL, site name, section, tags and their sources) to the item field metadata, as a dict."),
    ("CEPR_BYLINE", '"keep"', '"keep" leaves the byline in the body (as the benchmark\'s gold does); "move" removes the body line naming an author found in the metadata.'),
)

_GENERAL = tuple(name for name, _, _ in SETTINGS_DOC if name not in ("CEPR_ALPHA", "CEPR_LAMBDA", "CEPR_RADIUS", "CEPR_EDGES"))


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

    enabled: bool = True
    method: str = "cepr-article"
    params: tuple[tuple[str, Any], ...] = ()
    html_field: str = "html"
    url_field: str = "url"
    title_field: str = "title"
    body_field: str = "body"
    error_field: str = "cepr_error"
    keep_html: bool = False
    executor: str = "process"
    max_workers: int = 1
    start_method: str = "spawn"
    timeout: float = 30.0
    max_html_bytes: int = 10_000_000
    max_pending_pages: int = 1000
    overwrite: str = "fill"
    non_article: str = "mark"
    page_type_field: str = "page_type"
    opt_in: bool = False
    warn_limit: int = 5
    pool_after_seconds: float = 1.0
    #: Parameter settings of other methods, ignored for this one (logged at INFO).
    ignored: tuple[str, ...] = ()
    body_formats: tuple[str, ...] = ("text",)
    metadata: bool = False
    byline: str = "keep"

    def __post_init__(self) -> None:
        if self.method not in METHOD_NAMES:
            raise ValueError(f"CEPR_METHOD must be one of {', '.join(METHOD_NAMES)}; got {self.method!r}")
        _validate_params(self.method, dict(self.params))  # CEDST: ImportError naming its extra
        _require_extras(self.method)
        names: dict[str, str] = {}
        for attr in ("html_field", "url_field", "title_field", "body_field", "error_field", "page_type_field"):
            setting = _PREFIX + attr.upper()
            value = getattr(self, attr)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{setting} must be a non-empty field name; got {value!r}")
            if value in names:
                raise ValueError(f"{setting} and {names[value]} must differ; both are {value!r}")
            names[value] = setting
        if self.executor not in EXECUTORS:
            raise ValueError(f"CEPR_EXECUTOR must be one of {', '.join(EXECUTORS)}; got {self.executor!r}")
        if self.start_method not in START_METHODS:
            raise ValueError(f"CEPR_START_METHOD must be one of {', '.join(START_METHODS)}; got {self.start_method!r}")
        _check_int("CEPR_MAX_WORKERS", self.max_workers, 1)
        _check_int("CEPR_MAX_HTML_BYTES", self.max_html_bytes, 0)
        _check_int("CEPR_MAX_PENDING_PAGES", self.max_pending_pages, 1)
        _check_int("CEPR_WARN_LIMIT", self.warn_limit, 0)
        for attr, allowed in (("overwrite", OVERWRITE), ("non_article", NON_ARTICLE), ("byline", BYLINE)):
            if getattr(self, attr) not in allowed:
                raise ValueError(f"{_PREFIX + attr.upper()} must be one of {', '.join(allowed)}; "
                                 f"got {getattr(self, attr)!r}")
        p = self.pool_after_seconds
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0:
            raise ValueError(f"CEPR_POOL_AFTER_SECONDS must be a number of seconds >= 0; got {p!r}")
        t = self.timeout
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
            raise ValueError(f"CEPR_TIMEOUT must be a number of seconds > 0; got {t!r}")
        if (not isinstance(self.body_formats, tuple) or not self.body_formats
                or any(f not in BODY_FORMATS for f in self.body_formats)):
            raise ValueError(f"CEPR_BODY_FORMATS must be a non-empty list of {', '.join(BODY_FORMATS)}; "
                             f"got {self.body_formats!r}")
        for attr in ("enabled", "keep_html", "opt_in", "metadata"):
            if not isinstance(getattr(self, attr), bool):
                raise ValueError(  # noqa: TRY004 - settings errors are ValueErrors naming the setting
                    f"{_PREFIX + attr.upper()} must be True or False; got {getattr(self, attr)!r}")

    @property
    def params_dict(self) -> dict[str, Any]:
        """The set method parameters as keyword arguments of :func:`scrapy_cepr.extract`."""
        return dict(self.params)

    @property
    def options(self) -> ExtractOptions:
        """The :class:`~scrapy_cepr.options.ExtractOptions` the workers get (once, at start)."""
        return ExtractOptions(self.method, self.params, formats=self.extra_formats, metadata=self.metadata,
                              byline=self.byline, page_type=self.non_article != "keep")

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
        get = settings.get
        method = method or get("CEPR_METHOD", "cepr-article")
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
        cpu = os.cpu_count() or 1
        default_start = "spawn" if "spawn" in START_METHODS else START_METHODS[0]
        return cls(
            enabled=_bool("CEPR_ENABLED", get("CEPR_ENABLED", True)),
            method=method,
            params=tuple(params),
            html_field=get("CEPR_HTML_FIELD", "html"),
            url_field=get("CEPR_URL_FIELD", "url"),
            title_field=get("CEPR_TITLE_FIELD", "title"),
            body_field=get("CEPR_BODY_FIELD", "body"),
            error_field=get("CEPR_ERROR_FIELD", "cepr_error"),
            keep_html=_bool("CEPR_KEEP_HTML", get("CEPR_KEEP_HTML", False)),
            executor=get("CEPR_EXECUTOR", "process"),
            max_workers=_int("CEPR_MAX_WORKERS", get("CEPR_MAX_WORKERS", cpu)),
            start_method=get("CEPR_START_METHOD", default_start),
            timeout=_float("CEPR_TIMEOUT", get("CEPR_TIMEOUT", 30.0)),
            max_html_bytes=_int("CEPR_MAX_HTML_BYTES", get("CEPR_MAX_HTML_BYTES", 10_000_000)),
            max_pending_pages=_int("CEPR_MAX_PENDING_PAGES", get("CEPR_MAX_PENDING_PAGES", 1000)),
            overwrite=get("CEPR_OVERWRITE", "fill"),
            non_article=get("CEPR_NON_ARTICLE", "mark"),
            page_type_field=get("CEPR_PAGE_TYPE_FIELD", "page_type"),
            opt_in=_bool("CEPR_OPT_IN", get("CEPR_OPT_IN", False)),
            warn_limit=_int("CEPR_WARN_LIMIT", get("CEPR_WARN_LIMIT", 5)),
            pool_after_seconds=_float("CEPR_POOL_AFTER_SECONDS", get("CEPR_POOL_AFTER_SECONDS", 1.0)),
            ignored=tuple(sorted(ignored)),
            body_formats=_names_list("CEPR_BODY_FORMATS", get("CEPR_BODY_FORMATS", ("text",))),
            metadata=_bool("CEPR_METADATA", get("CEPR_METADATA", False)),
            byline=get("CEPR_BYLINE", "keep"),
        )

    @property
    def extra_formats(self) -> tuple[str, ...]:
        """The body formats besides text (``"html"``, ``"markdown"``) the worker computes."""
        return tuple(f for f in self.body_formats if f != "text")


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
    OutputField("body_html", "CEPR_BODY_FORMATS", wanted=lambda c: "html" in c.body_formats),
    OutputField("body_markdown", "CEPR_BODY_FORMATS", wanted=lambda c: "markdown" in c.body_formats),
    OutputField("metadata", "CEPR_METADATA", wanted=lambda c: c.metadata),
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
    """Convert a string *value* (from ``-s NAME=value``) to the parameter's type named by
    its *annotation* (e.g. ``"float | None"``); other values pass unchanged, and are
    checked by the method's parameters class."""
    if not isinstance(value, str):
        return value
    kinds = set(re.findall(r"[A-Za-z_]+", annotation))
    text = value.strip()
    if "None" in kinds and text.lower() in ("", "none", "null"):
        return None
    try:
        if "bool" in kinds:
            return _bool(setting, text)
        if "int" in kinds and "float" not in kinds:
            return int(text)
        if "float" in kinds:
            return float(text)
    except ValueError:
        raise ValueError(f"{setting} must be of type {annotation}; got {value!r}") from None
    return value


def _bool(setting: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "on", "false", "0", "no", "off"):
        return value.strip().lower() in ("true", "1", "yes", "on")
    raise ValueError(f"{setting} must be True or False; got {value!r}")


def _names_list(setting: str, value: Any) -> tuple[str, ...]:
    """A list setting given as a list/tuple, a JSON list string or comma-separated names.

    >>> _names_list("CEPR_BODY_FORMATS", '["text", "html"]'), _names_list("X", "text, markdown")
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
            value = [v.strip() for v in text.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{setting} must be a list of names; got {value!r}")
    return tuple(dict.fromkeys(value))


def _int(setting: str, value: Any) -> Any:
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise ValueError(f"{setting} must be an integer; got {value!r}") from None
    return value


def _float(setting: str, value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise ValueError(f"{setting} must be a number; got {value!r}") from None
    return value


def _check_int(setting: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{setting} must be an integer >= {low}; got {value!r}")
