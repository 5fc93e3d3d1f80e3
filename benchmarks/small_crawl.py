"""Wall time of a small crawl with the extension off, inline and with the process pool
(issue 10 item 10): the whole ``scrapy crawl newsspider`` command, start-up included, as
a user times it.

Sites: the demo site (``example_project/site``: 11 article pages) and a 33-page site
(the demo's 11 articles three times, under other names, from a generated index page), both
over ``file://``. Each (site, mode) is run ``--runs`` times (default 3), the modes
interleaved; the medians of the wall time and of the CPU time (user + system, the crawl
and its worker processes: much less sensitive than the wall time to other load on the
machine) are reported.

    python benchmarks/small_crawl.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "example_project"
DEMO = PROJECT / "site"

MODES = {
    "off": ["-s", "CEPR_ENABLED=False"],
    "inline": ["-s", "CEPR_EXECUTOR=inline"],
    "process": ["-s", "CEPR_EXECUTOR=process"],
}


def site_33(root: Path) -> Path:
    """A 33-page site in *root*: the demo's 11 articles, three copies each."""
    articles = root / "articles"
    articles.mkdir(parents=True)
    links = []
    for copy in range(3):
        for page in sorted((DEMO / "articles").glob("*.html")):
            name = f"{copy}-{page.name}"
            shutil.copy(page, articles / name)
            links.append(f'<li><a href="articles/{name}">{name}</a></li>')
    index = root / "index.html"
    index.write_text("<html><body><ul>" + "".join(links) + "</ul></body></html>", encoding="utf-8")
    return index


def crawl(start: Path, mode: str, out: Path, package_root: Path = ROOT) -> tuple[float, int, float]:
    """Wall seconds of one ``scrapy crawl``, the number of items it exported, and the CPU
    seconds (user + system) of the crawl and its worker processes; the scrapy_cepr package
    is imported from *package_root*."""
    path = os.pathsep.join(filter(None, [str(package_root), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "newsspider", "-a", f"start_urls={start.as_uri()}",
                           "-O", str(out), "-s", "LOG_LEVEL=WARNING", *MODES[mode.split()[0]]],
                          cwd=PROJECT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - begin
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return seconds, len(out.read_text(encoding="utf-8").splitlines()), cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout (e.g. main) whose package is also timed, "
                                                     "with the process executor, as 'process (before)'")
    args = parser.parse_args(argv)
    modes = {m: ROOT for m in MODES}
    if args.before:
        modes["process (before)"] = args.before.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        sites = {"demo (11 pages)": DEMO / "index.html", "33 pages": site_33(Path(tmp) / "site33")}
        print("| site | mode | items | median wall s | runs (wall s) | × inline | median CPU s | × inline (CPU) |")
        print("|---|---|---|---|---|---|---|---|")
        for label, start in sites.items():
            runs: dict[str, list[tuple[float, int, float]]] = {m: [] for m in modes}
            for _ in range(args.runs):  # interleaved, so that a load change hits every mode
                for mode, package in modes.items():
                    runs[mode].append(crawl(start, mode, Path(tmp) / "out.jsonl", package))
            medians = {m: statistics.median(s for s, _, _ in r) for m, r in runs.items()}
            cpus = {m: statistics.median(c for _, _, c in r) for m, r in runs.items()}
            for mode, r in runs.items():
                items = "/".join(map(str, sorted({n for _, n, _ in r})))
                print(f"| {label} | {mode} | {items} | {medians[mode]:.2f} | {', '.join(f'{s:.2f}' for s, _, _ in r)} | "
                      f"{medians[mode] / medians['inline']:.2f} | {cpus[mode]:.2f} | {cpus[mode] / cpus['inline']:.2f} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
