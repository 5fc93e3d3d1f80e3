"""Issue 21, must show: SIGKILL ``scrapy crawl archivespider`` halfway, start it again
with the same ``JOBDIR``: every record is exported exactly once (none lost, none twice)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("warcio", reason="needs warcio: pip install 'scrapy-cepr[warc]'")

from archive_fixtures import article, response, write_warc  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGES_PER_FILE = 300


def _cmd(paths: str, jobdir: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "scrapy", "crawl", "archivespider", "-a", f"paths={paths}",
            "-s", f"JOBDIR={jobdir}", "-s", "CEPR_EXECUTOR=inline", "-s", "LOG_LEVEL=INFO", "-o", str(out)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _complete_lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    data = path.read_bytes()
    return [json.loads(x) for x in data.rpartition(b"\n")[0].split(b"\n") if x.strip()]


def test_sigkill_halfway_then_resume_exports_every_record_once(tmp_path: Path) -> None:
    ids: list[str] = []
    for f in range(2):
        ids += write_warc(tmp_path / f"part-{f}.warc.gz",
                          [response(f"https://news{f}.example/{i}", article(i)) for i in range(PAGES_PER_FILE)])
    total = len(ids)
    jobdir, out, log = tmp_path / "job", tmp_path / "out.jsonl", tmp_path / "crawl.log"
    cmd = _cmd(f"{tmp_path}/part-*.warc.gz", jobdir, out)
    kills = []
    for target in (total // 3, 2 * total // 3):  # killed twice, at about 1/3 and 2/3
        with log.open("a") as err:
            proc = subprocess.Popen(cmd, cwd=ROOT / "example_project", env=_env(), stderr=err,
                                    stdout=subprocess.DEVNULL, start_new_session=True)
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and proc.poll() is None and len(_complete_lines(out)) < target:
                time.sleep(0.01)
            assert proc.poll() is None, f"the crawl ended before the kill:\n{log.read_text()[-3000:]}"
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            kills.append(len(_complete_lines(out)))
    assert kills[0] < total and kills[1] < total
    with log.open("a") as err:
        done = subprocess.run(cmd, cwd=ROOT / "example_project", env=_env(), stderr=err, stdout=subprocess.DEVNULL,
                              timeout=600)
    assert done.returncode == 0, log.read_text()[-3000:]
    exported = Counter(item["warc_record_id"] for item in _complete_lines(out))
    assert sorted(exported) == sorted(ids)  # none lost
    assert {k: n for k, n in exported.items() if n > 1} == {}  # none twice
    assert out.read_bytes().endswith(b"\n")
    assert "resuming:" in log.read_text()
    ledger = (jobdir / "archive-ledger.jsonl").read_text().splitlines()
    assert len(ledger) >= total - 2  # an entry per record (one per kill may be in the feed only)
