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
