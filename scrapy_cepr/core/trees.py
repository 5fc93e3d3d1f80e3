"""Gradient-boosted tree ensembles stored as JSON and evaluated with numpy:
:class:`TreeEnsemble`.

The package's learned models (page type, block classifiers) are trained with LightGBM
(``benchmarks/``, the ``[train]`` extra) and shipped as a small JSON file that this module
loads without pickle and evaluates with numpy only, vectorised over rows: every row and
every tree advance one tree level per step, so 1 row and 5,000 rows cost the same number
of numpy calls (the deepest tree's depth).

The format (``"format": "scrapy-cepr-trees"``, ``"version": 1``), written by
``benchmarks/treemodel.py`` from LightGBM's ``Booster.dump_model()``::

    {"format": "scrapy-cepr-trees", "version": 1,
     "objective": "binary" | "multiclass" | "regression",
     "num_class": 1 (binary, regression) or k >= 2 (multiclass),
     "num_features": n, "feature_names": [n names] (optional),
     "class_names": [k names] (optional), "sigmoid": 1.0 (binary only, optional),
     "trees": [{"class": c,                   # output column the tree adds to
                "feature": [...],             # per internal node: feature index
                "threshold": [...],           # go left when x <= threshold
                "missing": [...],             # 0 none, 1 zero, 2 NaN (LightGBM's missing_type)
                "default_left": [...],        # 0/1: side taken by a missing value
                "left": [...], "right": [...],# child: >= 0 internal node, < 0 leaf ~child
                "leaf": [...]}]}              # leaf values (raw score)

Internal node 0 is the root; a tree with one leaf has no internal nodes. Missing values
follow LightGBM's rule (``Tree::NumericalDecision``): with missing type *none* a NaN is
read as 0.0; with *zero*, a value of 0 (or NaN) goes to the default side; with *NaN*, a
NaN goes to the default side; otherwise ``x <= threshold`` goes left. Categorical splits
and linear trees are not supported (:func:`load_trees` refuses them).

Output: the raw score is the sum of a row's leaf values per class; ``binary`` gives
``1 / (1 + exp(-sigmoid * raw))`` with shape ``(n,)``, ``multiclass`` the softmax over the
k columns with shape ``(n, k)``, ``regression`` the raw score with shape ``(n,)``.

This module never imports Scrapy or LightGBM.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["FORMAT", "VERSION", "TreeEnsemble", "load_packaged", "load_trees"]

logger = logging.getLogger(__name__)

#: The ``format`` and ``version`` values a model file must carry.
FORMAT = "scrapy-cepr-trees"
VERSION = 1

_OBJECTIVES = ("binary", "multiclass", "regression")
_TREE_KEYS = ("feature", "threshold", "missing", "default_left", "left", "right")
#: Up to this many rows x nodes, :meth:`TreeEnsemble.raw_score` decides every node at
#: once (cheaper for a few rows, e.g. one page's features) instead of walking level by level.
_ALL_NODES_CELLS = 1 << 16
#: LightGBM's kZeroThreshold: |x| <= this counts as zero for missing type "zero".
_ZERO = 1e-35


class TreeEnsemble:
    """A loaded tree ensemble (see the module docstring for the format).

    Build it with :func:`load_trees` (a path or a dict); it is immutable after loading.
    Attributes: ``objective``, ``num_class``, ``num_features``, ``feature_names``
    (list or None), ``class_names`` (list or None), ``num_trees``, ``max_depth``.
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        _check(isinstance(spec, dict), "a tree model is a JSON object")
        _check(spec.get("format") == FORMAT, f"format is {spec.get('format')!r}, expected {FORMAT!r}")
        _check(spec.get("version") == VERSION, f"version is {spec.get('version')!r}, expected {VERSION}")
        objective: Any = spec.get("objective")
        _check(objective in _OBJECTIVES, f"objective {objective!r} is not one of {_OBJECTIVES}")
        num_class: Any = spec.get("num_class", 1)
        _check(_is_int(num_class) and num_class >= 1, f"num_class {num_class!r} is not a positive integer")
        _check((objective == "multiclass") == (num_class >= 2),
               f"objective {objective!r} with num_class {num_class}")
        num_features: Any = spec.get("num_features")
        _check(_is_int(num_features) and num_features >= 1, f"num_features {num_features!r} is not a positive integer")
        names: Any = spec.get("feature_names")
        _check(names is None or (isinstance(names, list) and len(names) == num_features
                                 and all(isinstance(n, str) for n in names)),
               "feature_names must be a list of num_features strings")
        classes: Any = spec.get("class_names")
        _check(classes is None or (isinstance(classes, list) and len(classes) == num_class
                                   and all(isinstance(n, str) for n in classes)),
               "class_names must be a list of num_class strings")
        sigmoid: Any = spec.get("sigmoid", 1.0)
        _check(isinstance(sigmoid, (int, float)) and not isinstance(sigmoid, bool) and sigmoid > 0,
               f"sigmoid {sigmoid!r} is not a positive number")
        trees: Any = spec.get("trees")
        _check(isinstance(trees, list) and bool(trees), "trees must be a non-empty list")

        self.objective: str = objective
        self.num_class: int = int(num_class)
        self.num_features: int = int(num_features)
        self.feature_names: list[str] | None = list(names) if names is not None else None
        self.class_names: list[str] | None = list(classes) if classes is not None else None
        self.sigmoid: float = float(sigmoid)
        self.num_trees: int = len(trees)

        # Flatten every tree into one node table in breadth-first order, a node's two
        # children side by side (left at ``first``, right at ``first + 1``), so one step is
        # ``first[node] + (not go_left)``. A leaf points at itself and always "goes left"
        # (threshold +inf, NaN left), so extra steps leave a finished row alone. Per node,
        # ``nan_left`` is where a NaN goes: the default side, or for missing type "none"
        # the side of 0.0 (LightGBM reads the NaN as 0.0).
        feature: list[int] = []
        threshold: list[float] = []
        nan_left: list[bool] = []
        zero_default: list[int] = []  # -1: not missing type "zero"; else default_left
        first: list[int] = []
        value: list[float] = []
        roots, tree_class = [], []
        depth = 0
        for t, tree in enumerate(trees):
            _check_tree(tree, t, self.num_features, self.num_class)
            depth = max(depth, _depth(tree))
            tree_class.append(int(tree.get("class", 0)))
            roots.append(len(feature))
            order = [0 if tree["feature"] else -1]  # child codes: >= 0 internal, < 0 leaf ~code
            pos = 0
            while pos < len(order):
                code = order[pos]
                if code >= 0:
                    miss = int(tree["missing"][code])
                    thr = float(tree["threshold"][code])
                    dleft = bool(tree["default_left"][code])
                    feature.append(int(tree["feature"][code]))
                    threshold.append(thr)
                    nan_left.append(0.0 <= thr if miss == 0 else dleft)
                    zero_default.append(int(dleft) if miss == 1 else -1)
                    first.append(roots[-1] + len(order))
                    order += [int(tree["left"][code]), int(tree["right"][code])]
                    value.append(0.0)
                else:
                    feature.append(0)
                    threshold.append(np.inf)
                    nan_left.append(True)
                    zero_default.append(-1)
                    first.append(roots[-1] + pos)
                    value.append(float(tree["leaf"][~code]))
                pos += 1
        self.max_depth: int = depth
        self._feature = np.asarray(feature, dtype=np.intp)
        self._threshold = np.asarray(threshold, dtype=np.float64)
        self._nan_left = np.asarray(nan_left, dtype=bool)
        zero = np.asarray(zero_default, dtype=np.int8)
        self._zero_node = zero >= 0
        self._zero_default_left = zero == 1
        self._has_zero = bool(self._zero_node.any())
        self._first = np.asarray(first, dtype=np.intp)
        self._right = self._first + 1  # a node's right child (its left child + 1)
        self._value = np.asarray(value, dtype=np.float64)
        self._roots = np.asarray(roots, dtype=np.intp)
        self._tree_class = np.asarray(tree_class, dtype=np.intp)
        onehot = np.zeros((self.num_trees, self.num_class), dtype=np.float64)
        onehot[np.arange(self.num_trees), tree_class] = 1.0
        self._class_onehot = onehot
        for arr in (self._feature, self._threshold, self._nan_left, self._zero_node, self._zero_default_left,
                    self._first, self._right, self._value, self._roots, self._class_onehot):
            arr.flags.writeable = False

    def __repr__(self) -> str:
        return (f"TreeEnsemble(objective={self.objective!r}, num_class={self.num_class}, "
                f"num_features={self.num_features}, num_trees={self.num_trees}, max_depth={self.max_depth})")

    def raw_score(self, X: Any) -> np.ndarray:
        """The summed leaf values: shape ``(n, num_class)`` for *X* of shape
        ``(n, num_features)`` (a 1-D array is one row). NaN marks a missing value.

        Raises ValueError when *X* is not 1-D/2-D numeric or has the wrong number of
        columns.
        """
        X = self._rows(X)
        n = X.shape[0]
        if n == 0:
            return np.zeros((0, self.num_class), dtype=np.float64)
        has_nan = bool(np.isnan(X).any())
        if n * self._first.size <= _ALL_NODES_CELLS:
            return self._raw_score_all_nodes(X, has_nan)
        return self._raw_score_levels(X, has_nan)

    def _raw_score_levels(self, X: np.ndarray, has_nan: bool) -> np.ndarray:
        """:meth:`raw_score` for many rows: every (row, tree) pair advances one tree level
        per step, over flat arrays of ``n * num_trees`` node indices (1-D ``take`` is
        numpy's cheapest gather). The NaN and missing-type-"zero" rules cost four more
        vector steps per level and are skipped when *X* has no NaN and no node has
        missing type "zero" (the same decisions: without a NaN they change nothing)."""
        n = X.shape[0]
        # Row r's feature f sits at flat position r * num_features + f.
        flat = np.ascontiguousarray(X).ravel()
        offsets = np.repeat(np.arange(n, dtype=np.intp) * self.num_features, self.num_trees)
        feature, threshold, right = self._feature, self._threshold, self._right
        roots = self._roots
        if not has_nan and not self._has_zero:
            levels = self.max_depth
            if levels:
                # The first level is the same node (a root) for every row: its decisions
                # are one (rows, trees) comparison, without gathering node by node.
                go_left = X[:, feature.take(roots)] <= threshold.take(roots)
                idx = (right.take(roots) - go_left).ravel()
                levels -= 1
            else:
                idx = np.tile(roots, n)
            for _ in range(levels):
                x = flat.take(offsets + feature.take(idx))
                idx = right.take(idx) - (x <= threshold.take(idx))  # left = right - 1
        else:
            idx = np.tile(roots, n)
            for _ in range(self.max_depth):
                x = flat.take(offsets + feature.take(idx))
                with np.errstate(invalid="ignore"):
                    go_left = x <= threshold.take(idx)  # False for NaN
                nan = np.isnan(x)
                go_left |= nan & self._nan_left.take(idx)
                if self._has_zero:
                    # Missing type "zero": 0 (|x| <= 1e-35) and NaN take the default side.
                    zero = self._zero_node.take(idx) & (nan | (np.abs(x) <= _ZERO))
                    go_left = np.where(zero, self._zero_default_left.take(idx), go_left)
                idx = right.take(idx) - go_left
        return self._value.take(idx).reshape(n, self.num_trees) @ self._class_onehot

    def _raw_score_all_nodes(self, X: np.ndarray, has_nan: bool) -> np.ndarray:
        """:meth:`raw_score` for few rows: every node's decision at once (one vector step
        over all nodes), then one table look-up per tree level. The same decisions as the
        level-by-level walk, so the same leaves."""
        if X.shape[0] == 1:
            x = X[0].take(self._feature)  # (nodes,)
        else:
            x = X[:, self._feature]  # (n, nodes)
        with np.errstate(invalid="ignore"):
            go_left = x <= self._threshold  # False for NaN
        if has_nan:
            nan = np.isnan(x)
            go_left |= nan & self._nan_left
            if self._has_zero:
                zero = self._zero_node & (nan | (np.abs(x) <= _ZERO))
                go_left = np.where(zero, self._zero_default_left, go_left)
        elif self._has_zero:
            go_left = np.where(self._zero_node & (np.abs(x) <= _ZERO), self._zero_default_left, go_left)
        step = self._first + ~go_left  # the next node from each node
        if X.shape[0] == 1:
            idx = self._roots
            for _ in range(self.max_depth):
                idx = step.take(idx)
            return np.bincount(self._tree_class, weights=self._value.take(idx), minlength=self.num_class)[None, :]
        idx = np.broadcast_to(self._roots, (X.shape[0], self.num_trees))
        for _ in range(self.max_depth):
            idx = np.take_along_axis(step, idx, axis=1)
        return self._value[idx] @ self._class_onehot

    def predict(self, X: Any) -> np.ndarray:
        """Probabilities (or the regression value) for *X*, shape ``(n, num_features)``
        (a 1-D array is one row; NaN = missing): shape ``(n,)`` for ``binary`` (probability
        of the positive class) and ``regression``, ``(n, num_class)`` for ``multiclass``
        (rows sum to 1).

        Raises ValueError for a badly shaped *X* (see :meth:`raw_score`).
        """
        raw = self.raw_score(X)
        if self.objective == "multiclass":
            z = raw - raw.max(axis=1, keepdims=True)
            e = np.exp(z)
            return e / e.sum(axis=1, keepdims=True)
        raw = raw[:, 0]
        if self.objective == "binary":
            return 1.0 / (1.0 + np.exp(-self.sigmoid * raw))
        return raw

    def _rows(self, X: Any) -> np.ndarray:
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"features must be numeric: {exc}") from None
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2:
            raise ValueError(f"features must be a 2-D array (rows x features), got {X.ndim} dimensions")
        if X.shape[1] != self.num_features:
            raise ValueError(f"features have {X.shape[1]} columns, the model expects {self.num_features}")
        return X


def load_trees(source: str | os.PathLike[str] | dict[str, Any]) -> TreeEnsemble:
    """A :class:`TreeEnsemble` from a JSON file path or an already parsed dict.

    Raises ValueError (naming the file) when the JSON is invalid or its structure is not
    the format in the module docstring; OSError when the file cannot be read.
    """
    if isinstance(source, dict):
        return TreeEnsemble(source)
    with open(source, encoding="utf-8") as fh:
        try:
            spec = json.load(fh)
        except ValueError as exc:
            raise ValueError(f"{os.fspath(source)}: not valid JSON: {exc}") from None
    try:
        return TreeEnsemble(spec)
    except ValueError as exc:
        raise ValueError(f"{os.fspath(source)}: {exc}") from None


def load_packaged(file: str, feature_names: Sequence[str], *, objective: str | None = None,
                  class_names: Sequence[str] | None = None) -> TreeEnsemble:
    """The model *file* shipped in ``scrapy_cepr/models/`` (read as a package resource),
    checked against this version's *feature_names* and, when given, its *objective* and
    *class_names*.

    :raises ValueError: (naming the file) the JSON is not a valid model, or its features,
        objective or classes are not those given.
    """
    from importlib import resources

    text = resources.files("scrapy_cepr").joinpath("models", file).read_text(encoding="utf-8")
    model = load_trees(json.loads(text))
    if (tuple(model.feature_names or ()) != tuple(feature_names)
            or (objective is not None and model.objective != objective)
            or (class_names is not None and tuple(model.class_names or ()) != tuple(class_names))):
        raise ValueError(f"{file}: the model's features, objective or classes do not match this version's")
    return model


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(f"bad tree model: {message}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_tree(tree: Any, t: int, num_features: int, num_class: int) -> tuple[int, int]:
    """Validate tree *t*; return (internal nodes, leaves)."""
    _check(isinstance(tree, dict), f"tree {t} is not an object")
    for key in (*_TREE_KEYS, "leaf"):
        _check(isinstance(tree.get(key), list), f"tree {t}: {key!r} must be a list")
    n = len(tree["feature"])
    for key in _TREE_KEYS:
        _check(len(tree[key]) == n, f"tree {t}: {key!r} has {len(tree[key])} entries, 'feature' has {n}")
    n_leaves = len(tree["leaf"])
    _check(n_leaves == n + 1, f"tree {t}: {n} internal nodes need {n + 1} leaves, found {n_leaves}")
    c = tree.get("class", 0)
    _check(_is_int(c) and 0 <= c < num_class, f"tree {t}: class {c!r} is not in 0..{num_class - 1}")
    _check(all(_is_int(f) and 0 <= f < num_features for f in tree["feature"]),
           f"tree {t}: a feature index is outside 0..{num_features - 1}")
    _check(all(m in (0, 1, 2) and not isinstance(m, bool) for m in tree["missing"]),
           f"tree {t}: missing must be 0 (none), 1 (zero) or 2 (NaN)")
    _check(all(d in (0, 1) for d in tree["default_left"]), f"tree {t}: default_left must be 0 or 1")
    for key in ("threshold", "leaf"):
        _check(all(isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x) for x in tree[key]),
               f"tree {t}: {key!r} must hold finite numbers")
    children = [*tree["left"], *tree["right"]]
    _check(all(_is_int(c) and -n_leaves <= c < n for c in children), f"tree {t}: a child index is out of range")
    internal = sorted(c for c in children if c >= 0)
    leaves = sorted(~c for c in children if c < 0)
    _check(internal == list(range(1, n)) and leaves == list(range(n_leaves)) if n else n_leaves == 1,
           f"tree {t}: every node but the root must be the child of exactly one node")
    return n, n_leaves


def _depth(tree: dict[str, Any]) -> int:
    """Number of decisions on the longest root-to-leaf path (0 for a one-leaf tree);
    ValueError when some internal node cannot be reached from the root."""
    n = len(tree["feature"])
    if not n:
        return 0
    depth, seen, frontier = 0, 1, [0]
    while frontier:
        depth += 1
        frontier = [c for i in frontier for c in (tree["left"][i], tree["right"][i]) if c >= 0]
        seen += len(frontier)
    _check(seen == n, "a tree has internal nodes that the root does not reach")
    return depth
