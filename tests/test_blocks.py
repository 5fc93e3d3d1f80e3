"""Display blocks and their features (scrapy_cepr.core.blocks) on small pages whose
answers are known."""

from __future__ import annotations

import numpy as np

from scrapy_cepr.core.blocks import (
    FEATURES,
    PAGE_TYPES,
    ancestor_ranges,
    block_features,
    block_ranges,
    dialog_nodes,
    with_page_type,
)
from scrapy_cepr.core.page import Page
from scrapy_cepr.core.region import DomTable
from scrapy_cepr.methods.cepr import CEPRParams, histogram

HTML = """<html><body>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<div id="story"><h1>Storm hits the coast</h1>
<div><p>The storm reached the coast on Monday night, and the wind tore roofs off, witnesses said.</p>
<p>Power was cut in three towns, and crews worked all night to restore it.</p></div>
<aside><p>Other stories</p></aside></div>
<footer><p>Contact us</p></footer>
</body></html>"""


def _features(html=HTML, keep=None):
    page = Page.from_html(html)
    h, hs = histogram(page, "setpr", CEPRParams())
    keep = np.zeros(len(page), bool) if keep is None else keep
    return page, block_features(page, h, hs, 1.0, keep, None)


def test_block_ranges():
    starts, ends = block_ranges(np.array([1, 1, 2, 4, 4, 4]))
    assert starts.tolist() == [0, 2, 3] and ends.tolist() == [2, 3, 6]
    starts, ends = block_ranges(np.zeros(0, np.int64))
    assert starts.size == 0 and ends.size == 0


def test_one_row_per_display_block():
    page, feats = _features()
    lines = [" ".join(page.texts[a:b]) for a, b in zip(feats.starts.tolist(), feats.ends.tolist())]
    assert lines == ["Home News", "Storm hits the coast",
                     "The storm reached the coast on Monday night, and the wind tore roofs off, witnesses said.",
                     "Power was cut in three towns, and crews worked all night to restore it.",
                     "Other stories", "Contact us"]
    assert feats.x.shape == (6, len(FEATURES)) and feats.x.dtype == np.float32
    assert np.isfinite(feats.x).all()


def test_feature_values():
    _, feats = _features()
    col = {name: feats.x[:, k] for k, name in enumerate(FEATURES)}
    assert col["link_density"].tolist()[:2] == [1.0, 0.0]
    assert col["in_nav"].tolist() == [1, 0, 0, 0, 0, 0]
    assert col["in_aside"].tolist() == [0, 0, 0, 0, 1, 0]
    assert col["in_footer"].tolist() == [0, 0, 0, 0, 0, 1]
    assert col["heading"].tolist() == [0, 1, 0, 0, 0, 0]
    assert col["in_p"].tolist() == [0, 0, 1, 1, 1, 1]
    assert col["ends_sentence"].tolist() == [0, 0, 1, 1, 0, 0]
    # The two paragraphs share a tag path: 2 nodes on it.
    assert np.expm1(col["log_path_nodes"][2]) == np.float32(2.0)
    assert col["position"][0] == 0.0 and np.all(np.diff(col["position"]) > 0)
    # Neighbours: the previous block's characters.
    assert col["prev_log_chars"][3] == col["log_chars"][2]
    assert col["next_log_chars"][-1] == 0.0


def test_region_chain():
    page = Page.from_html(HTML)
    keep = np.array(["storm reached" in t or "Power was cut" in t for t in page.texts])
    table = DomTable(page)
    starts, ends = block_ranges(page.blocks)
    block_of = np.repeat(np.arange(starts.size), ends - starts)
    chain = ancestor_ranges(table, keep, block_of)
    # The <div> holding the two paragraphs, then div#story, body, html.
    assert chain.tolist()[:3] == [[2, 4], [1, 5], [0, 6]]
    assert ancestor_ranges(table, np.zeros(len(page), bool), block_of).shape == (0, 2)
    h, hs = histogram(page, "setpr", CEPRParams())
    feats = block_features(page, h, hs, 1.0, keep, None, regions=chain)
    level = feats.x[:, FEATURES.index("region_level")]
    assert level.tolist() == [2, 1, 0, 0, 1, 2]
    assert feats.x[:, FEATURES.index("article_keep")].tolist() == [0, 0, 1, 1, 0, 0]


def test_page_type_columns():
    _, feats = _features()
    x = with_page_type(feats.x, np.eye(len(PAGE_TYPES))[2])
    assert x.shape == (6, len(FEATURES) + 7)
    assert x[:, len(FEATURES) + 2].tolist() == [1.0] * 6


def test_empty_page():
    page = Page.from_html("<html><body></body></html>")
    feats = block_features(page, np.zeros(0), np.zeros(0), 0.0, np.zeros(0, bool), None)
    assert len(feats) == 0 and feats.x.shape == (0, len(FEATURES))


def test_repeats_of_the_longest_text_node():
    cards = "".join(f"<li><a href='/p{i}'>Lamp model {i}</a><p>Sponsored</p></li>" for i in range(4))
    _, feats = _features(f"<html><body><h1>Desk lamp</h1><p>A steel desk lamp with a warm light.</p><ul>{cards}</ul>"
                         "</body></html>")
    repeats = np.expm1(feats.x[:, FEATURES.index("log_repeats")]).round().tolist()
    # The heading and the description occur once; each card title once; "Sponsored" 4 times.
    assert repeats == [0, 0, 0, 3, 0, 3, 0, 3, 0, 3]


PRODUCT = """<html><body>
<div role="dialog" aria-label="Cookies"><p>We use cookies to improve your experience.</p>
<button>Accept all</button></div>Free shipping over $50
<h1>Oak desk</h1><p>A solid oak desk with two drawers, 120 cm wide.</p>
<section role="alertdialog"><p>Item added to your cart.</p></section>
<dialog open><form><label>Email</label></form><div role="dialog"><p>Sign up for news</p></div></dialog>
<p>Delivered in five days.</p>
</body></html>"""


def test_dialog_nodes():
    page = Page.from_html(PRODUCT)
    inside = dict(zip(page.texts, dialog_nodes(page).tolist()))
    # WAI-ARIA dialog and alertdialog roles, HTML's dialog element (and a dialog inside it);
    # the dialog's tail ("Free shipping") is displayed after it, outside.
    assert inside == {
        "We use cookies to improve your experience.": True, "Accept all": True, "Free shipping over $50": False,
        "Oak desk": False, "A solid oak desk with two drawers, 120 cm wide.": False,
        "Item added to your cart.": True, "Email": True, "Sign up for news": True,
        "Delivered in five days.": False,
    }


def test_dialog_nodes_read_on_the_tree():
    # The parser lower-cases tag names and resolves character references: a dialog written
    # <DIALOG>, or role="&#100;ialog", is found although the source never spells "dialog".
    page = Page.from_html("<html><body><DIALOG open><p>Join us</p></DIALOG><p>Story text.</p>"
                          '<div role="&#100;ialog"><p>Accept</p></div><div aria-modal="false"><p>Menu</p></div>'
                          "</body></html>")
    assert dict(zip(page.texts, dialog_nodes(page).tolist())) == {
        "Join us": True, "Story text.": False, "Accept": True, "Menu": False,
    }


def test_dialog_feature_column():
    _, feats = _features(PRODUCT)
    assert feats.x[:, FEATURES.index("in_dialog")].tolist() == [1, 1, 0, 0, 0, 1, 1, 1, 0]
    page, feats = _features()  # no dialog on the page
    assert not dialog_nodes(page).any() and not feats.x[:, FEATURES.index("in_dialog")].any()


def test_text_without_spaces_reads_as_its_latin_version():
    # A Chinese paragraph and a Thai one (no spaces between words) against an English
    # one of about the same content: characters and words on one scale, not one "word" for
    # the whole paragraph as the spaces would count it. The Chinese line ends with a
    # full-width full stop and a closing corner bracket, the next with a full-width colon.
    zh = "市议会周一召开特别会议，就港口防波堤的修复方案进行表决。经过三个小时的讨论，议员们以七票对五票通过了这项计划。」"
    th = "สภาเมืองได้จัดประชุมวาระพิเศษเมื่อวันจันทร์เพื่อลงมติเกี่ยวกับแผนการซ่อมแซมกำแพงกันคลื่นของท่าเรือ"
    en = ("The city council held a special meeting on Monday to vote on the plan to repair the harbour wall. "
          "After three hours of debate, the members approved it by seven votes to five.")
    html = f"<html><body><p>{en}</p><p>{zh}</p><p>{th}</p><p>相关新闻：</p></body></html>"
    _, feats = _features(html)
    col = {name: feats.x[:, k] for k, name in enumerate(FEATURES)}
    words = np.expm1(col["log_words"].astype(np.float64))
    chars = np.expm1(col["log_chars"].astype(np.float64))
    assert round(words[0]) == len(en.split()) == 33
    assert round(chars[1]) == len(zh) + 2 * (len(zh) - 5)  # 5 marks, 51 ideographs
    assert 0.5 < words[1] / words[0] < 1.5 and 0.5 < chars[1] / chars[0] < 1.5
    assert np.isclose(words[2], 1 + len(th) / 6, rtol=1e-5) and 10 < words[2] < 30
    assert col["ends_sentence"].tolist() == [1.0, 1.0, 0.0, 1.0]


def test_sentences_end_on_the_marks_of_every_script():
    """A paragraph ends a sentence on its script's own mark (Unicode's Sentence_Terminal):
    the Devanagari danda and double danda, the Urdu full stop, the Arabic question mark,
    the Myanmar and Ethiopic full stops, the Armenian full stop, the Khmer khan; a
    closing quote after the mark is read past. A line of links or a dateline ends on
    none."""
    endings = ["नई लाइन खुल गई।", "विशेषज्ञों का मानना है कि इसमें समय लगेगा॥", "نئی لائن کھل گئی۔",
               "هل ستخف الزحمة؟", "လိုင်းသစ် ဖွင့်လှစ်ခဲ့သည်။", "አዲሱ መስመር ተከፈተ።", "Նոր գիծը բացվեց։",
               "ខ្សែថ្មីបានបើក។", "«नई लाइन खुल गई।»"]
    html = "<html><body>" + "".join(f"<p>{t}</p>" for t in endings) + \
        "<p><a href='/a'>होम</a> <a href='/b'>देश</a></p><p>नई दिल्ली, 4 नवंबर 2019</p></body></html>"
    _, feats = _features(html)
    col = feats.x[:, FEATURES.index("ends_sentence")]
    assert col.tolist() == [1.0] * len(endings) + [0.0, 0.0]
