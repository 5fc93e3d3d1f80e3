"""benchmarks/wcxb.py on a three-page split in WCXB's layout, written here: the table, the
JSON and per-page reports, the filters, and the check against the benchmark's own
``evaluate.py`` (taken from the shared WCXB copy when it is there; that part skips
otherwise)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from pages import load_benchmark, write_wcxb_split

import scrapy_cepr
from scrapy_cepr.evaluation import word_f1

SHARED_EVALUATE = Path(os.environ.get("CEPR_WCXB_DIR", Path(__file__).resolve().parents[2] / "shared" / "data" / "wcxb-dev")) / "evaluate.py"

STORY = " ".join(f"The harbour wall was repaired in week {i} after the storm damaged the pier." for i in range(12))
PAGES = {
    "0001": ("article", "news.example", f"<html><head><title>Harbour</title></head><body><nav><a href='/'>Home</a> "
             f"<a href='/a'>About</a></nav><article><h1>Harbour repaired</h1><p>{STORY}</p></article>"
             "<footer>Copyright footer text</footer></body></html>", f"Harbour repaired {STORY}"),
    "0002": ("forum", "forum.example", "<html><body><div><p>First post: the ferry is late again today.</p>"
             "<p>Reply: it was on time yesterday.</p></div></body></html>",
             "First post: the ferry is late again today. Reply: it was on time yesterday."),
    "0003": ("article", "blog.example", "<html><body><p>Short note.</p></body></html>", "A gold text the page lacks."),
}




@pytest.fixture()
def split(tmp_path):
    write_wcxb_split(tmp_path, {
        fid: (ptype, domain, html, {"main_content": gold, "title": "", "with": [], "without": []})
        for fid, (ptype, domain, html, gold) in PAGES.items()
    })
    return tmp_path


def test_scores_tables_and_reports(split, tmp_path, capsys):
    bench = load_benchmark("wcxb")
    out_json, out_tsv = tmp_path / "r.json", tmp_path / "p.tsv"
    assert bench.main(["--corpus", str(split), "--peers", "", "--warmup", "1", "--json", str(out_json),
                       "--per-page", str(out_tsv)]) == 0
    table = capsys.readouterr().out
    assert "| extractor | all (3) | article (2) | forum (1) | median ms/page | × parse median |" in table
    data = json.loads(out_json.read_text())
    expected = {fid: word_f1(scrapy_cepr.extract(html, url=f"https://{d}/{fid}").body, gold)[2]
                for fid, (_, d, html, gold) in PAGES.items()}
    got = {p["id"]: p["f1"]["cepr-article"] for p in data["pages"]}
    assert got == pytest.approx(expected)
    assert data["results"]["cepr-article"]["f1"] == pytest.approx(sum(expected.values()) / 3)
    assert data["results"]["cepr-article"]["f1_by_type"]["forum"] == pytest.approx(expected["0002"])
    lines = out_tsv.read_text().splitlines()
    assert lines[0].split("\t") == ["id", "type", "domain", "cepr-article", "worst_ours"]
    worst = [float(line.split("\t")[-1]) for line in lines[1:]]
    assert worst == sorted(worst) and lines[1].split("\t")[0] == "0003"  # the page that lacks its gold text


def test_filters(split, capsys):
    bench = load_benchmark("wcxb")
    assert bench.main(["--corpus", str(split), "--peers", "", "--types", "article", "--limit", "1"]) == 0
    assert "| extractor | all (1) | article (1) |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        bench.main(["--corpus", str(split), "--types", "blog"])


@pytest.mark.skipif(not SHARED_EVALUATE.is_file(), reason=f"needs WCXB's evaluate.py at {SHARED_EVALUATE} (set CEPR_WCXB_DIR)")
def test_check_against_the_benchmarks_evaluate(split, capsys):
    bench = load_benchmark("wcxb")
    shutil.copy(SHARED_EVALUATE, split / "evaluate.py")  # in the temporary split only
    assert bench.main(["--corpus", str(split), "--peers", "", "--check-evaluate"]) == 0
    out = capsys.readouterr().out
    assert "cepr-article: agree to 3 decimals over 3/3 pages" in out


def test_plot_of_a_run_and_of_its_json(split, tmp_path):
    pytest.importorskip("matplotlib", reason='the chart needs matplotlib: pip install -e ".[plot]"')
    bench = load_benchmark("wcxb")
    out_json, png = tmp_path / "r.json", tmp_path / "types.png"
    row = 'cross-validated={"all": 0.5, "article": 0.6, "forum": 0.4}'
    assert bench.main(["--corpus", str(split), "--peers", "", "--warmup", "1", "--json", str(out_json),
                       "--plot", str(png), "--plot-row", row]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    again = tmp_path / "again.png"
    assert bench.main(["--from-json", str(out_json), "--plot", str(again)]) == 0
    assert again.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit):
        bench.main(["--from-json", str(out_json)])  # nothing to do without --plot
    with pytest.raises(SystemExit):
        bench.main(["--from-json", str(out_json), "--plot", str(again), "--plot-row", "bad=[1]"])
