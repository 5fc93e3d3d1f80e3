"""CEDST (Zhang et al., ICCS 2018): Dempster–Shafer evidence, Otsu threshold, keywords,
topics, non-content features and the whole method on hand-written pages.

Every expected number is computed by hand in the comment above its assertion.
"""

from __future__ import annotations

import numpy as np
import pytest

from scrapy_cepr import extract
from scrapy_cepr.core.evidence import NEWS, NOT_NEWS, THETA, TotalConflictError, bma, conjunctive, dempster
from scrapy_cepr.core.keywords import NodeKeywords, node_keywords, segment, stop_words, textrank
from scrapy_cepr.core.page import Page
from scrapy_cepr.core.threshold import otsu_threshold
from scrapy_cepr.methods.cedst import (
    CEDSTParams,
    cluster_variance_features,
    fuse,
    link_feature,
    sibling_groups,
    topic_feature,
    topics,
)


def mass(news: float, not_news: float) -> np.ndarray:
    """A mass function on Θ = {news, ~news}: (∅, {news}, {~news}, Θ)."""
    return np.array([0.0, news, not_news, 1.0 - news - not_news])


# ----------------------------------------------------------------------- Dempster's rule


def test_dempster_two_sources_normalises_the_conflict():
    # m1: news .6, Θ .4;  m2: ~news .5, Θ .5.
    # Products: news∩~news = ∅: .6·.5 = .30 (conflict); news∩Θ = news: .6·.5 = .30;
    # Θ∩~news = ~news: .4·.5 = .20; Θ∩Θ = Θ: .4·.5 = .20.  K = 1 − .30 = .70.
    # Result: news .30/.70 = 3/7, ~news .20/.70 = 2/7, Θ .20/.70 = 2/7.
    m = dempster(mass(0.6, 0.0), mass(0.0, 0.5))
    assert m == pytest.approx([0.0, 3 / 7, 2 / 7, 2 / 7])
    # Before normalisation the conflict sits on ∅.
    assert conjunctive(mass(0.6, 0.0), mass(0.0, 0.5)) == pytest.approx([0.30, 0.30, 0.20, 0.20])


def test_dempster_three_sources_any_order_and_pairwise():
    # m1: news .6, Θ .4;  m2: news .5, Θ .5;  m3: ~news .8, Θ .2.
    # m1⊕m2 has no conflict: Θ = .4·.5 = .2, news = 1 − .2 = .8.
    # ⊕m3: conflict = .8·.8 = .64, K = .36;
    # news = .8·.2/.36 = 4/9, ~news = .2·.8/.36 = 4/9, Θ = .2·.2/.36 = 1/9.
    m1, m2, m3 = mass(0.6, 0.0), mass(0.5, 0.0), mass(0.0, 0.8)
    expected = [0.0, 4 / 9, 4 / 9, 1 / 9]
    assert dempster(m1, m2, m3) == pytest.approx(expected)
    assert dempster(m3, m1, m2) == pytest.approx(expected)
    assert dempster(dempster(m1, m2), m3) == pytest.approx(expected)


def test_dempster_is_generic_over_the_frame_and_batched():
    # Θ = {a, b, c} as bits a=1, b=2, c=4: {a,b}=3, {b,c}=6, {a}=1, Θ=7.
    # m1({a,b}) = .6, m1(Θ) = .4;  m2({b,c}) = .7, m2({a}) = .3.
    # {a,b}∩{b,c} = {b}: .42; {a,b}∩{a} = {a}: .18; Θ∩{b,c} = {b,c}: .28; Θ∩{a} = {a}: .12.
    # No conflict: {a} = .30, {b} = .42, {b,c} = .28.
    m1 = np.zeros(8)
    m1[[3, 7]] = [0.6, 0.4]
    m2 = np.zeros(8)
    m2[[6, 1]] = [0.7, 0.3]
    out = dempster(m1, m2)
    expected = np.zeros(8)
    expected[[1, 2, 6]] = [0.30, 0.42, 0.28]
    assert out == pytest.approx(expected)
    # A batch of two nodes: row 0 is the two-source case above, row 1 has no evidence.
    batch = dempster(np.stack([mass(0.6, 0.0), mass(0.0, 0.0)]), np.stack([mass(0.0, 0.5), mass(0.0, 0.0)]))
    assert batch[0] == pytest.approx([0.0, 3 / 7, 2 / 7, 2 / 7])
    assert batch[1] == pytest.approx([0.0, 0.0, 0.0, 1.0])


def test_dempster_total_conflict_raises_a_clear_error():
    # m1({news}) = 1 and m2({~news}) = 1: every product falls on ∅, K = 0.
    with pytest.raises(TotalConflictError, match="total conflict"):
        dempster(mass(1.0, 0.0), mass(0.0, 1.0))
    # In a batch the message names the first node in total conflict (index 1 here).
    with pytest.raises(TotalConflictError, match=r"index \(1,\)"):
        dempster(np.stack([mass(0.5, 0.0), mass(1.0, 0.0)]), np.stack([mass(0.0, 0.5), mass(0.0, 1.0)]))
    assert issubclass(TotalConflictError, ValueError)


def test_dempster_refuses_mismatched_frames():
    with pytest.raises(ValueError, match="different frames"):
        dempster(np.array([0.0, 1.0, 0.0, 0.0]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="2\\^n"):
        dempster(np.array([0.0, 0.5, 0.5]))


# ---------------------------------------------------------------------------------- BMA


def test_bma_positive_and_negative():
    # Eq. 1, α = .9: h = 0, .5, 1 → m(news) = 0, .45, .9 and m(Θ) = 1, .55, .1.
    m = bma(np.array([0.0, 0.5, 1.0]), 0.9, positive=True)
    assert m[:, NEWS] == pytest.approx([0.0, 0.45, 0.9])
    assert m[:, NOT_NEWS] == pytest.approx([0.0, 0.0, 0.0])
    assert m[:, THETA] == pytest.approx([1.0, 0.55, 0.1])
    # Eq. 2, β = .8: h = .25 → m(~news) = .2, m(Θ) = .8, m(news) = 0.
    assert bma(np.array(0.25), 0.8, positive=False) == pytest.approx([0.0, 0.0, 0.2, 0.8])


def test_bma_rejects_values_outside_unit_interval():
    with pytest.raises(ValueError, match="weight"):
        bma(np.array([0.5]), 1.5, positive=True)
    with pytest.raises(ValueError, match="h must lie in"):
        bma(np.array([1.5]), 0.9, positive=True)
    with pytest.raises(ValueError, match="h must lie in"):
        bma(np.array([np.nan]), 0.9, positive=True)


def test_fuse_matches_closed_form():
    # Positive evidence a = .9·h: topic .5 → .45, cluster 1 → .9, variance 0 → 0;
    # combined positive belief P = 1 − (1−.45)(1−.9)(1−0) = 1 − .055 = .945.
    # Negative N = .9·.5 = .45. Conflict P·N = .42525, K = .57475;
    # news = P(1−N)/K = .945·.55/.57475 = .51975/.57475 = 0.904306...
    p = CEDSTParams()
    h = fuse(np.array([0.5]), np.array([1.0]), np.array([0.0]), np.array([0.5]), p)
    assert h == pytest.approx([0.51975 / 0.57475])


# --------------------------------------------------------------------------------- Otsu


def test_otsu_on_a_given_histogram():
    # Values 0, 0, .2, .9, 1 (n = 5, μ = .42); class 0 is ≤ t, class 1 is > t.
    # t = 0, .1: {0,0} | {.2,.9,1}: g = .4·.42² + .6·(.7−.42)² = .07056 + .04704 = .1176
    # t = .2 … .8: {0,0,.2} | {.9,1}: u0 = .0667, u1 = .95,
    #   g = .6·.35333² + .4·.53² = .07491 + .11236 = .18727  (the maximum)
    # t = .9: {…,.9} | {1}: u0 = .275, g = .8·.145² + .2·.58² = .01682 + .06728 = .0841
    # t = 1: one class, g = 0.  Best: the first of .2 … .8, i.e. t = .2.
    assert otsu_threshold(np.array([0.0, 0.0, 0.2, 0.9, 1.0])) == pytest.approx(0.2)


def test_otsu_custom_candidates_and_degenerate_inputs():
    # Candidates .5 and .95 only: t = .5 splits as above (g = .18727); t = .95 as t = .9
    # (g = .0841) → .5.
    assert otsu_threshold(np.array([0.0, 0.0, 0.2, 0.9, 1.0]), np.array([0.5, 0.95])) == 0.5
    # Constant or empty histogram: g = 0 for every t, the smallest t (0) wins.
    assert otsu_threshold(np.full(4, 0.7)) == 0.0
    assert otsu_threshold(np.zeros(0)) == 0.0


# ----------------------------------------------------------------------------- keywords


def test_segment_uses_jieba_only_for_cjk_text():
    # Latin text: \w+ matches, case-folded; CJK text: jieba words, punctuation dropped.
    assert segment(["Storm hits COAST, 2024."]) == [["storm", "hits", "coast", "2024"]]
    assert segment(["北京欢迎你。"]) == [["北京", "欢迎", "你"]]


def test_stop_words_come_from_the_package():
    assert {"the", "and"} <= stop_words("en")
    assert "的" in stop_words("zh")
    assert stop_words("none") == frozenset()
    with pytest.raises(ValueError, match="stop_languages"):
        stop_words("xx")


def test_textrank_hand_computed_path_graph():
    # "a b c": edges a–b, b–c (weight 1); strengths a 1, b 2, c 1. By symmetry a = c:
    #   b = .15 + .85·(a + c) = .15 + 1.7a,  a = .15 + .85·b/2 = .15 + .425b
    #   → a = .15 + .06375 + .7225a → a = .21375/.2775 = 0.770270, b = 1.459459.
    _, v_word, score = textrank(np.array([0, 0, 0]), np.array([0, 1, 2]))
    assert v_word.tolist() == [0, 1, 2]
    assert score == pytest.approx([0.770270, 1.459459, 0.770270], abs=1e-3)
    # A text with one word has no edge: its score is 1 − d = .15.
    assert textrank(np.array([0]), np.array([0]))[2] == pytest.approx([0.15])


def test_node_keywords_drop_stop_words_digits_and_single_letters():
    # "The 3 storms and a storm": "the", "and" (stop words), "3" (digits), "a" (one
    # letter) are dropped; left: storms, storm, linked once → equal scores, first seen wins.
    kw = node_keywords(["The 3 storms and a storm"], 1, stop_languages="en")
    assert kw.words_of(0) == ["storms"]
    assert kw.sizes.tolist() == [6]  # size(text) counts every word, stop words too


# ------------------------------------------------------------------------------- topics


def _keywords(sets: list[list[str]]) -> NodeKeywords:
    vocab: dict[str, int] = {}
    node, word = [], []
    for i, words in enumerate(sets):
        for w in words:
            node.append(i)
            word.append(vocab.setdefault(w, len(vocab)))
    return NodeKeywords(
        node=np.array(node, np.int64),
        word=np.array(word, np.int64),
        score=np.ones(len(node)),
        vocab=list(vocab),
        sizes=np.array([len(s) for s in sets], np.int64),
    )


def test_topics_are_maximal_compatibility_blocks_with_weights():
    # Keyword sets of 8 text nodes:
    #   0–2 {a,b,c}; 3 {a,b,d}; 4 {c,d}; 5–7 {d,e}.
    # relate: ab 4, ac 3, bc 3, ad 1, bd 1, cd 1, de 3.
    # γ = 2 (relate > 2): R = {ab, ac, bc, de} → blocks {a,b,c} (tw 4+3+3 = 10) and
    # {d,e} (tw 3).
    kw = _keywords([["a", "b", "c"]] * 3 + [["a", "b", "d"], ["c", "d"]] + [["d", "e"]] * 3)
    tp = topics(kw, gamma=2)
    blocks = sorted(sorted(kw.vocab[tp.words[j]] for j in np.flatnonzero(row)) for row in tp.members)
    assert blocks == [["a", "b", "c"], ["d", "e"]]
    weights = {tuple(sorted(kw.vocab[tp.words[j]] for j in np.flatnonzero(row))): w for row, w in zip(tp.members, tp.weight)}
    assert weights == {("a", "b", "c"): 10.0, ("d", "e"): 3.0}
    # h_topic (Eq. 7), a topic is the node's when it shares ≥ 2 keywords with it:
    # nodes 0–3 hold ≥ 2 of {a,b,c} → 10/10 = 1; node 4 {c,d} holds one word of each
    # topic → 0; nodes 5–7 hold {d,e} → 3/10 = .3.
    h = topic_feature(kw, tp, 8, overlap=2)
    assert h == pytest.approx([1, 1, 1, 1, 0, 0.3, 0.3, 0.3])
    # With overlap 1, node 4 gets the best topic it touches: {a,b,c} → 1.
    assert topic_feature(kw, tp, 8, overlap=1)[4] == pytest.approx(1.0)
    # γ = 3: only ab (4) survives → one topic {a,b}, tw 4; nodes 0–3 → 1, the rest 0.
    tp3 = topics(kw, gamma=3)
    assert tp3.weight.tolist() == [4.0]
    assert topic_feature(kw, tp3, 8, overlap=2) == pytest.approx([1, 1, 1, 1, 0, 0, 0, 0])


def test_topics_of_a_page_without_relation():
    # Every pair co-occurs once: nothing exceeds γ = 2, no topic, h_topic = 0 everywhere.
    kw = _keywords([["a", "b"], ["c", "d"]])
    tp = topics(kw, gamma=2)
    assert tp.weight.size == 0
    assert topic_feature(kw, tp, 2, overlap=2).tolist() == [0.0, 0.0]


# ------------------------------------------------------------------ non-content features

SMALL = (
    "<html><body><div><p>one two three</p><p>four five six seven eight nine</p></div>"
    "<ul><li><a href='/x'>home page</a></li><li><a href='/y'>news</a></li></ul>"
    "<p>tail <a href='/z'>link</a> end</p></body></html>"
)


def test_sibling_groups_cluster_variance_and_links_on_a_small_page():
    page = Page.from_html(SMALL)
    # Text nodes: 0 "one two three", 1 "four … nine", 2 "home page", 3 "news",
    # 4 "tail", 5 "link", 6 "end".
    assert page.texts == ["one two three", "four five six seven eight nine", "home page", "news", "tail", "link", "end"]
    groups = sibling_groups(page, "container")
    # Containers: div (0, 1), ul (2, 3: the li's parent), body (4–6: the p's parent).
    assert groups.tolist() == [0, 0, 1, 1, 2, 2, 2]
    # Literal DOM parents: p, p, a, a, p, a, p → nodes 4 and 6 share their <p>.
    parent = sibling_groups(page, "parent")
    assert parent[4] == parent[6] and len(set(parent.tolist())) == 6
    sizes = np.array([3, 6, 2, 1, 1, 1, 1])
    hc, hv = cluster_variance_features(sizes, groups)
    # Group words: div 9, ul 3, body 3 → h_cluster 1, 1, 1/3, 1/3, 1/3, 1/3, 1/3.
    assert hc == pytest.approx([1, 1, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3])
    # Variances: div (3,6) → 2.25; ul (2,1) → .25; body (1,1,1) → 0 → / 2.25.
    assert hv == pytest.approx([1, 1, 1 / 9, 1 / 9, 0, 0, 0])
    # Links per display block: "tail link end" has 1 of 3 words in <a> → 1/3 each;
    # the two list items are wholly links → 1; paragraphs of the div → 0.
    h_href = link_feature(sizes, page.in_link, page.blocks)
    assert h_href == pytest.approx([0, 0, 1, 1, 1 / 3, 1 / 3, 1 / 3])


# --------------------------------------------------------------------------- end to end

ENGLISH = """<!doctype html><html><head><title>Storm floods the coast | Daily Courier</title></head><body>
<div id="top"><ul class="nav"><li><a href="/">Home</a></li><li><a href="/world">World</a></li>
<li><a href="/politics">Politics</a></li><li><a href="/sport">Sport</a></li>
<li><a href="/weather">Weather</a></li><li><a href="/contact">Contact us</a></li></ul></div>
<div id="main"><div class="article"><h1>Storm floods the coast</h1>
<p>A powerful storm flooded the northern coast on Tuesday, forcing thousands of residents to leave their homes as rivers rose above the flood walls.</p>
<p>The storm brought heavy rain and strong winds. Emergency crews said the flood water reached the town centre within hours, and several coastal roads were closed.</p>
<p>Officials warned that the storm could return. "The coast has not seen a flood like this in forty years," the mayor said, adding that crews would work through the night.</p>
<p>Residents described the flood as sudden.</p>
<p>Forecasters expect the storm to weaken by Thursday, but they warned that rivers along the coast may keep rising, and that a second flood is possible if the rain continues over the weekend.</p>
<p>The regional government has opened shelters for families who lost their homes to the flood, and schools along the coast will stay closed until the water falls.</p>
</div>
<div class="related"><h3>Most read</h3><ul><li><a href="/a">Ten gadgets you need this summer</a></li>
<li><a href="/b">Celebrity chef opens new restaurant</a></li><li><a href="/c">Markets close higher on Friday</a></li>
<li><a href="/d">Local team wins cup final</a></li></ul></div></div>
<div class="footer"><p>Copyright 2024 Daily Courier. All rights reserved.</p>
<p><a href="/privacy">Privacy policy</a> | <a href="/terms">Terms of use</a></p></div>
</body></html>"""

CHINESE = """<!doctype html><html><head><meta charset="utf-8"><title>台风登陆广东沿海_新闻频道</title></head><body>
<div class="nav"><a href="/">首页</a> <a href="/news">新闻</a> <a href="/sports">体育</a> <a href="/finance">财经</a>
<a href="/tech">科技</a> <a href="/ent">娱乐</a></div>
<div class="content"><h1>台风登陆广东沿海</h1>
<p>今年第九号台风周二凌晨在广东沿海登陆，强风和暴雨导致多个城市停电，数万名居民被紧急转移。</p>
<p>气象部门表示，台风登陆时中心附近最大风力达到十四级，沿海地区的降雨量超过三百毫米，部分道路和农田被洪水淹没。</p>
<p>广东省政府启动防台风一级应急响应，沿海城市的学校停课，机场取消了数百个航班。</p>
<p>居民表示，台风来得很突然。</p>
<p>预计台风将在未来两天内向西移动并逐渐减弱，但气象部门提醒，沿海地区仍可能出现强降雨和洪水，居民应继续做好防范。</p>
<p>救援人员正在清理被台风吹倒的树木，广东电力部门表示，大部分停电地区有望在周四前恢复供电。</p>
</div>
<div class="hot"><h3>热门推荐</h3><ul><li><a href="/1">明星新剧今晚开播</a></li><li><a href="/2">股市收盘小幅上涨</a></li>
<li><a href="/3">新款手机发布会回顾</a></li><li><a href="/4">足球联赛最新积分榜</a></li></ul></div>
<div class="footer"><p>版权所有 © 2024 新闻网 保留所有权利</p><p><a href="/about">关于我们</a> | <a href="/contact">联系我们</a></p></div>
</body></html>"""


def _paragraphs(html: str) -> list[str]:
    page = Page.from_html(html)
    return [" ".join("".join(p.itertext()).split()) for p in page.root.iter("p") if p.getparent().get("class") in ("article", "content")]


@pytest.mark.parametrize(
    "html, boilerplate",
    [
        (ENGLISH, ["Home", "Contact us", "Most read", "Ten gadgets", "Celebrity chef", "Copyright", "Privacy policy"]),
        (CHINESE, ["首页", "娱乐", "热门推荐", "明星新剧", "股市收盘", "版权所有", "联系我们"]),
    ],
    ids=["english", "chinese"],
)
def test_end_to_end_keeps_the_article_and_drops_boilerplate(html, boilerplate):
    r = extract(html, method="cedst")
    assert r.method == "cedst"
    lines = r.body.split("\n")
    paragraphs = _paragraphs(html)
    assert len(paragraphs) == 6
    for paragraph in paragraphs:  # every article paragraph, each on its own line
        assert paragraph in lines
    for noise in boilerplate:
        assert noise not in r.body
    # The headline is both the title and the first line of the body.
    assert r.title == lines[0]
    # Fused beliefs lie in [0, 1] and the threshold is on the paper's grid.
    assert r.tau in [round(t / 10, 1) for t in range(11)]
    assert ((r.nodes.h >= 0) & (r.nodes.h <= 1)).all()


def test_end_to_end_chinese_topics_come_from_jieba_words():
    # jieba cuts 台风, 沿海, 广东 … as words; "台风" is a keyword of most paragraphs, so
    # the page has a topic and some article paragraphs carry h_topic = 1, the menu none.
    from scrapy_cepr.methods.cedst import histogram

    page = Page.from_html(CHINESE)
    _, _, features = histogram(page, CEDSTParams())
    texts = page.texts
    article = [i for i, t in enumerate(texts) if "台风" in t and i > 0]
    menu = [texts.index(t) for t in ("首页", "新闻", "体育")]
    assert features["topic"][article].max() == pytest.approx(1.0)
    assert features["topic"][menu].tolist() == [0.0, 0.0, 0.0]


def test_empty_page_gives_an_empty_body():
    r = extract("<html><head><title>Nothing</title></head><body></body></html>", method="cedst")
    assert r.body == "" and r.nodes is None


# ------------------------------------------------------------------------------- params


@pytest.mark.parametrize(
    "name, value",
    [
        ("gamma", -1),
        ("gamma", 2.5),
        ("top_keywords", 0),
        ("topic_overlap", 0),
        ("stop_languages", "xx"),
        ("stop_languages", 3),
        ("weight_topic", 1.5),
        ("weight_cluster", -0.1),
        ("weight_variance", float("nan")),
        ("weight_link", 1.0),
        ("siblings", "cousins"),
        ("radius", -1),
        ("lambda_", -1.0),
        ("edges", "wrap"),
    ],
)
def test_bad_params_raise_value_error_naming_the_param(name, value):
    with pytest.raises(ValueError, match=name):
        CEDSTParams(**{name: value})
    with pytest.raises(ValueError, match=name):
        extract(ENGLISH, method="cedst", **{name: value})


def test_paper_defaults():
    p = CEDSTParams()
    assert (p.gamma, p.radius, p.weight_link) == (2, 1, 0.9)
    assert CEDSTParams(weight_topic=1.0).weight_topic == 1.0  # positive weights may be 1
