"""Incremental crawling over the test site of ``tests/newssite.py`` (issue 22): pages
fetched and exported by a first run (state 1) and a second run (state 2: two new
articles, one updated, two stories republished under other URLs), with
``newsspider`` and one ``CEPR_STATE_DIR``; optionally the same with two
``redisnewsspider`` crawlers sharing a throw-away Redis (``--redis``). And the size of
the state per million exported pages (``--state-size N``: N synthetic article URLs
written to the SQLite store, and to Redis with ``--redis``, scaled to 10^6).

    PYTHONPATH=$PWD python benchmarks/incremental_crawl.py [--redis] [--state-size 200000]

Prints one line per run and writes nothing else; numbers are quoted in docs/incremental.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Not named incremental.py: that is a package Twisted imports, and this directory is on
# sys.path for every script in it.
sys.path.insert(0, str(ROOT / "tests"))

from newssite import PROJECT, NewsSite, crawl_env, run_newsspider  # noqa: E402

from scrapy_cepr.incremental import ExportRecord, RedisStateStore, SQLiteStateStore  # noqa: E402

DEDUP = ("CEPR_DEDUP=mark",)  # needs datasketch: pip install "scrapy-cepr[dedup]"


def _items(paths: list[Path]) -> list[dict]:
    return [json.loads(line) for p in paths if p.exists() for line in p.read_text(encoding="utf-8").splitlines()]


def _report(label: str, site: NewsSite, items: list[dict], seconds: float) -> None:
    other = len(site.hits) - len(site.article_hits())
    dups = sum(1 for i in items if i.get("duplicate_of"))
    urls = [i["url"] for i in items]
    print(f"{label}: fetched {len(site.article_hits())} article pages (+{other} robots/sitemaps/feeds/home), "
          f"exported {len(items)} items ({len(set(urls))} distinct URLs), duplicate_of on {dups}; {seconds:.1f} s")


def local(tmp: Path) -> None:
    with NewsSite() as site:
        for run in (1, 2):
            if run == 2:
                site.advance()
            site.hits.clear()
            out = tmp / f"run{run}.jsonl"
            t = time.perf_counter()
            proc = run_newsspider(site.url, out, f"CEPR_STATE_DIR={tmp / 'state'}", *DEDUP)
            if proc.returncode:
                sys.exit(proc.stderr[-3000:])
            _report(f"newsspider run {run}", site, _items([out]), time.perf_counter() - t)


def distributed(tmp: Path) -> None:
    import redis
    from redis_fixture import RedisServer

    with RedisServer() as server, NewsSite() as site:
        client = redis.Redis.from_url(server.url)
        for run in (1, 2):
            if run == 2:
                site.advance()
            site.hits.clear()
            client.delete("redisnewsspider:dupefilter", "redisnewsspider:requests")
            client.lpush("redisnewsspider:start_urls", site.url)
            t = time.perf_counter()
            procs, outs = [], []
            for n in range(2):
                out = tmp / f"redis-run{run}-{n}.jsonl"
                cmd = [sys.executable, "-m", "scrapy", "crawl", "redisnewsspider", "-O", str(out),
                       "-s", f"REDIS_URL={server.url}"]
                for s in ("CEPR_EXECUTOR=inline", "AUTOTHROTTLE_ENABLED=False", "DOWNLOAD_DELAY=0",
                          "MAX_IDLE_TIME_BEFORE_CLOSE=2", "CEPR_STATE_DIR=redis", f"SCHEDULER_CRAWLER_ID=c{n}", *DEDUP):
                    cmd += ["-s", s]
                procs.append(subprocess.Popen(cmd, cwd=PROJECT, env=crawl_env(), stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL))
                outs.append(out)
            for p in procs:
                p.wait(timeout=300)
            _report(f"2 x redisnewsspider run {run}", site, _items(outs), time.perf_counter() - t)


def _urls(n: int) -> list[str]:
    sections = ("politics", "business", "sport", "culture", "science", "world", "local", "opinion")
    return [f"https://www.news-site.example/{2020 + i % 7}/{1 + i % 12:02d}/{1 + i % 28:02d}/{sections[i % 8]}/"
            f"council-approves-plan-for-new-bridge-over-the-river-{i}" for i in range(n)]


def state_size(n: int, tmp: Path, with_redis: bool) -> None:
    urls = _urls(n)
    mean_len = sum(map(len, urls)) / n
    store = SQLiteStateStore(tmp / "size" / "incremental.sqlite3")
    t = time.perf_counter()
    for start in range(0, n, 1000):  # one transaction per 1000, as a crawl does one per item
        batch = urls[start:start + 1000]
        store.put(batch, ExportRecord(time.time(), "2026-11-25T08:00:00+00:00"))
        for u in batch:
            store.claim(u, u)
    seconds = time.perf_counter() - t
    t = time.perf_counter()
    for u in urls[:10000]:
        store.get(u)
    lookup_us = (time.perf_counter() - t) / 10000 * 1e6
    store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    size = sum(p.stat().st_size for p in (tmp / "size").iterdir())
    print(f"SQLite state: {n} pages (mean URL {mean_len:.0f} chars) -> {size / 1e6:.1f} MB, "
          f"{size / n * 1e6 / 1e9:.2f} GB per million pages; {lookup_us:.1f} us per lookup; "
          f"write {seconds:.1f} s")
    if with_redis:
        import redis
        from redis_fixture import RedisServer

        with RedisServer() as server:
            client = redis.Redis.from_url(server.url)
            before = client.info("memory")["used_memory"]
            rstore = RedisStateStore(client, "bench:cepr")
            pipe = client.pipeline(transaction=False)
            value = json.dumps([time.time(), "2026-11-25T08:00:00+00:00"])
            for start in range(0, n, 1000):
                batch = urls[start:start + 1000]
                pipe.hset(rstore.exported_key, mapping={u: value for u in batch})
                pipe.hset(rstore.canonical_key, mapping={u: u for u in batch})
                pipe.execute()
            used = client.info("memory")["used_memory"] - before
            print(f"Redis state: {n} pages -> {used / 1e6:.1f} MB, {used / n * 1e6 / 1e9:.2f} GB per million pages")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis", action="store_true", help="also two redisnewsspider crawlers on one Redis")
    parser.add_argument("--state-size", type=int, default=0, metavar="N", help="measure the state of N pages")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        local(tmp)
        if args.redis:
            distributed(tmp)
        if args.state_size:
            state_size(args.state_size, tmp, args.redis)


if __name__ == "__main__":
    main()
