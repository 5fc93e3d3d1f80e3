"""CEPR core on hand-made pages: every expected value is computed by hand in a comment
(Wu et al., CIKM 2013; spec §1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scrapy_cepr import extract
from scrapy_cepr.core.features import etpr, tpr
from scrapy_cepr.core.page import Page
from scrapy_cepr.core.smoothing import adjacent_path_weights, gaussian_kernel, path_weight, smooth
from scrapy_cepr.core.threshold import std_content_mask, std_threshold
from scrapy_cepr.methods.cepr import CEPRParams, histogram

# A page shaped like the paper's Example 2: an h1 headline of 40 characters, two
# paragraphs on html.body.div.div.div.p of 300 and 345 characters, and a 7-character link
# inside the second paragraph's div (path ...div.div.div.p.a).
HEADLINE = "H" * 40
PARA_1 = "a" * 299 + "."  # 300 characters, 1 punctuation mark
PARA_2 = "b" * 342 + ",;."  # 345 characters, 3 punctuation marks
EXAMPLE_2 = f"""<html><head><title>Example</title></head><body>
<h1>{HEADLINE}</h1>
<div><div><div><p>{PARA_1}</p><p>{PARA_2}<a>related</a></p></div></div></div>
</body></html>"""


def test_page_model_paths_and_counts():
    page = Page.from_html(EXAMPLE_2)
    assert page.texts == [HEADLINE, PARA_1, PARA_2, "related"]
    assert [page.node_path(i) for i in range(4)] == [
        "html.body.h1",
        "html.body.div.div.div.p",
        "html.body.div.div.div.p",
        "html.body.div.div.div.p.a",
    ]
    assert page.char_counts.tolist() == [40, 300, 345, 7]
    assert page.punct_counts.tolist() == [0, 1, 3, 0]
    assert page.in_link.tolist() == [False, False, False, True]


def test_tpr_of_paper_example_2():
    page = Page.from_html(EXAMPLE_2)
    per_path = tpr(page.path_ids, page.char_counts, len(page.paths))
    per_node = per_path[page.path_ids]
    # h1: 40/1 = 40; p: (300 + 345)/2 = 322.5; p.a: 7/1 = 7.
    assert per_node.tolist() == [40.0, 322.5, 322.5, 7.0]


def test_etpr_is_zero_for_single_node_paths():
    page = Page.from_html(EXAMPLE_2)
    per_node = etpr(page.path_ids, page.char_counts, page.punct_counts, len(page.paths))[page.path_ids]
    # p path: TPR 322.5, puncNum/pathNum = (1+3)/2 = 2, σ_cs = |345-300|/2 = 22.5,
    # σ_ps = |3-1|/2 = 1, so ETPR = 322.5 · 2 · 22.5 · 1 = 14512.5.
    # h1 and p.a hold one node each: σ = 0, so ETPR = 0.
    assert per_node.tolist() == [0.0, 14512.5, 14512.5, 0.0]


def test_kernel_r1_weights():
    # exp(-1/2) = 0.60653; sum = 1 + 2·0.60653 = 2.21306; 1/2.21306 = 0.45186,
    # 0.60653/2.21306 = 0.27407.
    assert gaussian_kernel(1).round(5).tolist() == [0.27407, 0.45186, 0.27407]
    k2 = gaussian_kernel(2)
    # r = 2: exp(-j²/8) for j = 0, 1, 2 is 1, 0.88250, 0.60653; sum 1 + 2·(0.88250 +
    # 0.60653) = 3.97806; so 0.60653/3.97806 = 0.15247, 0.88250/3.97806 = 0.22184, 0.25138.
    assert k2.round(5).tolist() == [0.15247, 0.22184, 0.25138, 0.22184, 0.15247]
    assert gaussian_kernel(0).tolist() == [1.0]


def test_weight_for_paths_at_token_distance_two():
    # html.body.div.p vs html.body.ul.li.a: substitute div->ul, p->li, insert a = 3;
    # html.body.div.p vs html.body.div.div.span: substitute p->div, insert span = 2.
    html = "<html><body><div><p>one</p><div><span>two</span></div></div></body></html>"
    page = Page.from_html(html)
    assert [page.node_path(i) for i in range(2)] == ["html.body.div.p", "html.body.div.div.span"]
    w = adjacent_path_weights(page.path_ids, page.path_codes, radius=1, lambda_=1.0)
    assert w.tolist() == [[0.5, 0.0]]  # 1/2^1, and nothing right of the last node
    w2 = adjacent_path_weights(page.path_ids, page.path_codes, radius=1, lambda_=2.0)
    assert w2[0, 0] == 0.25  # 1/2^2
    assert path_weight(2, 1.0) == 0.5
    assert path_weight(0, 3.0) == 1.0  # the same path always weighs 1


def test_distance_is_over_tags_not_characters():
    # "span" vs "b": one substitution over tags (character distance would be 4).
    page = Page.from_html("<html><body><div><span>x</span><b>y</b></div></body></html>")
    w = adjacent_path_weights(page.path_ids, page.path_codes, radius=1, lambda_=1.0)
    assert w[0, 0] == 1.0  # 1/1^1


def test_smoothing_by_hand():
    h = np.array([10.0, 0.0, 20.0, 0.0, 10.0])
    weights = np.array([[1.0, 0.5, 0.5, 1.0, 0.0]])
    k = gaussian_kernel(1)
    out = smooth(h, weights, 1)
    # node 1: k0·0 + k1·(w(1,2)·20 + w(0,1)·10) = 0.27407·(0.5·20 + 1·10) = 5.4814
    # node 2: k0·20 + k1·(w(2,3)·0 + w(1,2)·0) = 0.45186·20 = 9.0372
    # node 3: k1·(w(3,4)·10 + w(2,3)·20) = 0.27407·(10 + 10) = 5.4814
    # edges (authors' code): nodes 0 and 4 keep H.
    expected = [10.0, k[0] * (0.5 * 20 + 10), k[1] * 20, k[0] * (10 + 0.5 * 20), 10.0]
    assert np.allclose(out, expected)
    assert round(out[1], 4) == 5.4814
    padded = smooth(h, weights, 1, edges="pad")
    # node 0 padded: k1·10 + k0·w(0,1)·0 = 4.5186
    assert round(padded[0], 4) == 4.5186


def test_threshold_is_alpha_sigma():
    h = np.array([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    # mean 5, population variance (9+1+1+1+0+0+4+16)/8 = 4, σ = 2; τ = 0.8·2 = 1.6
    assert std_threshold(h, 0.8) == pytest.approx(1.6)
    assert std_threshold(np.zeros(0), 0.8) == 0.0


def test_content_mask_keeps_every_node_when_sigma_is_zero():
    # Issue 18 (9): with σ(H') = 0 (every H'_i equal, e.g. all 0), τ = α·σ = 0 and
    # "H'_i > τ" kept nothing. No node is below the mean then: all are kept.
    for h in (np.zeros(3), np.full(4, 7.25), np.array([0.1 + 0.2, 0.3 + 1e-17])):
        tau, keep = std_content_mask(h, 0.8)
        assert tau == 0.0 and keep.tolist() == [True] * h.size
    h = np.array([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])  # σ = 2: the paper's rule, unchanged
    tau, keep = std_content_mask(h, 0.8)
    assert tau == pytest.approx(1.6) and keep.tolist() == (h > 1.6).tolist()
    tau, keep = std_content_mask(np.zeros(0), 0.8)
    assert tau == 0.0 and keep.size == 0


STORY = "The harbour wall, built in 1820, fell into the sea on Sunday. Nobody was hurt, the council said."
ZH = "湿地公园的鸟类数量今年增加了三成，管理处说，新的保护措施起了作用。"
JA = "港の古い防波堤が日曜日に崩れた。けが人はいなかったと市は発表した。"


@pytest.mark.parametrize("method", ["tpr", "etpr", "setpr"])
@pytest.mark.parametrize("html, text", [
    (f"<html><body><p>{STORY}</p></body></html>", STORY),  # one-paragraph story
    (f"<html><head><meta charset=utf-8></head><body><div>{ZH}</div></body></html>", ZH),  # space-less Chinese
    (f'<html><head><meta charset="shift_jis"></head><body><p>{JA}</p></body></html>'.encode("shift_jis"), JA),
], ids=["one-paragraph", "chinese", "shift-jis"])
def test_sigma_zero_page_keeps_its_text(method, html, text):
    # Issue 18 (9): ETPR is 0 on a path with one node, so these pages had σ(H') = 0 and
    # SETPR/ETPR returned an empty body.
    result = extract(html, method=method)
    assert result.tau == 0.0
    assert result.body == text


def test_setpr_pipeline_on_example_page():
    result = extract(EXAMPLE_2, method="setpr")
    page = Page.from_html(EXAMPLE_2)
    _h, hs = histogram(page, "setpr", CEPRParams())
    # H = [0, 14512.5, 14512.5, 0]; the edges keep H; node 1: k1·0·w + k0·14512.5 +
    # k1·14512.5 (same path, w=1) = (0.45186 + 0.27407)·14512.5 = 10535.1
    # node 2: k1·14512.5 + k0·14512.5 + k1·w(p, p.a)·0 = 10535.1.
    assert hs[1] == pytest.approx((gaussian_kernel(1)[1] + gaussian_kernel(1)[0]) * 14512.5)
    tau = 0.8 * np.std(hs)
    assert result.tau == pytest.approx(tau)
    assert result.nodes.keep.tolist() == (hs > tau).tolist() == [False, True, True, False]
    # The two paragraphs are separate blocks; the headline is the title.
    assert result.body == f"{PARA_1}\n{PARA_2}"
    assert result.title == HEADLINE
    assert result.method == "setpr" and result.params["alpha"] == 0.8


def test_paper_alpha_defaults_and_override():
    assert extract(EXAMPLE_2, method="tpr").params["alpha"] == 1.7
    assert extract(EXAMPLE_2, method="etpr").params["alpha"] == 0.7
    assert extract(EXAMPLE_2, method="setpr", alpha=0.0).params["alpha"] == 0.0


def test_body_lines_follow_blocks():
    html = (
        "<html><body><div>Intro, text.<p>First <b>bold</b> para, here.</p>tail, text.</div>"
        "<ul><li>one, two.</li><li>three, four.</li></ul><p>a<br>b</p></body></html>"
    )
    result = extract(html, method="setpr", alpha=0.0, lambda_=0.0)
    # α = 0 keeps every node with H' > 0; here check the line structure of what is kept.
    page = Page.from_html(html)
    lines = {}
    for text, block in zip(page.texts, page.blocks.tolist()):
        lines.setdefault(block, []).append(text)
    assert list(lines.values()) == [
        ["Intro, text."],
        ["First", "bold", "para, here."],
        ["tail, text."],
        ["one, two."],
        ["three, four."],
        ["a"],
        ["b"],
    ]
    assert isinstance(result.body, str)



def test_tails_follow_their_element_subtree_in_document_order():
    # Nested closes: "inner tail" ends <i> inside <b>, "outer tail" ends <b> inside <p>;
    # the text split by a removed <script> is one node, as a browser displays it.
    html = (
        "<html><body><p>start <b>bold <i>italic</i> inner tail</b> outer tail</p>"
        "<div>© 2000-<script>document.write(2025)</script> Site, Inc.</div>end</body></html>"
    )
    page = Page.from_html(html)
    assert page.texts == ["start", "bold", "italic", "inner tail", "outer tail", "© 2000- Site, Inc.", "end"]
    assert [page.node_path(i) for i in range(len(page))] == [
        "html.body.p",
        "html.body.p.b",
        "html.body.p.b.i",
        "html.body.p.b",
        "html.body.p",
        "html.body.div",
        "html.body",
    ]
    assert [page.owners[i].tag for i in range(len(page))] == ["p", "b", "i", "b", "p", "div", "body"]
    # One line for the paragraph, one for the div, one for the tail after the div.
    assert page.blocks.tolist() == [1, 1, 1, 1, 1, 2, 3]


def test_extraction_does_not_keep_the_page_alive():
    # The inspection view holds arrays and path names, not the Page with its lxml tree.
    import gc
    import weakref

    from scrapy_cepr.methods.cepr import run

    page = Page.from_html(EXAMPLE_2)
    alive = weakref.ref(page)
    result = run(page, CEPRParams())
    del page
    gc.collect()
    assert alive() is None
    assert result.nodes.path[3] == "html.body.div.div.div.p.a"  # paths still readable

@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"alpha": -0.1}, "alpha"),
        ({"alpha": "high"}, "alpha"),
        ({"alpha": math.nan}, "alpha"),
        ({"lambda_": -1}, "lambda_"),
        ({"radius": -1}, "radius"),
        ({"radius": 1.5}, "radius"),
        ({"method": "magic"}, "method"),
        ({"gamma": 1}, "gamma"),
    ],
)
def test_bad_parameters_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        extract(EXAMPLE_2, **kwargs)


def test_inspection_view_is_per_node():
    result = extract(EXAMPLE_2)
    nodes = result.nodes
    assert len(nodes) == 4
    assert nodes.path[1] == "html.body.div.div.div.p"
    assert nodes.txt_num.tolist() == [40, 300, 345, 7]
    assert nodes.punc_num.tolist() == [0, 1, 3, 0]
    assert nodes.title_index == 0
    rec = result.to_dict(nodes=True)["nodes"][1]
    assert rec["h"] == 14512.5 and rec["keep"] is True
