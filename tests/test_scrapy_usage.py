"""Ordinary Scrapy usage, as a new user tries it (issue 10): a project laid out like
``scrapy startproject``'s, with the template's pipeline at priority 300, crawled with
the real ``scrapy`` command over ``file://`` pages.

The site: 25 copies of a hand-made article page (its title and three paragraphs are
known, see ``test_pipeline.py``), one JSON API response and the site's index.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from httpserver import parse_stats_dump
from test_pipeline import BODY, PAGE, TITLE

N_PAGES = 25

SETTINGS = textwrap.dedent("""
    BOT_NAME = "proj"
    SPIDER_MODULES = ["proj.spiders"]
    ADDONS = {"scrapy_cepr.Addon": 0}
    # The template of `scrapy startproject`:
    ITEM_PIPELINES = {"proj.pipelines.ProjPipeline": 300}
    CEPR_EXECUTOR = "inline"
    LOG_LEVEL = "INFO"
    TELNETCONSOLE_ENABLED = False
    FEED_EXPORT_ENCODING = "utf-8"
""")

PIPELINES = textwrap.dedent("""
    import json, os
    from itemadapter import ItemAdapter

    class ProjPipeline:
        # A storage pipeline: records what it sees.
        def process_item(self, item):
            with open(os.environ["SEEN_FILE"], "a") as f:
                f.write(json.dumps(ItemAdapter(item).asdict(), default=repr) + "\\n")
            return item
""")

SPIDER = textwrap.dedent("""
    import scrapy

    class NoBodyItem(scrapy.Item):  # forgot the body field
        url = scrapy.Field()
        title = scrapy.Field()
        cepr_error = scrapy.Field()

    class NewsSpider(scrapy.Spider):
        name = "news"
        item = "dict"

        async def start(self):
            yield scrapy.Request(self.index)

        def parse(self, response):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse_page)

        def parse_page(self, response):
            if self.item == "nobody":
                yield NoBodyItem(url=response.url)
            elif self.item == "own-title":
                yield {"url": response.url, "title": "The spider's own title"}
            elif response.url.endswith(".json"):
                yield {"url": response.url, "data": response.json()}
            else:
                yield {"url": response.url}
""")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    (root / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    pkg = root / "proj"
    (pkg / "spiders").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "spiders" / "__init__.py").write_text("")
    (pkg / "settings.py").write_text(SETTINGS)
    (pkg / "pipelines.py").write_text(PIPELINES)
    (pkg / "spiders" / "news.py").write_text(SPIDER)
    site = root / "site"
    site.mkdir()
    links = []
    for i in range(N_PAGES):
        (site / f"p{i:02d}.html").write_text(PAGE, encoding="utf-8")
        links.append(f'<a href="p{i:02d}.html">p{i}</a>')
    (site / "api.json").write_text(json.dumps({"id": 7, "headline": "Storm"}))
    links.append('<a href="api.json">api</a>')
    (site / "index.html").write_text("<html><body>" + " ".join(links) + "</body></html>")
    return root


def scrapy(project: Path, *args: str, seen: Path | None = None) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "SEEN_FILE": str(seen or project / "seen.jsonl")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(project), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "scrapy", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=180, check=False)


def index_url(project: Path) -> str:
    return (project / "site" / "index.html").as_uri()


def test_csv_feed_has_every_column_and_the_template_pipeline_sees_cleaned_items(project, tmp_path):
    # Items 2, 4 and 7: one CSV header for HTML pages and the JSON API item alike, no
    # "dropped fields" warning; the startproject pipeline (300) runs after CEPRPipeline.
    out, seen = tmp_path / "out.csv", tmp_path / "seen.jsonl"
    done = scrapy(project, "crawl", "news", "-a", f"index={index_url(project)}", "-O", str(out), seen=seen)
    assert done.returncode == 0, done.stderr[-3000:]
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    # The header comes from the first item (an HTML page or the API item, whichever
    # came first): it has every output field either way.
    assert {"url", "title", "body", "cepr_error", "page_type"} <= set(header)
    assert [h for h in header if h in ("title", "body", "cepr_error", "page_type")] == [
        "title", "body", "cepr_error", "page_type"]
    assert len(rows) == N_PAGES + 1
    pages = [r for r in rows if r["url"].endswith(".html")]
    assert all((r["title"], r["body"], r["cepr_error"], r["page_type"]) == (TITLE, BODY, "", "article")
               for r in pages)
    [api] = [r for r in rows if r["url"].endswith(".json")]
    assert (api["title"], api["body"], api["cepr_error"]) == ("", "", "")  # not an error
    # The spider's own "data" field of the API item is dropped when an HTML page came
    # first (CSV takes its header from the first item): that is the spider's, not ours.
    dropped = [line for line in done.stderr.splitlines() if "dropped fields" in line]
    assert all("dropped fields ['data']" in line for line in dropped), dropped
    stats = parse_stats_dump(done.stderr)
    assert stats["cepr/cleaned"] == N_PAGES and stats["cepr/skipped/non_html"] == 1
    assert "cepr/failed" not in stats
    seen_items = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(seen_items) == N_PAGES + 1
    assert all(s["body"] == BODY and "html" not in s for s in seen_items if s["url"].endswith(".html"))
    # Item 11: one summary line at close.
    assert "CEPR summary: 26 items: 25 cleaned, 0 non-article, 0 empty, 0 failed, 0 timeout, 1 skipped " \
           "(non_html 1)" in done.stderr


def test_pipeline_disabled_on_the_command_line_loses_nothing(project, tmp_path):
    # Item 1: the Scrapy way to disable a pipeline; the middleware then disables itself.
    out = tmp_path / "out.jsonl"
    done = scrapy(project, "crawl", "news", "-a", f"index={index_url(project)}", "-O", str(out),
                  "-s", 'ITEM_PIPELINES={"scrapy_cepr.pipelines.CEPRPipeline": null, "proj.pipelines.ProjPipeline": 300}',
                  seen=tmp_path / "seen.jsonl")
    assert done.returncode == 0, done.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == N_PAGES + 1
    assert all(set(i) in ({"url"}, {"url", "data"}) for i in items)
    assert "CEPRSpiderMiddleware'>: scrapy_cepr.pipelines.CEPRPipeline is not in ITEM_PIPELINES" in done.stderr
    assert "TypeError" not in done.stderr and "Error processing" not in done.stderr


def test_missing_field_gives_one_clear_error(project, tmp_path):
    # Item 5: one error naming the field, no tracebacks, the spider closed.
    done = scrapy(project, "crawl", "news", "-a", f"index={index_url(project)}", "-a", "item=nobody",
                  "-O", str(tmp_path / "out.jsonl"), seen=tmp_path / "seen.jsonl")
    assert done.returncode == 0, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, errors
    assert "item class proj.spiders.news.NoBodyItem has no field 'body' (CEPR_BODY_FIELD)" in errors[0]
    assert "Traceback" not in done.stderr
    stats = parse_stats_dump(done.stderr)
    assert stats["finish_reason"] == "cepr_item_class_error"
    assert stats["cepr/errors/item_class"] == 1


def test_spider_title_is_kept_by_default_and_replaced_with_one_warning(project, tmp_path):
    # Item 3: CEPR_OVERWRITE="fill" (default) keeps the spider's title; "overwrite"
    # replaces it and warns once for the whole crawl.
    for policy, expected in (("fill", "The spider's own title"), ("overwrite", TITLE)):
        out = tmp_path / f"{policy}.jsonl"
        done = scrapy(project, "crawl", "news", "-a", f"index={index_url(project)}", "-a", "item=own-title",
                      "-s", f"CEPR_OVERWRITE={policy}", "-O", str(out), seen=tmp_path / "seen.jsonl")
        assert done.returncode == 0, done.stderr[-3000:]
        pages = [i for i in map(json.loads, out.read_text().splitlines()) if i["url"].endswith(".html")]
        assert {i["title"] for i in pages} == {expected} and {i["body"] for i in pages} == {BODY}
        assert done.stderr.count("replaced the spider's own 'title'") == (policy == "overwrite")


def test_scrapy_parse_with_pipelines_cleans(project):
    # Item 6: `scrapy parse` calls the callback without spider middlewares; the pipeline
    # finds the page by the item's URL, and nothing blames the middleware.
    page = (project / "site" / "p00.html").as_uri()
    done = scrapy(project, "parse", "--spider", "news", "--pipelines", "-c", "parse_page", page)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f'"title": "{TITLE}"' in done.stdout.replace("'", '"') or TITLE in done.stdout
    assert "The storm, which formed on Monday" in done.stdout
    assert "CEPRSpiderMiddleware enabled" not in done.stderr
    assert "no page attached" not in done.stderr


def test_shell_starts_no_workers(project):
    # Item 10: `scrapy shell` opens the spider (the pipeline's open_spider) but cleans
    # nothing: no process pool is started.
    page = (project / "site" / "p00.html").as_uri()
    done = scrapy(project, "shell", page, "-s", "CEPR_EXECUTOR=process", "-c",
                  "__import__('multiprocessing').active_children()")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"
    assert "Starting the process pool" not in done.stderr
