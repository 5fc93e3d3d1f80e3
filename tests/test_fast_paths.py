"""Fast paths of the page model and the parse give what their plain versions give
(issue 17: cepr-typed made faster without changing any output)."""

from __future__ import annotations

import numpy as np
import pytest

from scrapy_cepr.core import page as page_module


def _itemtypes_by_find(data: bytes) -> tuple[str, ...]:
    """The plain scan: ``bytes.find`` of each spelling, one after the other."""
    found = []
    for spelling in (b"itemtype", b"itemType"):
        start = data.find(spelling)
        while start >= 0:
            m = page_module._ITEMTYPE_RE.match(data, start)
            if m:
                found.append(m.group(1).decode("utf-8", "replace"))
            start = data.find(spelling, start + 8)
    return tuple(found)


@pytest.mark.parametrize("data", [
    b"",
    b"itemtyp",
    b"itemtype",  # the spelling ends the data: no value
    b"itemtype=x",
    b'<div itemscope itemType="https://schema.org/Product"><p itemtype=\'http://schema.org/Offer\'>',
    b'<a itemtype = "http://schema.org/Person">x</a><b itemtype="https://schema.org/Article" x>',
    b'<i ITEMTYPE="http://schema.org/Event"></i><i ItemType="x"></i>',  # other spellings: not read
    b"itemitemtype=a itemtypeitemtype=b iitemType=c",
    '<p itemtype="https://schema.org/Café">é</p>'.encode(),
    b"<p>text</p>" * 50 + b'<div itemtype="https://schema.org/Recipe">' + b"<p>more</p>" * 50,
])
def test_itemtypes_equal_plain_scan(data):
    assert page_module._itemtypes(data) == _itemtypes_by_find(data)


def test_itemtypes_equal_plain_scan_random():
    rng = np.random.default_rng(5)
    pieces = [b"itemtype", b"itemType", b"item", b"type", b"=", b'"', b"'", b" ", b"x", b"<p>", b"i", b"/"]
    for _ in range(300):
        data = b"".join(pieces[k] for k in rng.integers(0, len(pieces), rng.integers(0, 40)))
        assert page_module._itemtypes(data) == _itemtypes_by_find(data), data
