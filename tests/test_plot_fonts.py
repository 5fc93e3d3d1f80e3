"""CJK titles in ``scrapy-cepr plot`` (issue 10, item 20): drawn with a font that has the
glyphs when one is installed, else with "?" and one warning, never as boxes with a
warning per character."""

from __future__ import annotations

import logging
import warnings

import pytest

pytest.importorskip("matplotlib", reason="pip install 'scrapy-cepr[plot]'")

from scrapy_cepr import plot  # noqa: E402

CJK_PAGE = (
    "<html><head><title>城市新桥开工</title></head><body><h1>城市新桥开工仪式今天举行</h1><div>"
    "<p>市议会周二投票，经过长时间的辩论，决定重建旧桥。</p><p>工程将于春季开始；预算约为四千万元，以多数票通过。</p>"
    "<p>居民表示，他们终于松了一口气。</p></div></body></html>"
)


def test_cjk_title_gives_no_missing_glyph_warnings(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot.plot_page(CJK_PAGE, tmp_path / "cjk.png")
    glyphs = [w for w in caught if "Glyph" in str(w.message)]
    assert glyphs == []
    assert (tmp_path / "cjk.png").stat().st_size > 0


def test_latin_title_keeps_the_default_font():
    assert plot.title_font("Harbour bridge reopens") == (None, "Harbour bridge reopens")


def test_installed_cjk_font_is_chosen():
    font, text = plot.title_font("城市新桥 bridge")
    if font is None:
        pytest.skip("no CJK font installed: apt-get install fonts-wqy-microhei (or fonts-noto-cjk)")
    from matplotlib import ft2font

    charmap = ft2font.FT2Font(font.get_file()).get_charmap()
    assert all(ord(c) in charmap for c in "城市新桥bridge")
    assert text == "城市新桥 bridge"


def test_without_a_cjk_font_the_title_has_question_marks_and_one_warning(monkeypatch, caplog):
    from matplotlib import font_manager

    monkeypatch.setattr(font_manager.fontManager, "ttflist", [])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])
    with caplog.at_level(logging.WARNING, logger="scrapy_cepr.plot"):
        font, text = plot.title_font("城市 bridge")
    assert font is None
    assert text == "?? bridge"
    assert len(caplog.records) == 1 and "fonts-noto-cjk" in caplog.records[0].getMessage()
