"""benchmarks/snippets.py on a two-page split in WCXB's layout, written here, whose
``with``/``without`` snippets and our outputs are known: the micro scores, the
whitespace-normalised score and the diagnosis of each miss."""

from __future__ import annotations

import json

import pytest
from pages import load_benchmark, write_wcxb_split

STORY = " ".join(f"The harbour wall was repaired in week {i} after the storm damaged the pier." for i in range(12))
PAGES = {
    # with: found; a typographic apostrophe the annotation spells in ASCII (quotes); a
    # sentence split by <br> that the annotation joins (whitespace); one not on the page
    # (recall). without: the nav (not extracted) and the byline (extracted).
    "0001": ("article", "news.example",
             "<html><head><title>Harbour</title></head><body><nav><a href='/'>Home</a> <a href='/a'>About</a></nav>"
             f"<article><h1>Harbour repaired</h1><p class='by'>By the desk</p><p>{STORY}</p>"
             "<p>The mayor\u2019s office paid for it.</p><p>Work ends<br>next week.</p></article>"
             "</body></html>",
             ["repaired in week 3 after", "The mayor's office paid", "Work ends next week.", "Not on the page."],
             ["Home About", "By the desk"]),
}




@pytest.fixture()
def split(tmp_path):
    write_wcxb_split(tmp_path, {
        fid: (ptype, domain, html, {"main_content": STORY, "title": "", "with": must, "without": must_not})
        for fid, (ptype, domain, html, must, must_not) in PAGES.items()
    })
    return tmp_path


def test_scores_and_diagnosis(split, tmp_path, capsys):
    bench = load_benchmark("snippets")
    out = tmp_path / "s.json"
    assert bench.main(["--corpus", str(split), "--methods", "cepr-typed", "--peers", "", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| extractor | F | P | R | F ws-normalised | article (1) |" in table
    data = json.loads(out.read_text())
    s = data["results"]["cepr-typed"]["all"]
    assert (s["tp"], s["fn"], s["fp"], s["tn"]) == (1, 3, 1, 1)
    assert data["results"]["cepr-typed"]["normalised"]["tp"] == 2  # the <br> line joined by a space
    assert data["misses"]["cepr-typed"] == {"quotes": 1, "whitespace": 1, "recall": 1}
    assert sum(data["leaks"]["cepr-typed"].values()) == 1


def test_miss_kinds():
    bench = load_benchmark("snippets")
    text = "The harbour , as said.\nWork ends\nnext week. It is so\u00adft."
    words = f" {' '.join(bench._WORD.findall(text))} "
    assert bench.miss_kind("harbour, as said", text, words) == "spacing"
    assert bench.miss_kind("Work ends next week.", text, words) == "whitespace"
    assert bench.miss_kind("is soft.", text, words) == "recall"  # the soft hyphen splits the word
    assert bench.miss_kind("is so\u00adft!", text + " is soft!", f"{words}is soft ") == "invisible"
    assert bench.miss_kind("ends \u2013 next", text, words) == "other"
