"""The JSON tree-ensemble evaluator (scrapy_cepr.core.trees) and the LightGBM converter
(benchmarks/treemodel.py)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from scrapy_cepr.core import trees as trees_module
from scrapy_cepr.core.trees import FORMAT, VERSION, TreeEnsemble, load_trees

ROOT = Path(__file__).resolve().parent.parent


def _treemodel():
    spec = importlib.util.spec_from_file_location("treemodel", ROOT / "benchmarks" / "treemodel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lightgbm():
    try:
        import lightgbm
    except ImportError:
        pytest.skip('lightgbm is not installed: pip install -e ".[train]"')
    return lightgbm


# Tree 0: x0 <= 1 ? (x1 <= 0 ? -1 : 2) : 3; NaN in x0 -> right (missing type NaN,
#         default right); x1 missing type "none" (NaN read as 0.0).
# Tree 1: x1 <= 5 ? 0.5 : -0.5; missing type zero, default left (0 or NaN -> left).
# Tree 2: a single leaf 0.25.
def _tiny(objective="regression", num_class=1, classes=(0, 0, 0)):
    return {
        "format": FORMAT, "version": VERSION, "objective": objective, "num_class": num_class,
        "num_features": 2, "feature_names": ["a", "b"],
        "trees": [
            {"class": classes[0], "feature": [0, 1], "threshold": [1.0, 0.0], "missing": [2, 0],
             "default_left": [0, 1], "left": [1, -1], "right": [-3, -2], "leaf": [-1.0, 2.0, 3.0]},
            {"class": classes[1], "feature": [1], "threshold": [5.0], "missing": [1], "default_left": [1],
             "left": [-1], "right": [-2], "leaf": [0.5, -0.5]},
            {"class": classes[2], "feature": [], "threshold": [], "missing": [], "default_left": [],
             "left": [], "right": [], "leaf": [0.25]},
        ],
    }


def test_tiny_regression_known_outputs():
    model = load_trees(_tiny())
    nan = math.nan
    X = np.array([
        [0.0, -1.0],   # t0: left, left -> -1 ; t1: -1 <= 5 left 0.5 ; +0.25 -> -0.25
        [0.0, 1.0],    # t0: 2 ; t1: 0.5 ; -> 2.75
        [2.0, 9.0],    # t0: 3 ; t1: -0.5 ; -> 2.75
        [nan, 9.0],    # t0: NaN -> default right: 3 ; -> 2.75
        [0.0, nan],    # t0: x1 NaN read as 0 <= 0 -> -1 ; t1: NaN, zero type -> default left 0.5 ; -> -0.25
        [1.0, 0.0],    # t0: 1 <= 1 left, 0 <= 0 left -> -1 ; t1: 0 is "zero" -> left 0.5 ; -> -0.25
        [5.0, 6.0],    # t0: 3 ; t1: 6 > 5 -> -0.5 ; -> 2.75
        [0.5, 5.0],    # t0: 2 ; t1: 5 <= 5 -> 0.5 ; -> 2.75
    ])
    expected = [-0.25, 2.75, 2.75, 2.75, -0.25, -0.25, 2.75, 2.75]
    assert model.predict(X).tolist() == expected
    assert model.predict(X).shape == (8,)
    # One row given as a 1-D array.
    assert model.predict([0.0, 1.0]).tolist() == [2.75]
    assert model.max_depth == 2 and model.num_trees == 3


def test_tiny_binary_and_multiclass():
    binary = load_trees({**_tiny("binary"), "sigmoid": 2.0})
    p = binary.predict([[0.0, 1.0], [0.0, -1.0]])
    assert p.shape == (2,)
    assert p == pytest.approx([1 / (1 + math.exp(-2 * 2.75)), 1 / (1 + math.exp(2 * 0.25))])
    multi = load_trees(_tiny("multiclass", 3, classes=(0, 1, 2)))
    p = multi.predict([[0.0, 1.0], [2.0, 9.0]])
    assert p.shape == (2, 3)
    for row, raw in zip(p, ([2.0, 0.5, 0.25], [3.0, -0.5, 0.25]), strict=True):
        e = np.exp(raw)
        assert row == pytest.approx(e / e.sum())
    assert p.sum(axis=1) == pytest.approx([1.0, 1.0])


def test_empty_rows_and_bad_shapes():
    model = load_trees(_tiny())
    assert model.predict(np.zeros((0, 2))).shape == (0,)
    with pytest.raises(ValueError, match="3 columns, the model expects 2"):
        model.predict(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="2-D"):
        model.predict(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="numeric"):
        model.predict([["a", "b"]])


@pytest.mark.parametrize(("change", "message"), [
    ({"format": "lightgbm"}, "format"),
    ({"version": 2}, "version"),
    ({"objective": "lambdarank"}, "objective"),
    ({"objective": "multiclass"}, "num_class"),
    ({"num_features": 0}, "num_features"),
    ({"feature_names": ["a"]}, "feature_names"),
    ({"trees": []}, "trees"),
])
def test_bad_model_header(change, message):
    with pytest.raises(ValueError, match=message):
        load_trees({**_tiny(), **change})


@pytest.mark.parametrize(("key", "value", "message"), [
    ("feature", [0, 7], "feature index"),
    ("threshold", [1.0], "'threshold' has 1 entries"),
    ("leaf", [1.0, 2.0], "need 3 leaves"),
    ("missing", [3, 0], "missing"),
    ("left", [1, -9], "child index"),
    ("left", [-1, -1], "exactly one"),
    ("threshold", [float("nan"), 0.0], "finite"),
])
def test_bad_tree(key, value, message):
    spec = _tiny()
    spec["trees"][0][key] = value
    with pytest.raises(ValueError, match=message):
        load_trees(spec)


def test_bad_file(tmp_path):
    path = tmp_path / "model.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="model.json: not valid JSON"):
        load_trees(path)
    path.write_text(json.dumps({**_tiny(), "version": 9}))
    with pytest.raises(ValueError, match="model.json: bad tree model: version"):
        load_trees(path)
    path.write_text(json.dumps(_tiny()))
    assert isinstance(load_trees(path), TreeEnsemble)


def _random_data(rng, n, d):
    X = rng.normal(size=(n, d))
    X[:, 1] = np.round(X[:, 1])  # many exact zeros and ties at thresholds
    X[rng.random((n, d)) < 0.15] = np.nan
    X[:, 2][rng.random(n) < 0.3] = 0.0
    return X


@pytest.mark.parametrize("objective", ["binary", "multiclass", "regression"])
@pytest.mark.parametrize("zero_as_missing", [False, True])
def test_equals_lightgbm(objective, zero_as_missing):
    lgb = _lightgbm()
    treemodel = _treemodel()
    rng = np.random.default_rng(7)
    X = _random_data(rng, 600, 5)
    score = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) - np.isnan(X[:, 3])
    params = {"num_leaves": 15, "max_depth": 6, "learning_rate": 0.2, "min_data_in_leaf": 5, "verbose": -1,
              "deterministic": True, "num_threads": 1, "seed": 1, "zero_as_missing": zero_as_missing}
    if objective == "binary":
        y = (score > 0).astype(int)
        params["objective"] = "binary"
    elif objective == "multiclass":
        y = np.digitize(score, [-0.8, 0.0, 0.8])
        params.update(objective="multiclass", num_class=4)
    else:
        y = score + rng.normal(scale=0.1, size=len(score))
        params["objective"] = "regression"
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=20)
    spec = treemodel.lightgbm_to_spec(booster)
    model = load_trees(json.loads(json.dumps(spec)))  # through JSON text, as shipped
    X_test = _random_data(np.random.default_rng(8), 2000, 5)
    ours = model.predict(X_test)
    theirs = booster.predict(X_test)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    # Single rows give the same answer as the batch.
    for i in range(5):
        np.testing.assert_allclose(model.predict(X_test[i]), theirs[i:i + 1], rtol=1e-12, atol=1e-12)
    # A few rows take the all-nodes path (every node decided at once), many rows the
    # level walk: the same leaves for every row, NaN and zero included (the sums differ
    # only in the last bit, by summation order).
    assert X_test.shape[0] * model._first.size > trees_module._ALL_NODES_CELLS
    few = np.vstack([model.raw_score(X_test[i:i + 2]) for i in range(0, 300, 2)])
    assert 2 * model._first.size <= trees_module._ALL_NODES_CELLS
    np.testing.assert_allclose(few, model.raw_score(X_test)[:300], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.vstack([model.raw_score(X_test[i]) for i in range(300)]), few, rtol=1e-12,
                               atol=1e-12)


def test_converter_refuses_categorical():
    lgb = _lightgbm()
    treemodel = _treemodel()
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 6, 400), rng.normal(size=400)]).astype(float)
    y = np.isin(X[:, 0], [1, 4]).astype(int)
    booster = lgb.train({"objective": "binary", "verbose": -1, "min_data_in_leaf": 5, "min_data_per_group": 5,
                         "cat_smooth": 1}, lgb.Dataset(X, y, categorical_feature=[0]), num_boost_round=3)
    with pytest.raises(ValueError, match="categorical"):
        treemodel.lightgbm_to_spec(booster)


def _random_model(rng, num_features=6, num_trees=40, missing=(0, 2)):
    """A binary ensemble of random trees (up to 12 internal nodes each) whose nodes have
    the missing types *missing*."""
    trees = []
    for _ in range(num_trees):
        n = int(rng.integers(0, 13))
        left, right, leaves = [0] * n, [0] * n, 0
        # Breadth-first numbering: node i has children 2i+1, 2i+2 when < n, else leaves.
        for i in range(n):
            for side, child in ((left, 2 * i + 1), (right, 2 * i + 2)):
                if child < n:
                    side[i] = child
                else:
                    side[i] = ~leaves
                    leaves += 1
        if n == 0:
            leaves = 1
        trees.append({
            "feature": rng.integers(0, num_features, n).tolist(),
            "threshold": np.round(rng.normal(size=n), 1).tolist(),
            "missing": rng.choice(missing, n).tolist(),
            "default_left": rng.integers(0, 2, n).tolist(),
            "left": left, "right": right, "leaf": np.round(rng.normal(size=leaves), 3).tolist(),
        })
    return {"format": FORMAT, "version": VERSION, "objective": "binary", "num_class": 1,
            "num_features": num_features, "trees": trees}


def _reference_raw(spec, X):
    """LightGBM's decision rule, one row and one node at a time (the slow path)."""
    out = np.zeros(X.shape[0])
    for r, row in enumerate(X):
        for tree in spec["trees"]:
            node = 0 if tree["feature"] else -1
            while node >= 0:
                x, thr = row[tree["feature"][node]], tree["threshold"][node]
                miss, dleft = tree["missing"][node], tree["default_left"][node]
                if miss == 0 and math.isnan(x):
                    x = 0.0
                if (miss == 1 and (math.isnan(x) or abs(x) <= 1e-35)) or (miss == 2 and math.isnan(x)):
                    go_left = bool(dleft)
                else:
                    go_left = x <= thr
                node = tree["left"][node] if go_left else tree["right"][node]
            out[r] += tree["leaf"][~node]
    return out


@pytest.mark.parametrize("missing", [(0, 2), (0, 1, 2)])
def test_level_walk_without_nan_equals_nan_walk_and_reference(missing):
    """The level walk's fast path (no NaN in X, no missing type "zero") takes the same
    leaves as the NaN-aware walk and as a node-by-node reference, on rows with ties at
    thresholds and exact zeros."""
    rng = np.random.default_rng(11)
    spec = _random_model(rng, missing=missing)
    model = load_trees(spec)
    X = np.round(rng.normal(size=(400, 6)), 1)
    X[rng.random(X.shape) < 0.1] = 0.0
    assert X.shape[0] * model._first.size > trees_module._ALL_NODES_CELLS  # the level walk
    fast = model._raw_score_levels(X, has_nan=False)
    np.testing.assert_array_equal(fast, model._raw_score_levels(X, has_nan=True))
    np.testing.assert_allclose(fast[:, 0], _reference_raw(spec, X), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(model.raw_score(X), fast)
    # With NaN, the NaN-aware walk follows the reference too.
    X[rng.random(X.shape) < 0.2] = np.nan
    np.testing.assert_allclose(model.raw_score(X)[:, 0], _reference_raw(spec, X), rtol=0, atol=1e-12)


def test_a_packaged_model_is_checked_against_this_version_s_features_and_objective():
    from scrapy_cepr.core.dates import FEATURE_NAMES
    from scrapy_cepr.core.trees import load_packaged

    assert load_packaged("dates.json", FEATURE_NAMES, objective="binary").num_features == len(FEATURE_NAMES)
    with pytest.raises(ValueError, match="dates.json"):
        load_packaged("dates.json", FEATURE_NAMES[:-1], objective="binary")
    with pytest.raises(ValueError, match="dates.json"):
        load_packaged("dates.json", FEATURE_NAMES, objective="regression")
    with pytest.raises(ValueError, match="dates.json"):
        load_packaged("dates.json", FEATURE_NAMES, class_names=("a", "b"))
