"""Convert a trained LightGBM booster to the package's JSON tree format
(:mod:`scrapy_cepr.core.trees`), shared by the training scripts in ``benchmarks/``.

Usage from a training script::

    from treemodel import lightgbm_to_spec, write_spec
    spec = lightgbm_to_spec(booster, feature_names=names, class_names=classes)
    write_spec(spec, "scrapy_cepr/models/pagetype.json")

Needs LightGBM (``pip install -e ".[train]"``) only for training; the converter itself
reads ``Booster.dump_model()`` output (a dict), so it also takes a dict.
"""

from __future__ import annotations

import json
from typing import Any

from scrapy_cepr.core.trees import FORMAT, VERSION, load_trees

__all__ = ["lightgbm_to_spec", "write_spec"]

_MISSING = {"None": 0, "Zero": 1, "NaN": 2}


def lightgbm_to_spec(booster: Any, *, feature_names: list[str] | None = None,
                     class_names: list[str] | None = None, leaf_digits: int | None = None) -> dict[str, Any]:
    """The JSON spec of a LightGBM ``Booster`` (or of its ``dump_model()`` dict).

    *leaf_digits* rounds leaf values to that many significant digits (smaller file; the
    raw score moves by about 10**-digits per tree). Thresholds are kept exactly, so every
    row takes the same path as in LightGBM. Raises ValueError for what the evaluator
    does not support (categorical splits, linear trees, averaged output, objectives other
    than binary / multiclass (softmax) / regression).
    """
    dump = booster if isinstance(booster, dict) else booster.dump_model()
    objective_str = str(dump.get("objective", ""))
    head, *params = objective_str.split()
    if head == "binary":
        objective = "binary"
    elif head == "multiclass":
        objective = "multiclass"
    elif head in ("regression", "regression_l2", "l2", "mse", "mean_squared_error"):
        objective = "regression"
    else:
        raise ValueError(f"unsupported LightGBM objective {objective_str!r}")
    if dump.get("average_output"):
        raise ValueError("averaged output (random forest mode) is not supported")
    sigmoid = 1.0
    for p in params:
        if p.startswith("sigmoid:"):
            sigmoid = float(p.split(":", 1)[1])
    num_class = int(dump.get("num_class", 1))
    per_iter = int(dump.get("num_tree_per_iteration", 1))
    num_features = int(dump["max_feature_idx"]) + 1
    names = feature_names if feature_names is not None else list(dump.get("feature_names") or []) or None
    trees = []
    for info in dump["tree_info"]:
        if info.get("num_cat", 0):
            raise ValueError("categorical splits are not supported")
        tree = {"class": int(info["tree_index"]) % per_iter, "feature": [], "threshold": [], "missing": [],
                "default_left": [], "left": [], "right": [], "leaf": []}
        _walk(info["tree_structure"], tree, leaf_digits)
        if info["tree_structure"].get("leaf_coeff") is not None:
            raise ValueError("linear trees are not supported")
        trees.append(tree)
    spec: dict[str, Any] = {"format": FORMAT, "version": VERSION, "objective": objective,
                            "num_class": num_class if objective == "multiclass" else 1,
                            "num_features": num_features}
    if objective == "binary":
        spec["sigmoid"] = sigmoid
    if names is not None:
        spec["feature_names"] = list(names)
    if class_names is not None:
        spec["class_names"] = list(class_names)
    spec["trees"] = trees
    load_trees(spec)  # validate
    return spec


def _walk(node: dict[str, Any], tree: dict[str, list], leaf_digits: int | None) -> int:
    """Append *node*'s subtree (internal nodes in pre-order) and return its child code."""
    if "leaf_value" in node:
        value = float(node["leaf_value"])
        if leaf_digits is not None:
            value = float(f"{value:.{leaf_digits}g}")
        tree["leaf"].append(value)
        return ~(len(tree["leaf"]) - 1)
    if node.get("decision_type", "<=") != "<=":
        raise ValueError(f"unsupported decision type {node.get('decision_type')!r}")
    i = len(tree["feature"])
    tree["feature"].append(int(node["split_feature"]))
    tree["threshold"].append(float(node["threshold"]))
    tree["missing"].append(_MISSING[str(node.get("missing_type", "None"))])
    tree["default_left"].append(1 if node.get("default_left", True) else 0)
    tree["left"].append(0)
    tree["right"].append(0)
    tree["left"][i] = _walk(node["left_child"], tree, leaf_digits)
    tree["right"][i] = _walk(node["right_child"], tree, leaf_digits)
    return i


def write_spec(spec: dict[str, Any], path: str) -> None:
    """Write *spec* as compact JSON (floats in Python's shortest round-trip form)."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(spec, fh, separators=(",", ":"))
        fh.write("\n")
