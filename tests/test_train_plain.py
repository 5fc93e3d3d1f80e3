"""The plain-copy folds of benchmarks/train_blocks.py and benchmarks/train_pagetype.py
(issue 17): a plain copy is scored by the model of its page's fold, the served pages'
folds do not move when copies are added, and the copies are trained on only when asked."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("lightgbm", reason='needs the train extra: pip install -e ".[train]"')
pytest.importorskip("sklearn", reason='needs the train extra: pip install -e ".[train]"')

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import train_blocks  # noqa: E402
import train_pagetype  # noqa: E402

from scrapy_cepr.core.pagetype import FEATURE_NAMES, PAGE_TYPES  # noqa: E402


def _blocks(seed: int, pages: int = 30, per_page: int = 12):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(pages * per_page, 4)).astype(np.float32)
    y = x[:, 0] + 0.3 * rng.normal(size=len(x)) > 0
    w = np.full(len(x), 9.0)
    groups = np.repeat([f"site{i % 10}" for i in range(pages)], per_page)
    return x, y, w, groups


def test_block_oof_scores_a_copy_with_its_pages_fold_model():
    x, y, w, groups = _blocks(1)
    served = train_blocks.oof_probs(x, y, w, groups)
    # Identical copies, in the groups of their pages, not trained on: each copy gets the
    # probability of its original (same fold model, same features), and the served
    # blocks' probabilities do not move.
    both = np.vstack([x, x]), np.concatenate([y, y]), np.concatenate([w, w]), np.concatenate([groups, groups])
    mask = np.arange(2 * len(y)) < len(y)
    p = train_blocks.oof_probs(*both, n_served=len(y), train_mask=mask)
    np.testing.assert_allclose(p[: len(y)], served)
    np.testing.assert_allclose(p[len(y) :], served)
    # Trained on (augmented): the fold models change, so do the probabilities.
    p_aug = train_blocks.oof_probs(*both, n_served=len(y))
    assert not np.allclose(p_aug[: len(y)], served)


def test_pagetype_oof_of_plain_copies():
    rng = np.random.default_rng(2)
    n = 140
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    y = rng.integers(0, len(PAGE_TYPES), size=n)
    X[np.arange(n), y] += 3.0  # a learnable type
    groups = [f"site{i % 14}" for i in range(n)]
    proba = train_pagetype.cross_validate(X, y, groups, rounds=5)
    same, copies = train_pagetype.cross_validate(X, y, groups, rounds=5, plain=X.copy())
    np.testing.assert_allclose(same, proba)
    np.testing.assert_allclose(copies, proba)
    _, copies_aug = train_pagetype.cross_validate(X, y, groups, rounds=5, plain=X.copy(), augment=True)
    assert not np.allclose(copies_aug, proba)


def _learnable_types(seed: int, n: int = 140):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    y = rng.integers(0, len(PAGE_TYPES), size=n)
    X[np.arange(n), y] += 3.0
    return X, y


def test_pagetype_bag_file_computes_the_bags_mean_raw_score():
    from scrapy_cepr.core.trees import load_trees

    X, y = _learnable_types(3)
    bag = train_pagetype.train(X, y, rounds=8, seed=4, bag=3)
    assert [b.params["seed"] for b in bag.boosters] == [4, 5, 6]
    raw = np.mean([b.predict(X, raw_score=True) for b in bag.boosters], axis=0)
    expected = np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(bag.predict(X), expected, atol=1e-9)
    # The exported file: every booster's trees, leaves divided by 3 (rounded to 4 digits).
    spec = train_pagetype.bag_spec(bag)
    model = load_trees(spec)
    assert model.num_trees == 3 * 8 * len(PAGE_TYPES)
    np.testing.assert_allclose(model.predict(X), expected, atol=2e-3)
    assert (model.predict(X).argmax(axis=1) == expected.argmax(axis=1)).mean() > 0.99


def test_pagetype_bag_of_one_is_one_booster():
    import lightgbm as lgb

    X, y = _learnable_types(4)
    one = train_pagetype.train(X, y, rounds=8, seed=7, bag=1)
    assert len(one.boosters) == 1 and one.boosters[0].params["seed"] == 7
    again = train_pagetype.train(X, y, rounds=8, seed=7, bag=1)
    np.testing.assert_array_equal(one.predict(X), again.predict(X))  # deterministic
    assert isinstance(one.boosters[0], lgb.Booster)


def test_pagetype_class_weights_balance_by_square_root():
    # 16 articles, 4 forum posts, 1 product page: weights sqrt(16/16), sqrt(16/4), sqrt(16/1).
    y = np.array([0] * 16 + [1] * 4 + [2])
    w = train_pagetype.class_weights(y, power=0.5)
    assert w.shape == y.shape
    np.testing.assert_allclose(w[:16], 1.0)
    np.testing.assert_allclose(w[16:20], 2.0)
    np.testing.assert_allclose(w[20], 4.0)
    # The default (CLASS_WEIGHT_POWER = 0, as the shipped model was trained): unweighted.
    assert train_pagetype.CLASS_WEIGHT_POWER == 0.0
    np.testing.assert_allclose(train_pagetype.class_weights(y), 1.0)


def test_pagetype_trains_on_heading_free_copies_in_their_pages_folds():
    # Served rows carry the type in 7 columns; their heading-free copies lose it there and
    # carry it in 7 others instead (as the h2 counts vanish and other signs stay).
    # (Columns that the plain-page and no-URL rows of every training page keep.)
    kept = sorted(set(range(len(FEATURE_NAMES))) - set(
        train_pagetype.URL_COLUMNS + train_pagetype.DECLARATION_COLUMNS + train_pagetype.HTML5_SHARE_COLUMNS
        + train_pagetype.HTML5_LINK_COLUMNS + train_pagetype.HTML5_COUNT_COLUMNS))
    served_cols, free_cols = np.array(kept[:7]), np.array(kept[7:14])
    rng = np.random.default_rng(5)
    n = 210
    y = rng.integers(0, len(PAGE_TYPES), size=n)
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    X[np.arange(n), served_cols[y]] += 4.0
    free = rng.normal(size=(n, len(FEATURE_NAMES)))
    free[np.arange(n), free_cols[y]] += 4.0
    groups = [f"site{i % 21}" for i in range(n)]
    runs = {}
    for trained in (False, True):
        with_url, _, _, _, copies = train_pagetype.cross_validate_both(
            X, y, groups, heading_free=free, train_free=trained)
        runs[trained] = (np.mean(with_url.argmax(1) == y), np.mean(copies.argmax(1) == y))
    # Not trained on: the copies are scored (by their page's fold model) but read no
    # better than a guess (1 in 7); trained on (weight 0.25 against the served rows'
    # 2.5): far better, and the served rows stay right.
    assert runs[False][1] < 0.3
    assert runs[True][1] > runs[False][1] + 0.3
    assert runs[False][0] > 0.8 and runs[True][0] > 0.8
    # cross_validate trains on them whenever they are given.
    proba = train_pagetype.cross_validate(X, y, groups, rounds=30, heading_free=free)
    np.testing.assert_allclose(proba, train_pagetype.cross_validate_both(
        X, y, groups, rounds=30, heading_free=free)[0])
