"""Issue 21, must show: two crawler processes share 4 archive files through Redis, one is
SIGKILLed mid-file, and every record is exported exactly once (the survivor takes the
dead crawler's file over). A redis-server of the test's own runs on a free port."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("warcio", reason="needs warcio: pip install 'scrapy-cepr[warc]'")
pytest.importorskip("scrapy_redis", reason="needs scrapy-redis: pip install 'scrapy-cepr[redis]'")

import redis  # noqa: E402
from archive_fixtures import article, mixed_records, response, write_warc  # noqa: E402
from redis_fixture import started_redis  # noqa: E402

from scrapy_cepr.archive_redis import decode_entry, encode_entry  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "example_project"
SPIDER = "redisarchivespider"


@pytest.fixture
def redis_url():
    for server in started_redis():
        yield server.url


def _cmd(redis_url: str, crawler: str, out: Path, *args: str) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", SPIDER, *args, "-o", str(out)]
    for setting in (f"REDIS_URL={redis_url}", f"SCHEDULER_CRAWLER_ID={crawler}", "SCHEDULER_HEARTBEAT_TIMEOUT=3",
                    "CEPR_EXECUTOR=inline", "LOG_LEVEL=INFO"):
        cmd += ["-s", setting]
    return cmd


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_bytes().rpartition(b"\n")[0].split(b"\n") if x.strip()]


def _stat(log: str, name: str) -> int:
    match = re.search(rf"'{re.escape(name)}': (\d+)", log)
    return int(match.group(1)) if match else 0


def test_entries_are_json_paths() -> None:
    assert decode_entry(encode_entry("/data/ä b.warc.gz")) == "/data/ä b.warc.gz"
    for bad in (b"\x80\x04pickle", b"[]", b'{"path": 3}', b'{"path": ""}'):
        with pytest.raises(ValueError):
            decode_entry(bad)


def test_two_crawlers_one_killed_export_every_record_once(redis_url: str, tmp_path: Path) -> None:
    ids: list[str] = []
    for f in range(4):
        ids += write_warc(tmp_path / f"part-{f}.warc.gz",
                          [response(f"https://news{f}.example/{i}", article(i)) for i in range(120)])
    paths = f"paths={tmp_path}/part-*.warc.gz"
    outs = {name: tmp_path / f"{name}.jsonl" for name in ("a", "b")}
    logs = {name: tmp_path / f"{name}.log" for name in ("a", "b")}
    procs = {}
    for name in ("a", "b"):
        with logs[name].open("w") as err:
            procs[name] = subprocess.Popen(_cmd(redis_url, f"crawler-{name}", outs[name], "-a", paths), cwd=PROJECT,
                                           env=_env(), stderr=err, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(_lines(outs["a"])) < 60 and procs["a"].poll() is None:
            time.sleep(0.01)
        assert procs["a"].poll() is None, f"crawler a ended before the kill:\n{logs['a'].read_text()[-3000:]}"
        os.killpg(procs["a"].pid, signal.SIGKILL)
        procs["a"].wait()
        killed_at = len(_lines(outs["a"]))
        procs["b"].wait(timeout=300)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    log_b = logs["b"].read_text()
    assert procs["b"].returncode == 0, log_b[-3000:]
    exported = Counter(item["warc_record_id"] for out in outs.values() for item in _lines(out))
    assert sorted(exported) == sorted(ids)  # none lost
    assert {k: n for k, n in exported.items() if n > 1} == {}  # none twice
    assert 0 < killed_at < len(ids)
    assert "crawler crawler-a is gone" in log_b and _stat(log_b, "cepr/archive/redis/requeued") >= 1
    client = redis.Redis.from_url(redis_url)
    assert client.hlen(f"{SPIDER}:archive:leases") == 0 and client.scard(f"{SPIDER}:archive:finished") == 4


def test_malformed_queue_entry_is_dropped_and_counted(redis_url: str, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.warc.gz"
    write_warc(mixed, mixed_records())
    client = redis.Redis.from_url(redis_url)
    client.rpush(f"{SPIDER}:archive:queue", b"\x80\x04garbage", encode_entry(str(mixed)))
    out = tmp_path / "out.jsonl"
    # No -a paths: the crawler reads the queue only, under its -a roots.
    done = subprocess.run(_cmd(redis_url, "solo", out, "-a", f"roots={tmp_path}"), cwd=PROJECT, env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(_lines(out)) == 4
    assert _stat(done.stderr, "cepr/archive/redis/bad_entries") == 1
    assert client.lrange(f"{SPIDER}:archive:bad", 0, -1) == [b"\x80\x04garbage"]
    # Run again with -a paths of the same file: known, not queued again, nothing exported twice.
    again = subprocess.run(_cmd(redis_url, "solo", out, "-a", f"paths={mixed}"), cwd=PROJECT, env=_env(),
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(_lines(out)) == 4


def test_restart_with_the_same_id_recovers_its_file_at_once(redis_url: str, tmp_path: Path) -> None:
    ids: list[str] = []
    for f in range(2):
        ids += write_warc(tmp_path / f"part-{f}.warc.gz",
                          [response(f"https://news{f}.example/{i}", article(i)) for i in range(150)])
    out, log = tmp_path / "c1.jsonl", tmp_path / "c1.log"
    # A heartbeat timeout far longer than the test: only the restart can recover the file.
    cmd = _cmd(redis_url, "c1", out, "-a", f"paths={tmp_path}/part-*.warc.gz") + \
        ["-s", "SCHEDULER_HEARTBEAT_TIMEOUT=600"]
    with log.open("w") as err:
        proc = subprocess.Popen(cmd, cwd=PROJECT, env=_env(), stderr=err, stdout=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(_lines(out)) < 80 and proc.poll() is None:
            time.sleep(0.01)
        assert proc.poll() is None, log.read_text()[-3000:]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    overwrite = subprocess.run([c if c != "-o" else "-O" for c in cmd], cwd=PROJECT, env=_env(),
                               capture_output=True, text=True, timeout=300)
    assert "restart it with -o" in overwrite.stderr
    done = subprocess.run(cmd, cwd=PROJECT, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    exported = Counter(item["warc_record_id"] for item in _lines(out))
    assert sorted(exported) == sorted(ids)
    assert {k: n for k, n in exported.items() if n > 1} == {}
