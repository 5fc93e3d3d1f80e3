"""The Redis archive queue chooses no file outside a crawler's allowed roots: queue
entries naming other files (``/etc/passwd``, a ``..`` escape, a symlink out of a root, a
file that is no archive) are moved to ``S:archive:bad`` and counted while the other
files are read; a crawler with neither ``-a paths`` nor ``-a roots`` refuses to start;
feed files adopted from a dead crawler are read only when this crawler could have
written them. A redis-server of the test's own runs on a free port."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("warcio", reason="needs warcio: pip install 'scrapy-cepr[warc]'")
pytest.importorskip("scrapy_redis", reason="needs scrapy-redis: pip install 'scrapy-cepr[redis]'")

import redis  # noqa: E402
from archive_fixtures import article, response, write_warc  # noqa: E402
from redis_fixture import started_redis  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

from scrapy_cepr.archive_redis import RedisArchiveSpider, encode_entry  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "example_project"
SPIDER = "redisarchivespider"


@pytest.fixture
def redis_url():
    for server in started_redis():
        yield server.url


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def _stat(log: str, name: str) -> int:
    match = re.search(rf"'{re.escape(name)}': (\d+)", log)
    return int(match.group(1)) if match else 0


def _pages(path: Path, host: str, n: int) -> list[str]:
    return write_warc(path, [response(f"https://{host}/{i}", article(i)) for i in range(n)])


def test_queue_entries_outside_the_roots_are_refused_and_counted(redis_url: str, tmp_path: Path) -> None:
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    ids = _pages(allowed / "a.warc.gz", "a.example", 3) + _pages(allowed / "b.warc.gz", "b.example", 2)
    _pages(outside / "secret.warc.gz", "secret.example", 2)  # a valid archive, but not under the root
    (allowed / "link.warc.gz").symlink_to(outside / "secret.warc.gz")
    (allowed / "notes.txt").write_text("not an archive\n")
    refused = ["/etc/passwd",
               f"{allowed}/../outside/secret.warc.gz",  # `..` escape
               str(allowed / "link.warc.gz"),  # symlink out of the root
               str(allowed / "notes.txt"),  # no archive suffix
               str(allowed / "missing.warc.gz")]  # no such file
    queue = [refused[0], str(allowed / "a.warc.gz"), *refused[1:3], str(allowed / "b.warc.gz"), *refused[3:]]
    client = redis.Redis.from_url(redis_url)
    client.rpush(f"{SPIDER}:archive:queue", *[encode_entry(p) for p in queue])
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "scrapy", "crawl", SPIDER, "-a", f"roots={allowed}", "-o", str(out)]
    for setting in (f"REDIS_URL={redis_url}", "SCHEDULER_CRAWLER_ID=solo", "SCHEDULER_HEARTBEAT_TIMEOUT=3",
                    "CEPR_EXECUTOR=inline", "LOG_LEVEL=INFO"):
        cmd += ["-s", setting]
    done = subprocess.run(cmd, cwd=PROJECT, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    items = _lines(out)
    assert sorted(i["warc_record_id"] for i in items) == sorted(ids)  # the allowed files, all read
    assert {i["warc_file"] for i in items} == {str(allowed / "a.warc.gz"), str(allowed / "b.warc.gz")}
    assert _stat(done.stderr, "cepr/archive/redis/refused_path") == len(refused)
    bad = [json.loads(e)["path"] for e in client.lrange(f"{SPIDER}:archive:bad", 0, -1)]
    assert sorted(bad) == sorted(refused)  # kept for inspection, none lost
    assert client.llen(f"{SPIDER}:archive:queue") == 0 and client.hlen(f"{SPIDER}:archive:leases") == 0
    assert client.scard(f"{SPIDER}:archive:finished") == 2
    assert done.stderr.count("outside the allowed roots") == 1  # logged once per crawler
    assert "Traceback" not in done.stderr


def test_no_paths_and_no_roots_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="-a roots="):
        RedisArchiveSpider()
    with pytest.raises(ValueError, match="roots"):
        RedisArchiveSpider(roots=str(tmp_path / "no-such-dir"))
    _pages(tmp_path / "a.warc.gz", "a.example", 1)
    spider = RedisArchiveSpider(paths=str(tmp_path / "*.warc.gz"), roots=str(tmp_path / "x" / ".."))
    assert spider.roots == [os.path.realpath(tmp_path)]


def test_adopted_feeds_only_where_this_crawler_could_have_written(redis_url: str, tmp_path: Path) -> None:
    allowed, feeds, elsewhere = tmp_path / "allowed", tmp_path / "feeds", tmp_path / "elsewhere"
    for d in (allowed, feeds, elsewhere):
        d.mkdir()
    _pages(allowed / "a.warc.gz", "a.example", 1)

    def feed(path: Path, offset: int) -> Path:
        path.write_text(json.dumps({"warc_file": str(allowed / "a.warc.gz"), "warc_offset": offset}) + "\n")
        return path

    same_dir = feed(feeds / "dead.jsonl", 1)  # next to our own feed: adopted
    in_root = feed(allowed / "dead.jsonl", 2)  # under a root: adopted
    outside = feed(elsewhere / "dead.jsonl", 3)  # elsewhere: refused
    link = feeds / "link.jsonl"
    link.symlink_to(feed(elsewhere / "linked.jsonl", 4))  # symlink out: refused
    crawler = get_crawler(RedisArchiveSpider, {
        "REDIS_URL": redis_url, "SCHEDULER_CRAWLER_ID": "me",
        "FEEDS": {str(feeds / "mine.jsonl"): {"format": "jsonlines"}}})
    spider = RedisArchiveSpider.from_crawler(crawler, roots=str(allowed))
    spider.stats = crawler.stats
    client = redis.Redis.from_url(redis_url)
    client.set(f"{spider.name}:archive:output:dead", json.dumps(
        {"host": "h", "feeds": [str(p) for p in (same_dir, in_root, outside, link, "/etc/passwd")]}))
    spider._adopt_output("dead")
    done = {m.decode() for m in client.smembers(f"{spider.name}:archive:done:{allowed / 'a.warc.gz'}")}
    assert done == {f"{allowed / 'a.warc.gz'}\t1", f"{allowed / 'a.warc.gz'}\t2"}
    assert crawler.stats.get_value("cepr/archive/redis/refused_feed") == 3
