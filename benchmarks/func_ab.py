#!/usr/bin/env python3
"""One function of two checkouts side by side inside the real pipeline: for a speed
change confined to one function, too small for ``speed_ab.py`` to see on a shared machine.

The function ``MODULE.FUNC`` of this checkout is wrapped wherever a module of the package
binds it; each call made by :func:`scrapy_cepr.extract` on the corpus then runs the
version of ``--before`` (the same module file loaded from that checkout, its relative
imports resolved in this one) and this checkout's, ``--repeat`` times each in turn (who
goes first alternates), in CPU time of the thread (``time.thread_time``), keeps the least
of each, checks that both return equal results (arrays equal in dtype, shape and values;
``--any-result``: not checked), and goes on with this checkout's result. The report gives the calls, the summed times and
their ratio.

Usage::

    python benchmarks/func_ab.py scrapy_cepr.core.page _microdata --before /tmp/speed-before \\
        [--corpus aeb|wcxb] [--every N] [--method cepr-typed] [--repeat 3]

The AEB corpus is read from ``$CEPR_BENCHMARK_DIR``, WCXB dev from ``$CEPR_WCXB_DIR``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from scrapy_cepr import extract
from scrapy_cepr.core.page import decode_html
from scrapy_cepr.evaluation import load_corpus, load_wcxb


def same(a: Any, b: Any) -> bool:
    """Equal results: arrays by dtype, shape and values (NaN equal to NaN), sequences and
    dataclasses item by item, anything else by ``==``."""
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape \
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if hasattr(a, "__dataclass_fields__"):
        return all(same(getattr(a, k), getattr(b, k)) for k in a.__dataclass_fields__)
    return bool(a == b)


def load_before(module: str, checkout: str) -> Any:
    """*module*'s file from *checkout*, loaded beside this checkout's package."""
    path = Path(checkout) / (module.replace(".", "/") + ".py")
    spec = importlib.util.spec_from_file_location(module + "_before", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    old = importlib.util.module_from_spec(spec)
    old.__package__ = module.rsplit(".", 1)[0]
    sys.modules[module + "_before"] = old
    spec.loader.exec_module(old)
    return old


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module")
    parser.add_argument("func")
    parser.add_argument("--before", required=True, help="checkout of the code before the change")
    parser.add_argument("--corpus", choices=("aeb", "wcxb"), default="aeb")
    parser.add_argument("--every", type=int, default=1, help="every N-th page (default 1)")
    parser.add_argument("--method", default="cepr-typed")
    parser.add_argument("--repeat", type=int, default=3, help="timings per call and version, the least kept")
    parser.add_argument("--any-result", action="store_true",
                        help="do not compare the results (a function whose result may differ by design, such as "
                             "check_bounds' upper bounds; an exception still stops the run)")
    args = parser.parse_args(argv)

    new_f = getattr(importlib.import_module(args.module), args.func)
    old_f = getattr(load_before(args.module, args.before), args.func)
    totals = {"before": 0.0, "after": 0.0}
    calls = 0
    clock = time.thread_time

    def both(*a: Any, **k: Any) -> Any:
        nonlocal calls
        calls += 1
        order = [("before", old_f), ("after", new_f)]
        if calls % 2 == 0:
            order.reverse()
        best = {"before": float("inf"), "after": float("inf")}
        results = {}
        for _ in range(args.repeat):
            for name, f in order:
                t0 = clock()
                results[name] = f(*a, **k)
                best[name] = min(best[name], clock() - t0)
        if not args.any_result and not same(results["before"], results["after"]):
            raise SystemExit(f"call {calls}: the two versions of {args.func} give different results")
        for name in totals:
            totals[name] += best[name]
        return results["after"]

    for mod in list(sys.modules.values()):
        if mod is not None and mod.__name__.startswith("scrapy_cepr") and getattr(mod, args.func, None) is new_f:
            setattr(mod, args.func, both)
    if args.corpus == "aeb":
        samples = list(load_corpus(os.environ["CEPR_BENCHMARK_DIR"]))
    else:
        samples = list(load_wcxb(os.environ["CEPR_WCXB_DIR"]))
    for sample in samples[:: args.every]:
        html = decode_html(sample.html) if isinstance(sample.html, bytes) else sample.html
        extract(html, url=sample.url, method=args.method)
    before, after = totals["before"], totals["after"]
    print(f"{args.module}.{args.func} ({args.corpus}, every {args.every}, {args.method}): {calls} calls, "
          f"before {before * 1e3:.2f} ms, after {after * 1e3:.2f} ms, after/before "
          f"{after / before if before else float('nan'):.3f} (CPU time, least of {args.repeat} per call, "
          f"summed); " + ("results not compared" if args.any_result else "equal results on every call"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
