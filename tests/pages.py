"""Sample pages written for the tests, shared by the test modules (and offered as
fixtures by ``conftest.py``). Never copied from a corpus."""

from __future__ import annotations

#: A news article: navigation (with a link to a PDF, which a crawl follows), a headline,
#: three story paragraphs and a footer.
#:
#: ``nav``: "Home", "World", "Report" (html.body.div.a: short, no punctuation);
#: ``h1``: the headline; ``div.story``: three ``<p>`` with punctuation; ``footer``: links.
STORM_PAGE = """<html><head><title>Storm hits coast | Daily News</title></head><body>
<div class="nav"><a href="/">Home</a> <a href="/world">World</a> <a href="/doc.pdf">Report</a></div>
<h1>Storm hits coast</h1>
<div class="story">
<p>The storm, which formed on Monday, reached the coast early on Tuesday. Thousands of homes lost power; roads were closed.</p>
<p>Officials said, in a statement, that the damage was severe. Schools will stay closed until Friday, they added.</p>
<p>Residents were told to stay indoors, keep away from windows, and follow the news.</p>
</div>
<div class="footer"><a href="/about">About us</a> <a href="/contact">Contact</a></div>
</body></html>"""

#: The title and body every method should find in :data:`STORM_PAGE`.
STORM_TITLE = "Storm hits coast"
STORM_BODY = (
    "The storm, which formed on Monday, reached the coast early on Tuesday. Thousands of homes lost power; "
    "roads were closed.\n"
    "Officials said, in a statement, that the damage was severe. Schools will stay closed until Friday, they added.\n"
    "Residents were told to stay indoors, keep away from windows, and follow the news."
)


def write_wcxb_split(root, pages: dict) -> None:
    """Write a WCXB-style dev split under *root* (a ``pathlib.Path``) for the benchmark
    tests: *pages* maps a file id to ``(page_type, domain, html, ground_truth)``, the
    ground truth a dict (``main_content``, ``title``, ``with``, ``without`` …); the URL is
    ``https://<domain>/<id>``."""
    import gzip
    import json

    files = {}
    (root / "dev" / "html").mkdir(parents=True, exist_ok=True)
    (root / "dev" / "ground-truth").mkdir(parents=True, exist_ok=True)
    for fid, (ptype, domain, html, truth) in pages.items():
        (root / "dev" / "html" / f"{fid}.html.gz").write_bytes(gzip.compress(html.encode("utf-8")))
        gt = {"url": f"https://{domain}/{fid}", "ground_truth": truth, "_internal": {"page_type": {"primary": ptype}}}
        (root / "dev" / "ground-truth" / f"{fid}.json").write_text(json.dumps(gt), encoding="utf-8")
        files[fid] = {"split": "dev", "page_type": ptype, "domain": domain}
    (root / "metadata.json").write_text(json.dumps({"files": files}), encoding="utf-8")


def page_lines(page) -> list[str]:
    """The lines of a :class:`~scrapy_cepr.core.page.Page`: its text nodes joined by
    display block (one space between them), in order."""
    out: dict[int, list[str]] = {}
    for text, block in zip(page.texts, page.blocks.tolist()):
        out.setdefault(block, []).append(text)
    return [" ".join(texts) for texts in out.values()]


def load_benchmark(name: str):
    """The module of the script ``benchmarks/<name>.py`` (its directory on ``sys.path``
    while it loads, since the scripts import their sibling ``compare.py``)."""
    import importlib.util
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    spec = importlib.util.spec_from_file_location(f"{name}_bench", bench / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(bench))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(bench))
    return module
