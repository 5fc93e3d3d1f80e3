"""Issue 21, must show: ``archivespider`` over a WARC.gz of the 181 AEB pages exports
181 items whose title and body are those of ``scrapy_cepr.extract()`` on the same bytes;
the non-HTML and non-200 records are counted, not exported. The WARC is written to a
temporary directory from the corpus read in place (``CEPR_BENCHMARK_DIR``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("warcio", reason="needs warcio: pip install 'scrapy-cepr[warc]'")

from archive_fixtures import write_pages_warc  # noqa: E402

from scrapy_cepr import extract  # noqa: E402
from scrapy_cepr.archive import iter_records, record_response  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _stat(log: str, name: str) -> int:
    match = re.search(rf"'{re.escape(name)}': (\d+)", log)
    return int(match.group(1)) if match else 0


def test_archivespider_on_the_181_aeb_pages_matches_extract(corpus, tmp_path: Path) -> None:
    pages = [(s.url or f"https://aeb.example/{s.id}", s.html if isinstance(s.html, bytes) else s.html.encode())
             for s in corpus]
    assert len({u for u, _ in pages}) == len(pages) == 181
    warc = tmp_path / "aeb.warc.gz"
    assert write_pages_warc(warc, pages) == 181
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "archivespider", "-a", f"paths={warc}",
                           "-s", "CEPR_EXECUTOR=process", "-s", "CEPR_POOL_AFTER_SECONDS=0", "-O", str(out)],
                          cwd=ROOT / "example_project", env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    items = {}
    for line in out.read_text().splitlines():
        item = json.loads(line)
        assert item["url"] not in items
        items[item["url"]] = item
    assert len(items) == 181
    for record in iter_records(str(warc)):
        item = items[record.url]
        expected = extract(record.body, url=record.url, encoding=record_response(record).encoding)
        assert (item["title"], item["body"]) == (expected.title, expected.body), record.url
        assert item["warc_record_id"] == record.record_id and item["warc_offset"] == record.offset
    log = done.stderr
    assert _stat(log, "cepr/archive/skipped/status") == 2 and _stat(log, "cepr/archive/skipped/mime") == 1
    assert _stat(log, "item_scraped_count") == 181
