"""The ``scrapy-cepr`` command line, on the hand-made fixture page and tiny corpora."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scrapy_cepr.cli import main, parse_value
from scrapy_cepr.evaluation import corpus_digest, load_corpus

FIXTURE = Path(__file__).parent / "fixtures" / "article_basic.html"
TITLE = "Harbour bridge reopens after repairs"
# The five paragraphs of div.text in the fixture, one per line (a <p> is a display block):
# what any good extractor must return, and nothing of the menu, sidebar or footer.
ARTICLE = [
    (
        "The harbour bridge reopened on Monday morning, three weeks after a barge struck one of its piers. "
        "Engineers replaced two bearings, patched the deck and tested the structure with loaded trucks."
    ),
    (
        "Traffic was light at first, but by eight o'clock the queues were back; commuters said they were "
        "glad, if a little nervous, to cross again."
    ),
    (
        '"We checked every weld twice," said the chief engineer, Maria Costa. "The bridge is as strong as '
        'it was on the day it opened, and probably stronger."'
    ),
    (
        "The city council will ask the shipping company to pay for the repairs, which cost about four "
        "million euros. A hearing is set for next month, and the company has not yet commented."
    ),
    (
        "Ferry services, which ran extra crossings during the closure, return to their normal timetable on "
        "Wednesday."
    ),
]
FAKE_PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n\x00\x01\x02"


def run(capsys, *argv):
    """main(argv) -> (status, stdout, stderr); argparse's SystemExit gives its code."""
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


# ----------------------------------------------------------------------- extract


def test_extract_prints_title_then_body(capsys):
    status, out, err = run(capsys, "extract", str(FIXTURE), "--method", "setpr")
    assert status == 0, err
    assert out == TITLE + "\n\n" + "\n".join(ARTICLE) + "\n"


@pytest.mark.parametrize("method", ["tpr", "etpr", "setpr"])
def test_extract_json(capsys, method):
    status, out, _ = run(capsys, "extract", str(FIXTURE), "--method", method, "--json")
    assert status == 0
    data = json.loads(out)
    assert data["title"] == TITLE
    assert data["body"].split("\n") == ARTICLE
    assert data["method"] == method
    # The paper's α per variant (Sec. 5.2), filled in when not given.
    assert data["params"]["alpha"] == {"tpr": 1.7, "etpr": 0.7, "setpr": 0.8}[method]
    assert "nodes" not in data


def test_extract_nodes_records(capsys):
    status, out, _ = run(capsys, "extract", str(FIXTURE), "--method", "setpr", "--nodes")
    assert status == 0
    nodes = json.loads(out)["nodes"]
    # Text nodes by hand: 5 menu links, h1, byline, 5 paragraphs, h3, 3 sidebar links,
    # 3 footer links, copyright = 20; the 5 paragraphs (indices 7..11) are kept.
    assert len(nodes) == 20
    assert [i for i, n in enumerate(nodes) if n["keep"]] == [7, 8, 9, 10, 11]
    assert nodes[5]["text"] == TITLE and nodes[5]["path"] == "html.body.div.div.h1"
    assert nodes[0] == {
        "text": "Home",
        "path": "html.body.div.ul.li.a",
        "txt_num": 4,
        "punc_num": 0,
        # ETPR of the menu path: 0 punctuation marks -> 0, and its neighbours are 0 too.
        "h": 0.0,
        "h_smoothed": 0.0,
        "keep": False,
    }


def test_extract_method_params(capsys):
    # --alpha 0 keeps every node with H' > 0: under SETPR the menu (H' = 0) stays out but
    # the byline (node 6) and "Most read" (node 12), smoothed up by the paragraphs, come in.
    status, out, _ = run(
        capsys,
        "extract",
        str(FIXTURE),
        "--method",
        "setpr",
        "--json",
        "--nodes",
        "--alpha",
        "0",
        "--lambda",
        "2",
        "--param",
        "radius=2",
        "--param",
        "edges=pad",
    )
    assert status == 0
    data = json.loads(out)
    assert data["params"] == {"alpha": 0.0, "lambda_": 2.0, "radius": 2, "edges": "pad"}
    kept = [i for i, n in enumerate(data["nodes"]) if n["keep"]]
    assert 6 in kept and 12 in kept and 0 not in kept


def test_param_name_lambda_alias(capsys):
    status, out, _ = run(capsys, "extract", str(FIXTURE), "--json", "--param", "lambda=0")
    assert status == 0
    assert json.loads(out)["params"]["lambda_"] == 0.0


def test_parse_value():
    assert [parse_value(v) for v in ("2", "-1", "0.25", "keep")] == [2, -1, 0.25, "keep"]


def test_not_html_is_one_line_exit_1(capsys, tmp_path):
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(FAKE_PDF)
    status, out, err = run(capsys, "extract", str(pdf))
    assert status == 1
    assert out == ""
    assert err.count("\n") == 1 and "not HTML" in err and str(pdf) in err
    assert "Traceback" not in err


def test_missing_file_is_one_line_exit_1(capsys, tmp_path):
    status, _, err = run(capsys, "extract", str(tmp_path / "nope.html"))
    assert status == 1
    assert err.count("\n") == 1 and "nope.html" in err and "cannot read" in err


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--alpha", "-1"], "alpha"),
        (["--alpha", "abc"], "alpha"),
        (["--radius", "-3"], "radius"),
        (["--param", "edges=wrap"], "edges"),
        (["--param", "bogus=1"], "bogus"),
        (["--param", "noequals"], "NAME=VALUE"),
        (["--method", "nosuch"], "method"),
    ],
)
def test_bad_params_exit_2_naming_them(capsys, argv, named):
    status, out, err = run(capsys, "extract", str(FIXTURE), *argv)
    assert status == 2
    assert out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith("scrapy-cepr extract: error:") and named in last


@pytest.mark.parametrize("command", [[], ["extract"], ["evaluate"], ["plot"]])
def test_help_for_every_command(capsys, command):
    status, out, _ = run(capsys, *command, "--help")
    assert status == 0
    assert out.startswith("usage: scrapy-cepr")


def test_console_script_reads_stdin():
    exe = shutil.which("scrapy-cepr")
    argv = [exe] if exe else [sys.executable, "-m", "scrapy_cepr.cli"]
    proc = subprocess.run(
        [*argv, "extract", "-", "--method", "setpr", "--json"],
        input=FIXTURE.read_bytes(),
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["body"].split("\n") == ARTICLE


def test_extract_from_local_url(capsys):
    handler = functools.partial(_QuietHandler, directory=str(FIXTURE.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/{FIXTURE.name}"
        status, out, err = run(capsys, "extract", url, "--method", "setpr", "--json")
        assert status == 0, err
        data = json.loads(out)
        assert data["url"] == url and data["body"].split("\n") == ARTICLE
        status, _, err = run(capsys, "extract", url.replace(FIXTURE.name, "missing.html"))
        assert status == 1 and err.count("\n") == 1 and "cannot fetch" in err
    finally:
        server.shutdown()
        server.server_close()


def test_extract_wang2009_json(capsys):
    # Issue 18 (10): --method wang2009 --json passed formats/metadata to a to_dict that
    # did not take them (TypeError, "internal error").
    from browser import require_browser

    require_browser()
    status, out, err = run(capsys, "extract", str(FIXTURE), "--method", "wang2009", "--json", "--with-metadata",
                           "--body-formats", "html,markdown")
    assert status == 0, err
    data = json.loads(out)
    assert data["method"] == "wang2009" and data["body"]
    assert {"body_html", "body_markdown", "metadata"} <= set(data)


def test_stdin_and_devices_are_read_up_to_a_cap(capsys, monkeypatch):
    # Issue 18 (10): /dev/zero and stdin were read without a size cap (the CLI never ended,
    # its memory grew without bound). Past --max-bytes (default MAX_INPUT_BYTES): one line,
    # exit 1, after reading at most the cap plus one byte.
    import io

    from scrapy_cepr import cli

    class Endless(io.RawIOBase):
        read_bytes = 0

        def readable(self):
            return True

        def readinto(self, buffer):
            n = len(buffer)
            buffer[:n] = b"<" * n
            Endless.read_bytes += n
            return n

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    status, out, err = run(capsys, "extract", "-", "--max-bytes", "1000")
    assert status == 1 and out == "" and err.count("\n") == 1
    assert "larger than 1000 bytes" in err and "--max-bytes" in err
    assert Endless.read_bytes < 1000 + 2 * io.DEFAULT_BUFFER_SIZE
    assert cli.MAX_INPUT_BYTES == 10_000_000  # as CEPR_MAX_HTML_BYTES
    if Path("/dev/zero").exists():
        status, out, err = run(capsys, "extract", "/dev/zero", "--max-bytes", "1000")
        assert status == 1 and "/dev/zero" in err and "larger than 1000 bytes" in err


@pytest.mark.parametrize("source", ["file:///etc/hostname", "ftp://example.com/a.html", "FILE:///x.html"])
def test_non_http_urls_are_refused_exit_2(capsys, source):
    # Issue 18 (10): file:// and ftp:// URLs were taken for file names ("cannot read: No
    # such file"); only http(s) URLs are fetched, a local file is given by its path.
    status, out, err = run(capsys, "extract", source)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "only http:// and https:// URLs" in err and source in err


@pytest.mark.parametrize("source", ["http://[::1", "http://exa mple.com/", "http://a:b:c/", "https://"])
def test_bad_url_is_one_line_exit_2(capsys, source):
    # Issue 18 (10): these gave "internal error: ValueError/InvalidURL".
    status, out, err = run(capsys, "extract", source)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "internal error" not in err and "invalid URL" in err


def test_bad_output_dir_is_one_line_exit_2(capsys, tmp_path):
    # Issue 18 (10): a file, or a path under a file, gave "internal error: FileExistsError".
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    for bad in (blocker, blocker / "sub"):
        status, out, err = run(capsys, "extract", str(FIXTURE), "--output-dir", str(bad))
        assert status == 2 and err.count("\n") == 1, err
        assert "internal error" not in err and "--output-dir" in err and str(bad) in err


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


# ----------------------------------------------------------------------- evaluate

GOLD_2 = "the gold text of a page we cannot read"


@pytest.fixture()
def tiny_corpus(tmp_path) -> Path:
    """Two pages: the fixture with its five paragraphs as gold, and a PDF-like page."""
    path = tmp_path / "tiny.jsonl"
    records = [
        {"id": "bridge", "html": FIXTURE.read_text(encoding="utf-8"), "gold_body": "\n".join(ARTICLE)},
        {"id": "pdf", "html": FAKE_PDF.decode("latin-1"), "gold_body": GOLD_2},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_evaluate_json(capsys, tiny_corpus):
    status, out, err = run(
        capsys, "evaluate", str(tiny_corpus), "--json", "--method", "tpr", "--method", "etpr,setpr"
    )
    assert status == 0, err
    data = json.loads(out)
    assert data["pages"] == 2 and list(data["methods"]) == ["tpr", "etpr", "setpr"]
    for name, res in data["methods"].items():
        # Page "bridge": every variant extracts exactly the gold -> benchmark tp = 1, p = r = 1,
        # paper P = R = F = score = 1. Page "pdf" raises NotHTMLError -> empty output, 1 failure:
        # counts (0, 0, 1) -> no precision, recall 0; paper scores all 0.
        # Benchmark: P = 1 (one page), R = (1 + 0)/2 = .5, F1 = 2·.5/1.5 = 2/3, accuracy 1/2.
        # Paper (macro over 2 pages): .5 each.
        b = res["benchmark"]
        assert (b["precision"], b["recall"], b["f1"], b["accuracy"]) == pytest.approx((1, 0.5, 2 / 3, 0.5)), (
            name
        )
        assert res["paper"] == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5, "score": 0.5})
        assert res["failures"] == 1
        assert res["median_ms"] > 0
        assert res["params"]["alpha"] == {"tpr": 1.7, "etpr": 0.7, "setpr": 0.8}[name]


def test_evaluate_table_and_default_methods(capsys, tiny_corpus):
    status, out, _ = run(capsys, "evaluate", str(tiny_corpus), "--quiet")
    assert status == 0
    assert "(2 pages)" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "method" not in line]
    assert [r.split("|")[1].strip() for r in rows] == ["tpr", "etpr", "setpr"]
    # bench P, R, F1, accuracy, paper P, R, F, score (hand values as in test_evaluate_json).
    assert all(
        r.split("|")[2:10] == [" 1.0000 ", " 0.5000 ", " 0.6667 ", " 0.5000 "] + [" 0.5000 "] * 4
        for r in rows
    )
    assert all(r.split("|")[11].strip() == "1" for r in rows)


def test_evaluate_method_params_change_the_result(capsys, tiny_corpus):
    # α = 0 under TPR keeps every node of the fixture (all H > 0): the menu, byline … join the
    # body, so benchmark precision on page "bridge" drops below 1, while recall stays 1.
    status, out, _ = run(capsys, "evaluate", str(tiny_corpus), "--json", "--method", "tpr", "--alpha", "0")
    assert status == 0
    b = json.loads(out)["methods"]["tpr"]["benchmark"]
    assert b["precision"] < 1.0 and b["recall"] == pytest.approx(0.5)


def test_evaluate_write_floor(capsys, tiny_corpus, tmp_path):
    floor = tmp_path / "floor.json"
    status, _, err = run(
        capsys, "evaluate", str(tiny_corpus), "--method", "setpr", "--write-floor", str(floor)
    )
    assert status == 0, err
    data = json.loads(floor.read_text())
    assert data["corpus_digest"] == corpus_digest(load_corpus(tiny_corpus))
    assert data["pages"] == 2
    assert data["methods"] == {"setpr": {"f1": 0.6667, "precision": 1.0, "recall": 0.5}}
    # Pinning non-default parameters is refused.
    status, _, err = run(capsys, "evaluate", str(tiny_corpus), "--alpha", "1", "--write-floor", str(floor))
    assert status == 2 and "--write-floor" in err


def test_evaluate_bad_input(capsys, tmp_path):
    status, _, err = run(capsys, "evaluate", str(tmp_path / "none"))
    assert status == 1 and err.count("\n") == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"html": "<p>x</p>"}\n', encoding="utf-8")
    status, _, err = run(capsys, "evaluate", str(bad))
    assert status == 1 and "gold_body" in err and err.count("\n") == 1
    status, _, err = run(capsys, "evaluate", str(bad), "--method", "tpr,nosuch")
    assert status == 2 and "nosuch" in err


# ----------------------------------------------------------------------- plot


def test_plot_writes_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "page.png"
    status, _, err = run(capsys, "plot", str(FIXTURE), "-o", str(out))
    assert status == 0, err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000


def test_plot_without_matplotlib_is_a_clear_error(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    status, _, err = run(capsys, "plot", str(FIXTURE), "-o", str(tmp_path / "x.png"))
    assert status == 1
    assert err.count("\n") == 1 and "matplotlib" in err and "pip install" in err


def test_plot_not_html(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(FAKE_PDF)
    status, _, err = run(capsys, "plot", str(pdf), "-o", str(tmp_path / "x.png"))
    assert status == 1 and "not HTML" in err


def test_evaluate_per_page_lists_the_worst_pages(capsys, tiny_corpus):
    # Page "pdf" (not HTML: nothing extracted, F1 0) is the worst and shows its gold lines
    # as missed (-); page "bridge" is extracted exactly by cepr-article (F1 1, nothing
    # kept wrongly or missed).
    status, out, err = run(capsys, "evaluate", str(tiny_corpus), "--method", "cepr-article", "--per-page", "2", "-q")
    assert status == 0, err
    report = out.split("cepr-article: 2 page(s) with the lowest F1")[1]
    pdf, bridge = report.index("\npdf "), report.index("\nbridge ")
    assert pdf < bridge  # worst first
    assert "F1 0.000" in report[pdf:bridge] and "\n  - " in report[pdf:bridge]
    assert "F1 1.000  P 1.000  R 1.000" in report[bridge:] and "\n  + " not in report[bridge:]
    status, _, err = run(capsys, "evaluate", str(tiny_corpus), "--per-page", "-1")
    assert status == 2 and "--per-page" in err
