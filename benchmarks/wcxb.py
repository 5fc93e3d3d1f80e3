#!/usr/bin/env python3
"""Quality and speed on WCXB's dev pages (the Web Content eXtraction Benchmark, Foley 2026,
CC-BY-4.0): 1,358 pages crawled in 2025, seven page types.

One run over the split. Per page, back to back and always in this order (no rotation, which
flatters the ratios): ``lxml.html.fromstring(html)`` (the parse, timed, not scored), then
each of our methods (``scrapy_cepr.extract(html, url=url, method=…).body``), then the peers
``trafilatura`` (``trafilatura.extract(html, url=url)``) and ``readability``
(readability-lxml ``Document(html).summary()``, then its text, as ``benchmarks/compare.py``
does: its extractor helpers are reused). Each page is decoded to ``str`` once, before any
timing.

The metric is WCXB's word-level F1 (:func:`scrapy_cepr.evaluation.word_f1`), macro-averaged
over the pages of each page type and over all pages. ``--check-evaluate`` writes each
extractor's predictions as ``{file_id: text}`` JSON, runs the benchmark's own
``evaluate.py --per-type`` on it and states whether its overall and per-type F1 agree with
ours to 3 decimals (pages left out by ``--limit``/``--types`` are empty predictions on both
sides, as ``evaluate.py`` scores the whole split).

Usage::

    python benchmarks/wcxb.py [--corpus DIR] [--methods a,b] [--peers trafilatura,readability]
        [--limit N] [--types article,forum] [--json FILE] [--per-page FILE] [--check-evaluate]
        [--plot PNG [--plot-row 'LABEL={"all": F1, "article": F1, ...}'] [--plot-label NAME=LABEL]]
    python benchmarks/wcxb.py --from-json FILE --plot PNG   # the chart of an earlier run

``--plot`` draws the per-type F1 of the run (or of ``--from-json``) as grouped bars
(matplotlib, ``pip install -e ".[plot]"``); ``--plot-row`` adds a row measured elsewhere
(e.g. the cross-validated one of ``benchmarks/train_blocks.py``), labelled as given.

The corpus is ``--corpus``, else ``$CEPR_WCXB_DIR``, else ``../shared/data/wcxb-dev`` beside
the repository. Progress goes to stderr every 100 pages; the Markdown table to stdout.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from itertools import chain, islice
from pathlib import Path
from typing import Any

import lxml.html

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import OURS, _html_to_text, write_per_page  # noqa: E402

from scrapy_cepr import extract, get_method  # noqa: E402
from scrapy_cepr.core.page import decode_html  # noqa: E402
from scrapy_cepr.evaluation import PAGE_TYPES, WcxbSample, load_wcxb, word_f1  # noqa: E402

logger = logging.getLogger("wcxb")

#: Environment variable naming the WCXB split directory.
WCXB_ENV = "CEPR_WCXB_DIR"
DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "wcxb-dev"
PEERS = ("trafilatura", "readability")

#: An extractor: (html str, url or None) -> main text.
Extractor = Callable[[str, "str | None"], str]


def build_extractors(methods: list[str], peers: list[str]) -> tuple[dict[str, Extractor], list[str]]:
    """``{name: function}`` in report order (our *methods*, then *peers*) and notes on the
    ones skipped because they cannot be imported.

    :raises SystemExit: an unknown method or peer name.
    """
    out: dict[str, Extractor] = {}
    notes: list[str] = []
    for name in methods:
        if name not in OURS:
            raise SystemExit(f"wcxb.py: error: unknown method {name!r}; ours: {', '.join(sorted(OURS))}")
        try:
            get_method(name)
        except ImportError as exc:
            notes.append(f"{name}: skipped, cannot be imported ({exc})")
            continue
        out[name] = lambda html, url, _m=name: extract(html, url=url, method=_m).body
    for name in peers:
        if name not in PEERS:
            raise SystemExit(f"wcxb.py: error: unknown peer {name!r}; known: {', '.join(PEERS)}")
    if "trafilatura" in peers:
        try:
            import trafilatura

            out["trafilatura"] = lambda html, url: trafilatura.extract(html, url=url) or ""
            notes.append(f"trafilatura {trafilatura.__version__}: trafilatura.extract(html, url=url), defaults")
        except ImportError:
            notes.append("trafilatura: skipped, not installed (pip install trafilatura)")
    if "readability" in peers:
        try:
            from readability import Document

            to_text, to_text_name = _html_to_text()
            out["readability"] = lambda html, url: to_text(Document(html).summary())
            notes.append(f"readability: readability-lxml Document(html).summary(), text by {to_text_name}")
        except ImportError:
            notes.append("readability: skipped, not installed (pip install readability-lxml)")
    return out, notes


def pages(corpus: Path, types: set[str] | None, limit: int | None) -> Iterator[WcxbSample]:
    """The split's pages in id order, only *types* (all when None), at most *limit*."""
    it = (s for s in load_wcxb(corpus) if types is None or s.page_type in types)
    return islice(it, limit) if limit is not None else it


def run(samples: Iterator[WcxbSample], extractors: dict[str, Extractor], warmup: int = 5,
        progress_every: int = 100) -> dict[str, Any]:
    """Time and score every extractor on every page (parse first, then the extractors in
    order, back to back). Returns ``{"pages": [per-page dicts], "times": {name: [ms]},
    "failures": {name: n}, "predictions": {name: {id: text}}}``; each per-page dict has
    ``id``, ``type``, ``domain``, ``url`` and ``f1`` (``{name: word F1}``)."""
    names = list(extractors)
    times: dict[str, list[float]] = {n: [] for n in ["parse", *names]}
    failures = dict.fromkeys(names, 0)
    predictions: dict[str, dict[str, str]] = {n: {} for n in names}
    rows: list[dict[str, Any]] = []

    head = list(islice(samples, warmup))
    for sample in head:  # untimed warm-up: imports, caches, models
        html = decode_html(sample.html) if isinstance(sample.html, bytes) else sample.html
        for name, fn in extractors.items():
            try:
                fn(html, sample.url)
            except Exception as exc:  # noqa: BLE001 - scored as empty in the timed pass
                logger.info("warm-up: %s failed on %s: %s", name, sample.id, exc)
    start = time.perf_counter()
    for i, sample in enumerate(chain(head, samples), 1):
        html = decode_html(sample.html) if isinstance(sample.html, bytes) else sample.html
        gc.collect()
        t0 = time.perf_counter()
        lxml.html.fromstring(html)
        times["parse"].append((time.perf_counter() - t0) * 1000.0)
        scores: dict[str, float] = {}
        for name, fn in extractors.items():
            t0 = time.perf_counter()
            try:
                text = fn(html, sample.url) or ""
            except Exception as exc:  # noqa: BLE001 - a failing extractor scores an empty text
                text = ""
                failures[name] += 1
                logger.info("%s failed on %s: %s", name, sample.id, exc)
            times[name].append((time.perf_counter() - t0) * 1000.0)
            predictions[name][sample.id] = text
            scores[name] = word_f1(text, sample.gold_body)[2]
        rows.append({"id": sample.id, "type": sample.page_type, "domain": sample.domain, "url": sample.url,
                     "f1": scores})
        if progress_every and i % progress_every == 0:
            means = ", ".join(f"{n} {statistics.fmean(r['f1'][n] for r in rows):.3f}" for n in names)
            print(f"wcxb.py: {i} pages, {time.perf_counter() - start:.0f} s; F1 so far: {means}",
                  file=sys.stderr, flush=True)
    return {"pages": rows, "times": times, "failures": failures, "predictions": predictions}


def summarise(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per extractor: macro word F1 over all pages and per page type, median ms per page,
    the ratio of that median to the parse's median (``x_parse``), the median of each page's
    own ratio (``x_parse_per_page``), and failures."""
    rows, times = out["pages"], out["times"]
    parse = times["parse"]
    parse_med = statistics.median(parse) if parse else float("nan")
    result: dict[str, dict[str, Any]] = {}
    for name in out["predictions"]:
        f1 = [r["f1"][name] for r in rows]
        by_type = {t: statistics.fmean(r["f1"][name] for r in rows if r["type"] == t)
                   for t in PAGE_TYPES if any(r["type"] == t for r in rows)}
        med = statistics.median(times[name]) if times[name] else float("nan")
        result[name] = {
            "f1": statistics.fmean(f1) if f1 else float("nan"),
            "f1_by_type": by_type,
            "median_ms": med,
            "x_parse": med / parse_med,
            "x_parse_per_page": statistics.median(t / p for t, p in zip(times[name], parse) if p > 0),
            "failures": out["failures"][name],
            "ours": name in OURS,
        }
    result["parse"] = {"median_ms": parse_med, "ours": False}
    return result


def markdown(summary: dict[str, dict[str, Any]], rows: list[dict[str, Any]]) -> str:
    """The summary as a Markdown table: one row per extractor (ours in bold), columns all,
    the seven page types (pages per type in the header), median ms/page, × parse median."""
    counts = {t: sum(1 for r in rows if r["type"] == t) for t in PAGE_TYPES}
    types = [t for t in PAGE_TYPES if counts[t]]
    head = ["extractor", f"all ({len(rows)})", *(f"{t} ({counts[t]})" for t in types), "median ms/page",
            "× parse median"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    parse = summary["parse"]
    lines.append("| lxml parse only | " + " | ".join(["—"] * (1 + len(types))) + f" | {parse['median_ms']:.1f} | 1.00 |")
    for name, r in summary.items():
        if name == "parse":
            continue
        label = f"**{name}**" if r["ours"] else name
        cells = [f"{r['f1']:.3f}", *(f"{r['f1_by_type'][t]:.3f}" for t in types),
                 f"{r['median_ms']:.1f}", f"{r['x_parse']:.2f}"]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


_OVERALL = re.compile(r"^Overall \((\d+) pages\):.*?^\s*F1:\s+([0-9.]+)", re.M | re.S)
_TYPE_ROW = re.compile(r"^\s+(article|forum|product|collection|listing|documentation|service)\s+(\d+)\s+([0-9.]+)\s",
                       re.M)


def check_evaluate(corpus: Path, predictions: dict[str, dict[str, str]]) -> tuple[bool, list[str]]:
    """Score each extractor's predictions with the benchmark's ``evaluate.py`` and with
    :func:`word_f1` over the whole split (a page without a prediction is ``""`` on both
    sides). Returns (all agree to 3 decimals, report lines).

    :raises FileNotFoundError: no ``evaluate.py`` in *corpus*.
    :raises RuntimeError: ``evaluate.py`` failed or printed nothing we can read.
    """
    script = corpus / "evaluate.py"
    if not script.is_file():
        raise FileNotFoundError(f"{script}: the benchmark's evaluate.py is missing")
    gold = [(s.id, s.page_type, s.gold_body) for s in load_wcxb(corpus)]
    ok, lines = True, []
    with tempfile.TemporaryDirectory(prefix="wcxb-check-") as tmp:
        for name, preds in predictions.items():
            path = Path(tmp) / f"{name}.json"
            path.write_text(json.dumps(preds), encoding="utf-8")
            proc = subprocess.run([sys.executable, str(script), "--split", "dev", "--results", str(path), "--per-type"],
                                  capture_output=True, text=True, timeout=600, check=False)
            m = _OVERALL.search(proc.stdout)
            if proc.returncode != 0 or m is None:
                raise RuntimeError(f"evaluate.py failed for {name} (exit {proc.returncode}): "
                                   f"{(proc.stderr or proc.stdout)[-500:]}")
            theirs = {"all": float(m.group(2))}
            theirs.update({t: float(f) for t, _, f in _TYPE_ROW.findall(proc.stdout)})
            scores = [(t, word_f1(preds.get(pid, ""), g)[2]) for pid, t, g in gold]
            mine = {"all": statistics.fmean(f for _, f in scores)}
            mine.update({t: statistics.fmean(f for tt, f in scores if tt == t) for t in theirs if t != "all"})
            n_theirs, n_mine = int(m.group(1)), len(scores)
            diffs = {k: abs(mine[k] - theirs[k]) for k in theirs}
            agree = n_theirs == n_mine and all(d <= 0.0005 for d in diffs.values())
            ok &= agree
            cells = ", ".join(f"{k} {mine[k]:.3f}/{theirs[k]:.3f}" for k in theirs)
            lines.append(f"{name}: {'agree' if agree else 'DISAGREE'} to 3 decimals over {n_mine}/{n_theirs} pages "
                         f"(ours/evaluate.py: {cells})")
    return ok, lines


def plot(summary: dict[str, dict[str, Any]], rows: list[dict[str, Any]], path: str,
         extra: dict[str, dict[str, float]] | None = None, labels: dict[str, str] | None = None) -> None:
    """Grouped bars of word F1 per page type (and all pages), one bar per extractor of
    *summary* (named by *labels* when given there) and per row of *extra*
    (``{label: {"all" or type: F1}}``, drawn first), written to *path* (PNG, Agg backend).

    :raises SystemExit: matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise SystemExit(f"wcxb.py: --plot needs matplotlib (pip install -e \".[plot]\"): {exc}") from exc
    counts = {t: sum(1 for r in rows if r["type"] == t) for t in PAGE_TYPES}
    groups = ["all", *(t for t in PAGE_TYPES if counts[t])]
    series = {label: values for label, values in (extra or {}).items()}
    for name, r in summary.items():
        if name != "parse":
            series[(labels or {}).get(name, name)] = {"all": r["f1"], **r["f1_by_type"]}
    fig, ax = plt.subplots(figsize=(10, 4.8), dpi=110)
    width = 0.8 / max(len(series), 1)
    for k, (label, values) in enumerate(series.items()):
        xs = [g + (k - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, [values.get(t, float("nan")) for t in groups], width, label=label)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{t}\n({len(rows) if t == 'all' else counts[t]})" for t in groups])
    ax.set_ylim(0, 1)
    ax.set_ylabel("word F1 (WCXB, macro over pages)")
    ax.set_title(f"WCXB dev, {len(rows)} pages, per page type")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=min(len(series), 3), loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=None,
                        help=f"WCXB split directory (default: ${WCXB_ENV}, else {DEFAULT_CORPUS})")
    parser.add_argument("--methods", default="",
                        help="our methods to run besides cepr-article, comma-separated (e.g. setpr,nce)")
    parser.add_argument("--peers", default=",".join(PEERS), help="peers, comma-separated ('' for none)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N pages (after --types)")
    parser.add_argument("--types", default=None, help=f"only these page types, comma-separated ({', '.join(PAGE_TYPES)})")
    parser.add_argument("--warmup", type=int, default=5, help="pages run untimed first, then timed (default 5)")
    parser.add_argument("--json", metavar="FILE", help="write the summary and per-page F1s as JSON")
    parser.add_argument("--per-page", metavar="FILE", help="write each page's F1 per extractor (TSV, worst of ours first)")
    parser.add_argument("--check-evaluate", action="store_true",
                        help="check our scores against the benchmark's evaluate.py (to 3 decimals)")
    parser.add_argument("--plot", metavar="PNG", help="draw the per-type F1 as a bar chart (matplotlib)")
    parser.add_argument("--plot-row", action="append", default=[], metavar="LABEL=JSON",
                        help='an extra row for the chart: LABEL={"all": F1, "article": F1, ...}')
    parser.add_argument("--plot-label", action="append", default=[], metavar="NAME=LABEL",
                        help="the chart's legend label of an extractor of the run")
    parser.add_argument("--from-json", metavar="FILE", help="with --plot: chart an earlier run's --json, run nothing")
    args = parser.parse_args(argv)
    extra = {}
    for spec in args.plot_row:
        label, _, values = spec.partition("=")
        try:
            extra[label] = {k: float(v) for k, v in json.loads(values).items()}
        except (ValueError, AttributeError) as exc:
            parser.error(f"--plot-row {spec!r}: not LABEL={{JSON object of F1 values}} ({exc})")
    labels = dict(spec.partition("=")[::2] for spec in args.plot_label)
    if args.from_json:
        if not args.plot:
            parser.error("--from-json needs --plot")
        saved = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        plot(saved["results"], saved["pages"], args.plot, extra, labels)
        return 0
    logging.basicConfig(level=logging.WARNING, format="wcxb.py: %(message)s")
    logging.getLogger("trafilatura").setLevel(logging.ERROR)  # "discarding data: <url>" on every empty result

    corpus = args.corpus or Path(os.environ.get(WCXB_ENV) or DEFAULT_CORPUS)
    if not (corpus / "metadata.json").is_file():
        parser.error(f"{corpus}: not a WCXB split directory (no metadata.json); pass --corpus or set ${WCXB_ENV}")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be >= 1")
    types = None
    if args.types:
        types = {t.strip() for t in args.types.split(",") if t.strip()}
        unknown = sorted(types - set(PAGE_TYPES))
        if unknown:
            parser.error(f"unknown page type {unknown[0]!r}; known: {', '.join(PAGE_TYPES)}")
    methods = list(dict.fromkeys(["cepr-article", *(m.strip() for m in args.methods.split(",") if m.strip())]))
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    extractors, notes = build_extractors(methods, peers)

    start = time.perf_counter()
    out = run(pages(corpus, types, args.limit), extractors, warmup=args.warmup)
    elapsed = time.perf_counter() - start
    if not out["pages"]:
        parser.error("no page selected (check --types and --limit)")
    summary = summarise(out)
    print(f"corpus: {corpus} ({len(out['pages'])} pages), {elapsed:.0f} s in all. "
          "Word-level F1 (WCXB), macro over pages; times back to back per page, parse first.\n")
    print(markdown(summary, out["pages"]))
    print()
    for note in notes:
        print(f"- {note}")
    for name, n in out["failures"].items():
        if n:
            print(f"- {name}: {n} pages failed (scored as empty)")
    ok = True
    if args.check_evaluate:
        ok, lines = check_evaluate(corpus, out["predictions"])
        print("\nevaluate.py check:")
        for line in lines:
            print(f"- {line}")
    if args.json:
        meta = {"corpus": str(corpus), "pages": len(out["pages"]), "types": sorted(types) if types else None,
                "limit": args.limit, "notes": notes, "python": sys.version.split()[0], "seconds": round(elapsed, 1)}
        Path(args.json).write_text(json.dumps({"meta": meta, "results": summary, "pages": out["pages"]}, indent=1) + "\n",
                                   encoding="utf-8")
    if args.per_page:
        write_per_page(args.per_page, out["pages"], ["id", "type", "domain"], list(extractors))
    if args.plot:
        plot(summary, out["pages"], args.plot, extra, labels)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
