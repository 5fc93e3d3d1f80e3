"""Screenshot of a ``wang2009`` styled article beside its original page, both taken with
the same system Chromium (docs/wang2009_styled.png).

Usage (the demo site served over HTTP, and a crawl of it with ``renderedspider``)::

    cd example_project
    python -m http.server 8765 --bind 127.0.0.1 --directory site &
    scrapy crawl renderedspider -a start_urls=http://127.0.0.1:8765/index.html -O rendered.jsonl
    python ../benchmarks/screenshot_wang2009.py rendered.jsonl harbour-storm.html -o ../docs/wang2009_styled.png

Left: the original page at 1024×768 (full page, cut at 1,400 px). Right: the item's
``body_styled_html`` as a page of its own (its images load from their absolute URLs).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrapy_cepr.render import CHROMIUM_ARGS, VIEWPORT, find_chromium  # noqa: E402

MAX_HEIGHT = 1400


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("items", help="JSON lines exported by renderedspider")
    ap.add_argument("page", help="the end of the page URL to show, e.g. harbour-storm.html")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    item = next(json.loads(line) for line in open(args.items, encoding="utf-8") if json.loads(line)["url"].endswith(args.page))
    from playwright.sync_api import sync_playwright

    shots = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), headless=True, args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]})
        page.goto(item["url"], wait_until="load")
        shots.append(page.screenshot(full_page=True))
        doc = f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:16px">{item["body_styled_html"]}</body></html>'
        page.set_content(doc, wait_until="load")
        shots.append(page.screenshot(full_page=True))
        browser.close()
    images = [Image.open(io.BytesIO(s)).convert("RGB") for s in shots]
    images = [im.crop((0, 0, im.width, min(im.height, MAX_HEIGHT))) for im in images]
    gap, label = 24, 28
    out = Image.new("RGB", (sum(im.width for im in images) + gap, max(im.height for im in images) + label), "white")
    draw = ImageDraw.Draw(out)
    x = 0
    for im, text in zip(images, ("original page (Chromium, 1024x768)", "wang2009 styled body_styled_html (same Chromium)")):
        out.paste(im, (x, label))
        draw.text((x + 8, 8), text, fill=(0, 0, 0))
        x += im.width + gap
    out = out.quantize(colors=128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)  # ~110 kB
    out.save(args.output, optimize=True)
    print(f"wrote {args.output} ({out.width}x{out.height})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
