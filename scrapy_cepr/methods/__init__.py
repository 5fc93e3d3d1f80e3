"""The extraction methods, one module each, behind one interface.

Each method is a :class:`Method`: a name, a frozen parameters class that validates its
keyword arguments (the paper's values as defaults), and ``run(page, params) ->
Extraction``. Modules are imported lazily, so that choosing CEPR never loads jieba.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from ..core.page import Page
from ..core.result import Extraction

__all__ = ["DEFAULT_METHOD", "METHOD_NAMES", "Method", "get_method"]

# name -> (module, params class, run function, extra keyword for run, one-line summary)
_REGISTRY: dict[str, tuple[str, str, str, dict[str, Any], str]] = {
    "tpr": ("cepr", "CEPRParams", "run", {"variant": "tpr"}, "CEPR-TPR: text to tag path ratio (Wu et al. 2013)"),
    "etpr": ("cepr", "CEPRParams", "run", {"variant": "etpr"}, "CEPR-ETPR: extended TPR with punctuation"),
    "setpr": ("cepr", "CEPRParams", "run", {"variant": "setpr"}, "CEPR-SETPR: ETPR smoothed by tag-path edit distance"),
    "cetr": ("cetr", "CETRParams", "run", {"variant": "cetr"}, "CETR: tag ratios per line, 2-D k-means (Weninger et al. 2010)"),
    "cetr-tm": ("cetr", "CETRParams", "run", {"variant": "cetr-tm"}, "CETR-TM: tag ratios per line, threshold on smoothed TR"),
    "nce": ("nce", "NCEParams", "run", {}, "NCE: separator node, comment removal, title search (Laber et al. 2009)"),
    "cedst": ("cedst", "CEDSTParams", "run", {}, "CEDST: Dempster-Shafer fusion with a topic feature (Zhang et al. 2018)"),
    "cepr-article": ("article", "ArticleParams", "run", {}, "CEPR-Article: SETPR's H' in the body subtree below the headline, comments and boilerplate removed"),
    "cepr-typed": ("typed", "TypedParams", "run", {}, "CEPR-Typed: CEPR-Article's region grown by a learned block classifier, assembled per page type (WCXB's 7 types; default)"),
    "wang2009": ("wang2009", "Wang2009Params", "run", {}, "Wang 2009: SVMs over rendered geometry (Chromium), title and body subtrees"),
}

#: The extra outputs of a method beside title, body and page type: method -> ``(output
#: name, parameter that asks for it)``; the worker copies the attribute of that name from
#: the method's result into :attr:`scrapy_cepr.options.PageResult.extras`.
_EXTRAS: dict[str, tuple[tuple[str, str], ...]] = {
    "wang2009": (("body_styled_html", "styled_html"),),
}

#: Names accepted by ``extract(method=...)``, ``CEPR_METHOD`` and ``--method``.
METHOD_NAMES: tuple[str, ...] = tuple(_REGISTRY)

#: The method used when none is named: ``extract()``, ``CEPR_METHOD``, ``--method``.
DEFAULT_METHOD: str = "cepr-typed"


@dataclass(frozen=True)
class Method:
    """One extraction method: ``name``, ``summary``, ``params_cls`` (a frozen dataclass
    whose constructor validates) and ``run``; ``warm_up``: the module's own ``warm_up()``
    (one-off loading without running the method, e.g. no browser start), or None;
    ``extras``: ``(output name, parameter)`` of each extra output the method makes when
    that parameter is true (an attribute of its :class:`~scrapy_cepr.Extraction`)."""

    name: str
    summary: str
    params_cls: type
    _run: Callable[..., Extraction]
    _extra: dict[str, Any]
    warm_up: Callable[[], Any] | None = None
    extras: tuple[tuple[str, str], ...] = ()

    def make_params(self, **params: Any) -> Any:
        """Validated parameters for this method.

        :raises ValueError: an unknown parameter name (listing the known ones), or a bad
            value (naming the parameter and its allowed range).
        """
        known = [f.name for f in fields(self.params_cls)]
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise ValueError(
                f"unknown parameter {unknown[0]!r} for method {self.name!r}; allowed: {', '.join(known)}"
            )
        return self.params_cls(**params)

    def param_names(self) -> list[str]:
        """The method's parameter names, in declaration order."""
        return [f.name for f in fields(self.params_cls)]

    def run(self, page: Page, params: Any) -> Extraction:
        """Run the method on a parsed *page* with validated *params*."""
        return self._run(page, params, **self._extra)


def get_method(name: str) -> Method:
    """The :class:`Method` called *name*.

    :raises ValueError: *name* is not one of :data:`METHOD_NAMES`.
    """
    try:
        module, params_cls, run, extra, summary = _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"method must be one of {', '.join(METHOD_NAMES)}; got {name!r}") from None
    mod = importlib.import_module(f"{__name__}.{module}")
    return Method(name, summary, getattr(mod, params_cls), getattr(mod, run), extra, getattr(mod, "warm_up", None),
                  _EXTRAS.get(name, ()))
