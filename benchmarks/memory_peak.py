"""Peak memory (RSS) of one extraction worker against page size and element count
(issue 18, item 11).

Each measurement runs in a fresh Python subprocess (as a process worker is): it imports
the extraction core, extracts a tiny page to warm up, records its peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``), builds one synthetic page, extracts it
with the default method (``scrapy_cepr.extract``, CEPR-Article) and reports the growth
of the peak and the seconds taken. Pages:

* ``tiny``: elements of one short word each (``<i>w</i>`` under ``<div>``s of 20), the
  most elements per byte;
* ``text``: paragraphs of about 1 KB of text each (few elements, much text);
* ``attrs``: elements with two 40-byte attributes each (at 10 MB: 90,000 elements and
  180,000 attributes, just within both bounds).

A page above the pre-parse bounds (``scrapy_cepr.core.parse.check_bounds``) is refused
before the parse: its row shows the error and the memory it cost.

    python benchmarks/memory_peak.py                  # 0.8 (the element bound), 1, 2, 5, 10 MB
    python benchmarks/memory_peak.py --sizes 1 2 --kinds tiny
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

_CHILD = r"""
import json, resource, sys, time
from scrapy_cepr import extract
from scrapy_cepr.core.errors import ExtractionError
from scrapy_cepr.core.parse import count_markup
kind, size = sys.argv[1], int(float(sys.argv[2]) * 1e6)
extract("<html><body><p>Warm up, one sentence here.</p></body></html>")
def page():
    if kind == "tiny":
        block = "<div>" + "<i>w</i>" * 20 + "</div>\n"
    elif kind == "attrs":
        block = "<div>" + ('<i a="' + "v" * 40 + '" b="' + "w" * 40 + '">w</i>') * 20 + "</div>\n"
    else:
        block = "<p>" + ("Some words of a story, told at length. " * 26) + "</p>\n"
    head = "<html><head><title>T</title></head><body><h1>A title</h1>"
    return head + block * max(1, (size - len(head)) // len(block)) + "</body></html>"
html = page()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
error = None
try:
    extract(html)
except ExtractionError as exc:
    error = f"{type(exc).__name__}: {exc}"
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
elements = count_markup(html.encode())[0]  # after the peak was read
print(json.dumps({"bytes": len(html.encode()), "elements": elements, "base_mb": base / 1024,
                  "peak_mb": peak / 1024, "seconds": seconds, "error": error}))
"""


def measure(kind: str, size_mb: float) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, kind, str(size_mb)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.8, 1, 2, 5, 10], help="page sizes in MB")
    parser.add_argument("--kinds", nargs="+", default=["tiny", "text", "attrs"], choices=["tiny", "text", "attrs"])
    args = parser.parse_args()
    print("| page | size (MB) | elements | peak RSS (MB) | growth (MB) | seconds | result |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for kind in args.kinds:
        for size in args.sizes:
            r = measure(kind, size)
            print(f"| {kind} | {r['bytes'] / 1e6:.1f} | {r['elements']:,} | {r['peak_mb']:.0f} | "
                  f"{r['peak_mb'] - r['base_mb']:.0f} | {r['seconds']:.2f} | {r['error'] or 'extracted'} |", flush=True)


if __name__ == "__main__":
    main()
