#!/usr/bin/env python3
"""Fuzz :func:`scrapy_cepr.extract` with hypothesis, for each method.

Inputs are drawn from a grammar of HTML fragments (tags that libxml2 handles specially:
head/body/html end tags, tables, unknown and namespaced elements, raw-text elements,
comments, CDATA, processing instructions, entities, control characters, lone
surrogates, deep nesting), as ``str`` or as bytes in several encodings with random
``encoding=`` labels and ``<meta charset>`` labels, and plain random bytes.

A failure is any exception other than the documented ones (:class:`~scrapy_cepr.ExtractionError`
and its subclasses: NotHTMLError, ParseError; ValueError and TypeError are for bad
parameters and types, which the harness never passes), or a page that takes more than
``--max-seconds`` (2 s). Failures are collected, not shrunk, so one run reports all of
them; their inputs are written to ``--out`` for replay.

Usage (one command; a few minutes per method; ``pip install -e ".[fuzz]"``)::

    python benchmarks/fuzz_extract.py --seconds 120            # every method, 2 min each
    python benchmarks/fuzz_extract.py --methods setpr,cetr --seconds 30

Exit status 0 when no failure was found, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_cepr import METHOD_NAMES, ExtractionError, extract

TAGS = [
    "html", "head", "body", "title", "meta", "div", "p", "span", "a", "b", "font", "i", "table", "tr", "td",
    "th", "tbody", "ul", "li", "h1", "h2", "h3", "br", "img", "script", "style", "noscript", "iframe",
    "template", "textarea", "xmp", "plaintext", "select", "option", "form", "svg", "math", "frameset",
    "fb:like", "x-widget", "o:p", "pre", "article", "section", "nav", "footer", "aside", "blockquote",
]
WORDS = [
    "The", "council", "voted", "on", "Tuesday,", "to", "rebuild", "the", "bridge.", "新闻", "市议会周二投票，",
    "café", "«Zürich»", "—", "¿Qué?", "Łódź", "ok;", "a", "\u200b", "\xa0", "\u3000", "\ufeff",
]
ODDITIES = [
    "\x00", "\x01", "\x1b", "\x7f", "\x85", "\x9b", "\ufffd", "\ud800", "\udfff", "\ud83d\ude00", "\U0001F600",
    "&amp;", "&#0;", "&#xD800;", "&#99999999;", "&nbsp;", "&bogus;", "<", ">", "&", "</", "<!--", "-->",
    "<![CDATA[x]]>", "<?php echo 1 ?>", '<?xml version="1.0" encoding="utf-8"?>', "<!DOCTYPE html>",
    "</html>", "</body>", "</head>", "<html>", "<body>", "<head>", "\r\n", "\t", " ", "\n",
]
LABELS = [None, "utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "gbk", "gb18030", "big5", "shift_jis",
          "latin-1", "windows-1252", "koi8-r", "iso-2022-jp", "uu", "rot13", "undefined", "base64", "idna",
          "punycode", "unicode_escape", "utf-7", "x-user-defined", "bogus", "", "\x00", "utf-8\x00"]


def _tag(draw_name: str, attrs: str, closing: bool) -> str:
    return f"</{draw_name}>" if closing else f"<{draw_name}{attrs}>"


tag = st.builds(
    _tag,
    st.sampled_from(TAGS),
    st.sampled_from(["", " class=x", ' id="a"', " href='/x'", ' charset="gbk"', ' style="a:b', " a=1 b"]),
    st.booleans(),
)
token = st.one_of(tag, st.sampled_from(WORDS), st.sampled_from(ODDITIES), st.text(max_size=12))
fragment = st.lists(token, max_size=200).map("".join)


def _nest(opener: str, levels: int, inner: str, close: bool) -> str:
    closer = "</" + opener[1:].split(">")[0].split()[0] + ">"
    return opener * levels + inner + (closer * levels if close else "")


deep = st.builds(
    _nest,
    st.sampled_from(["<div>", "<font size=2>", "<b>", "<table><tr><td>", "<x-y>", "<ul><li>", "<span class=a>"]),
    st.integers(0, 6000),
    fragment,
    st.booleans(),
)
document = st.one_of(fragment, deep, st.builds(lambda a, b: f"<html><head>{a}</head><body>{b}</body></html>", fragment, fragment))


def _encode(text: str, codec: str) -> bytes:
    return text.encode(codec, "surrogatepass" if codec.startswith("utf") else "replace")


as_bytes = st.builds(_encode, document, st.sampled_from(["utf-8", "utf-16-le", "utf-16", "gbk", "latin-1", "cp1252", "utf-32"]))
meta_labelled = st.builds(
    lambda label, body: f'<meta charset="{label}">{body}'.encode("utf-8", "surrogatepass"),
    st.sampled_from([x for x in LABELS if x]),
    document,
)
page = st.one_of(document, as_bytes, meta_labelled, st.binary(max_size=8192))
encoding = st.sampled_from(LABELS)


def fuzz_method(method: str, seconds: float, max_seconds: float, out: Path) -> dict:
    """Run batches of hypothesis examples on *method* for about *seconds*."""
    times: list[float] = []
    outcomes = {"ok": 0, "empty": 0, "documented error": 0}
    failures: list[dict] = []
    slow: list[dict] = []

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(page, encoding)
    def run(html, enc):
        start = time.perf_counter()
        try:
            result = extract(html, method=method, encoding=enc)
            outcomes["ok" if result.body else "empty"] += 1
        except ExtractionError:
            outcomes["documented error"] += 1
        except Exception as exc:  # noqa: BLE001 - every other exception is a finding
            failures.append(_record(out, method, "exception", html, enc, traceback.format_exc()))
            print(f"  {method}: {type(exc).__name__}: {exc}", file=sys.stderr)
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        if elapsed > max_seconds:
            slow.append(_record(out, method, f"slow {elapsed:.2f} s", html, enc, ""))
            print(f"  {method}: slow page, {elapsed:.2f} s", file=sys.stderr)

    # Warm up untimed: a method's first call loads its lazy resources once (CEDST's jieba
    # dictionary takes about 2 s), which is not the cost of any page.
    extract("<html><body><h1>新闻 warm-up</h1><p>市议会周二投票, the council voted.</p></body></html>", method=method)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run()
    return {
        "method": method,
        "examples": len(times),
        "median_ms": statistics.median(times) * 1000 if times else 0.0,
        "max_s": max(times) if times else 0.0,
        **outcomes,
        "failures": len(failures),
        "slow": len(slow),
    }


def _record(out: Path, method: str, kind: str, html, enc, detail: str) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    n = len(list(out.glob("case-*.json")))
    case = {
        "method": method,
        "kind": kind,
        "encoding": enc,
        "html_type": type(html).__name__,
        "html": html.hex() if isinstance(html, bytes) else html.encode("utf-8", "surrogatepass").hex(),
        "detail": detail,
    }
    (out / f"case-{n:04d}.json").write_text(json.dumps(case, indent=1))
    return case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", help=f"comma list (default: all of {', '.join(METHOD_NAMES)})")
    parser.add_argument("--seconds", type=float, default=120.0, help="fuzzing time per method (default 120)")
    parser.add_argument("--max-seconds", type=float, default=2.0, help="slowest allowed page (default 2)")
    parser.add_argument("--out", default="fuzz-findings", help="directory for failing inputs")
    args = parser.parse_args(argv)
    methods = args.methods.split(",") if args.methods else list(METHOD_NAMES)
    rows = []
    for method in methods:
        print(f"fuzzing {method} for {args.seconds:.0f} s ...", file=sys.stderr)
        rows.append(fuzz_method(method, args.seconds, args.max_seconds, Path(args.out)))
    print(f"| method | examples | ok | empty | documented error | other exceptions | > {args.max_seconds:g} s | median ms | max s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['method']} | {r['examples']} | {r['ok']} | {r['empty']} | {r['documented error']} | "
            f"{r['failures']} | {r['slow']} | {r['median_ms']:.1f} | {r['max_s']:.2f} |"
        )
    return 1 if any(r["failures"] or r["slow"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
