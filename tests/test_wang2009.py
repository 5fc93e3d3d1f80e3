"""The ``wang2009`` method (Wang et al., KDD 2009) on pages written for these tests, the
numpy SVM against scikit-learn, and the model file.

The rendering tests need Chromium and playwright (skip locally with the install command;
CI sets CEPR_REQUIRE_RENDER=1, which turns the skip into a failure)."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from browser import require_browser
from lxml import html as lxml_html

import scrapy_cepr
from scrapy_cepr.methods import get_method
from scrapy_cepr.methods import wang2009 as w
from scrapy_cepr.render import Renderer

FIXTURES = Path(__file__).parent / "fixtures"
STORY = (FIXTURES / "wang_story.html").read_text(encoding="utf-8")
PARAGRAPHS = [p.split("</p>")[0] for p in STORY.split('<p>')[1:6]]
TRAIN = Path(__file__).resolve().parents[1] / "benchmarks" / "train_wang2009.py"


@pytest.fixture(scope="module")
def story_layout():
    """The story page rendered once: (Layout, element index by id attribute)."""
    require_browser()
    with Renderer(timeout=20) as r:
        out = r.render(STORY)
    page = scrapy_cepr.core.page.Page.from_html(out.html, url="http://example.com/news/harbour.html")
    layout = w.Layout(page, out.geometry)
    by_id = {el.get("id"): k for k, el in enumerate(layout.table.elements) if el.get("id")}
    return layout, by_id


def test_params_validate():
    spec = get_method("wang2009")
    assert spec.make_params().features == "extended"
    assert spec.make_params(styled_html="true").styled_html is True
    with pytest.raises(ValueError, match="features must be one of paper, extended"):
        spec.make_params(features="all")
    with pytest.raises(ValueError, match="min_area"):
        spec.make_params(min_area=-1)
    with pytest.raises(ValueError, match="render_timeout"):
        spec.make_params(render_timeout=0)


def test_body_features_by_hand(story_layout):
    layout, by_id = story_layout
    ids, feats = w.body_candidates(layout, w.Wang2009Params())
    story = by_id["story"]
    assert story in ids.tolist()
    row = dict(zip(w.BODY_FEATURES["extended"], feats["extended"][ids.tolist().index(story)]))
    # Formatting elements shown on the page: the story's 5 <p>, the sidebar's <h3> and <p>
    # (the hidden <p> is not displayed); the story root has 5 of them as children.
    assert row["formatting_elements_num"] == pytest.approx(5 / 7)
    story_chars = sum(len(p) for p in PARAGRAPHS)
    side = len("Most read") + len("Advertisement: compare home insurance quotes.")
    assert row["formatted_content_len"] == pytest.approx(story_chars / (story_chars + side))
    # #story starts below the 40-px headline and its 20-px margin: (40, 120) px, 640 px wide.
    assert row["rect_left"] == pytest.approx(40 / 1024)
    assert row["rect_width"] == pytest.approx(640 / 1024)
    page_h = layout.page_height
    assert page_h <= w.TWO_SCREENS_HEIGHT  # a short page: normalised by its own height
    assert row["rect_top"] == pytest.approx(120 / page_h)
    assert row["link_density"] == 0.0
    # The sidebar is too small to be a body (BigEnough); the nav has no formatting element.
    assert by_id["side"] not in ids.tolist() or layout.rect[by_id["side"]][2] * layout.rect[by_id["side"]][3] >= 30000


def test_first_screen_filter_drops_lower_subtrees(story_layout):
    layout, by_id = story_layout
    far = layout.rect.copy()
    main = by_id["main"]
    layout.rect[main : layout.table.end[main], 1] += 2000  # move #main and its subtree below the first screen
    try:
        ids, _ = w.body_candidates(layout, w.Wang2009Params(first_screen=True))
        assert by_id["main"] not in ids.tolist() and by_id["story"] not in ids.tolist()
        ids, _ = w.body_candidates(layout, w.Wang2009Params(first_screen=False))
        assert by_id["main"] in ids.tolist()
    finally:
        layout.rect[:] = far


def test_title_candidates_and_features(story_layout):
    layout, by_id = story_layout
    story, h1 = by_id["story"], by_id["headline"]
    ids, x = w.title_candidates(layout, story, w.Wang2009Params())
    assert h1 in ids.tolist()
    row = dict(zip(w.TITLE_FEATURES, x[ids.tolist().index(h1)]))
    assert row["overlap"] == pytest.approx(1.0)  # same column as the story
    assert row["distance"] == pytest.approx(20 / 768)  # 20-px margin between them
    assert row["flat"] == pytest.approx(40 / 640)
    assert row["font_size"] == pytest.approx(1.0)  # the largest font among the candidates
    assert row["end_with_full_stop"] == 0.0
    assert row["word_num"] == pytest.approx(6 / 60)
    texts = [layout.text(e) for e in ids.tolist()]
    # No anchor text: the sidebar links are not candidates.
    assert not any("Rail workers" in t for t in texts)


def test_not_category_name(story_layout):
    layout, by_id = story_layout
    # A "Coast" label above the story, like a category name: a link with that text is in the nav.
    page_html = STORY.replace('<h1 id="headline">', '<div id="label" style="font-size:30px">Coast</div><h1 id="headline">')
    require_browser()
    with Renderer(timeout=20) as r:
        out = r.render(page_html)
    page = scrapy_cepr.core.page.Page.from_html(out.html)
    lay = w.Layout(page, out.geometry)
    ids_ = {el.get("id"): k for k, el in enumerate(lay.table.elements) if el.get("id")}
    cand, _ = w.title_candidates(lay, ids_["story"], w.Wang2009Params())
    assert ids_["label"] not in cand.tolist() and ids_["headline"] in cand.tolist()


def test_extract_story_page():
    require_browser()
    r = scrapy_cepr.extract(STORY, url="http://example.com/news/harbour.html", method="wang2009", styled_html=True)
    assert r.title == "Harbour wall collapses in overnight storm"
    assert r.body.split("\n") == PARAGRAPHS
    html = r.body_styled_html
    assert 'src="http://example.com/static/harbour.jpg"' in html
    assert "onclick" not in html and "<script" not in html and "Subscribers only" not in html
    assert "font-size: 17px" in html and "font-size: 32px" in html  # story and headline styles
    assert "Most read" not in html
    assert r.to_dict()["body_styled_html"] == html
    assert 0.0 < r.body_probability <= 1.0 and 0.0 < r.title_probability <= 1.0


LOCAL_URLS = ('<p>Sources: <a href="file:///etc/passwd">the log</a>, <a href="data:text/html,x">a note</a>, '
              '<a href="vbscript:msgbox(1)">a macro</a>, <a href=" jav&#x09;ascript:alert(1)">a script</a> and '
              '<a href="/news/report.html">the report</a>.'
              '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="inline" width="20" height="20">'
              '<img src="file:///var/www/map.png" alt="local map" width="20" height="20"></p>\n')


def test_styled_html_keeps_only_the_urls_body_html_keeps():
    # body_styled_html uses body_html's allow-list: no file:, data:, vbscript: or
    # javascript: URL survives; http(s) ones are made absolute.
    require_browser()
    page = STORY.replace("<img src=\"/static/harbour.jpg\"", LOCAL_URLS + "<img src=\"/static/harbour.jpg\"")
    r = scrapy_cepr.extract(page, url="http://example.com/news/harbour.html", method="wang2009", styled_html=True)
    html = r.body_styled_html
    assert "Sources:" in html and "the report" in html and "local map" not in html
    doc = lxml_html.fragment_fromstring(html, create_parent="div")
    urls = [v for el in doc.iter() for k, v in el.attrib.items() if k in ("href", "src")]
    assert "http://example.com/news/report.html" in urls and "http://example.com/static/harbour.jpg" in urls
    assert all(url.startswith("http://") for url in urls), urls
    assert "file:" not in html and "data:" not in html and "script:" not in html


def test_styled_html_of_a_body_without_blocks_is_not_a_nested_body():
    # A page whose text sits straight in <body>: the body is the <body> element, and its
    # styled copy is a <div> inside <article>, not a second <body>.
    require_browser()
    line = "The harbour wall at Saltby gave way on Monday morning when gale-force winds met the highest tide. " * 3
    page = ("<html><head><title>Harbour wall collapses</title></head><body style='margin:20px'>"
            + (line + "<br><br>") * 5 + "</body></html>")
    r = scrapy_cepr.extract(page, url="http://example.com/a.html", method="wang2009", styled_html=True)
    html = r.body_styled_html
    assert "<body" not in html and "<html" not in html
    doc = lxml_html.fragment_fromstring(html)
    assert doc.tag == "article" and [c.tag for c in doc] == ["div"]
    assert doc[0].get("style") and "margin" not in doc[0].get("style")
    assert " ".join(doc.text_content().split()) == " ".join(r.body.split())


def test_extract_with_paper_features_and_first_screen():
    require_browser()
    r = scrapy_cepr.extract(STORY, method="wang2009", features="paper", first_screen=True)
    assert r.params["features"] == "paper" and r.params["first_screen"] is True
    assert r.body and r.body_styled_html is None


def test_empty_and_textless_pages_do_not_render(monkeypatch):
    import scrapy_cepr.render as render

    monkeypatch.setattr(render, "shared_renderer", lambda *a: pytest.fail("rendered an empty page"))
    assert scrapy_cepr.extract("", method="wang2009").body == ""
    assert scrapy_cepr.extract("<html><body><div></div></body></html>", method="wang2009").body == ""


def test_embedded_geometry_is_used_without_a_browser(monkeypatch):
    require_browser()
    with Renderer(timeout=20) as r:
        out = r.render(STORY)
    embedded = out.html.replace(
        "</body>", f'<script type="application/json" id="cepr-geometry">{json.dumps(out.geometry.to_json())}</script></body>'
    )
    import scrapy_cepr.render as render

    monkeypatch.setattr(render, "shared_renderer", lambda *a: pytest.fail("rendered although geometry was embedded"))
    res = scrapy_cepr.extract(embedded, method="wang2009")
    assert res.title == "Harbour wall collapses in overnight storm"
    assert res.body.split("\n") == PARAGRAPHS


# --------------------------------------------------------------------------- models


def _trainer():
    pytest.importorskip("sklearn", reason='needs scikit-learn: pip install "scrapy-cepr[train]"')
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_wang2009", TRAIN)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _toy_data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(240, 3))
    y = ((x[:, 0] + 0.5 * x[:, 1] + 0.3 * rng.normal(size=240)) > 0.8).astype(int)
    groups = np.repeat(np.arange(24), 10).astype(str)
    return x, y, groups


def test_numpy_svm_equals_scikit_learn():
    t = _trainer()
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    x, y, groups = _toy_data()
    model = w.SVMModel.from_dict(t.train_svm(x, y, groups, ("a", "b", "c")))  # asserts Platt equality itself
    scaler = StandardScaler().fit(x)
    svc = SVC(kernel="rbf", C=t.SVM_C, gamma="scale", class_weight="balanced").fit(scaler.transform(x), y)
    grid = np.random.default_rng(3).normal(size=(50, 3)) * 2
    assert np.allclose(model.decision(grid), svc.decision_function(scaler.transform(grid)), atol=1e-6)


def test_model_training_is_deterministic():
    t = _trainer()
    x, y, groups = _toy_data()
    one = t.dump_models({"m": t.train_svm(x, y, groups, ("a", "b", "c"))})
    two = t.dump_models({"m": t.train_svm(x, y, groups, ("a", "b", "c"))})
    assert one == two


def test_shipped_model_file():
    text = resources.files("scrapy_cepr").joinpath("models", "wang2009.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert "pickle" not in text
    assert len(text) < 1_000_000
    models = w.load_models()
    assert set(models["body"]) == {"paper", "extended"}
    assert models["body"]["paper"].features == w.BODY_FEATURES["paper"]
    assert models["body"]["extended"].features == w.BODY_FEATURES["extended"]
    assert models["title"].features == w.TITLE_FEATURES
    assert data["constants"]["screen_height"] == w.SCREEN_HEIGHT
    # A subtree like a story column scores higher than one like a link list.
    story = [5 / 7, 0.9, 0.04, 0.1, 0.6, 0.6, 0.0, 0.8]
    links = [0.0, 0.0, 0.7, 0.1, 0.25, 0.3, 0.95, 0.1]
    p = models["body"]["extended"].probability(np.array([story, links]))
    assert p[0] > p[1]


def test_worker_warm_up_loads_the_models_but_starts_no_browser(monkeypatch):
    # A process worker warms its method up before its first page; for wang2009 that
    # must not start Chromium: pages rendered by scrapy-playwright carry their geometry.
    from scrapy_cepr import render
    from scrapy_cepr.worker import warm_up

    monkeypatch.setattr(render, "shared_renderer", lambda *a: pytest.fail("warm-up started a browser"))
    w.load_models.cache_clear()
    assert warm_up("wang2009") == 0
    assert w.load_models.cache_info().currsize == 1
    assert get_method("wang2009").warm_up is w.warm_up
    assert get_method("setpr").warm_up is None  # the others are run once on a tiny page
