"""CEPR_* settings: defaults, conversion of command-line strings, validation at start-up,
the add-on, and the README settings table."""

from __future__ import annotations

import ast
import logging
import os

import pytest
import scrapy
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_cepr.addon import Addon
from scrapy_cepr.middlewares import CEPRSpiderMiddleware
from scrapy_cepr.pipelines import CEPRPipeline
from scrapy_cepr.settings import SETTINGS_DOC, CEPRConfig, method_settings, settings_table


def test_defaults():
    config = CEPRConfig.from_settings(Settings())
    assert config.enabled is True
    assert config.method == "cepr-typed"  # issue 17: CEPR-Typed is the default
    assert config.params == ()  # paper values: alpha=None (0.8 for SETPR), lambda 1, radius 1
    assert (config.html_field, config.url_field, config.title_field, config.body_field, config.error_field) == (
        "html", "url", "title", "body", "cepr_error")
    assert config.keep_html is False
    assert config.executor == "process"
    assert config.max_workers == (os.cpu_count() or 1)
    assert config.timeout == 30.0
    assert config.max_html_bytes == 10_000_000


def test_command_line_strings_are_converted():
    # `scrapy crawl -s CEPR_ALPHA=0.9 -s CEPR_RADIUS=2 ...` gives strings.
    config = CEPRConfig.from_settings(Settings({
        "CEPR_ALPHA": "0.9", "CEPR_RADIUS": "2", "CEPR_LAMBDA": "0", "CEPR_KEEP_HTML": "true",
        "CEPR_MAX_WORKERS": "3", "CEPR_TIMEOUT": "2.5", "CEPR_MAX_HTML_BYTES": "0", "CEPR_EXECUTOR": "thread",
    }))
    assert dict(config.params) == {"alpha": 0.9, "radius": 2, "lambda_": 0.0}
    assert config.keep_html is True
    assert (config.max_workers, config.timeout, config.max_html_bytes) == (3, 2.5, 0)
    assert config.executor == "thread"


def test_alpha_none_string_means_paper_value():
    assert CEPRConfig.from_settings({"CEPR_ALPHA": "None"}).params == (("alpha", None),)


def test_other_method_parameters_map_generically():
    # cetr's parameter cetr_radius -> CEPR_CETR_RADIUS (p.upper().strip("_")).
    config = CEPRConfig.from_settings({"CEPR_METHOD": "cetr", "CEPR_CETR_RADIUS": "2"})
    assert config.params == (("cetr_radius", 2),)
    assert ("CEPR_CETR_RADIUS", "3", "int") in method_settings("cetr")


@pytest.mark.parametrize(("setting", "value"), [
    ("CEPR_ALPHA", -1),
    ("CEPR_ALPHA", "abc"),
    ("CEPR_ALPHA", float("nan")),
    ("CEPR_LAMBDA", -0.5),
    ("CEPR_RADIUS", -1),
    ("CEPR_RADIUS", 1.5),
    ("CEPR_EDGES", "wrap"),
    ("CEPR_METHOD", "boilerpipe"),
    ("CEPR_EXECUTOR", "gpu"),
    ("CEPR_MAX_WORKERS", 0),
    ("CEPR_MAX_WORKERS", "two"),
    ("CEPR_MAX_WORKERS", 1.5),
    ("CEPR_TIMEOUT", 0),
    ("CEPR_TIMEOUT", -3),
    ("CEPR_TIMEOUT", float("inf")),
    ("CEPR_MAX_HTML_BYTES", -1),
    ("CEPR_MAX_PENDING_PAGES", 0),
    ("CEPR_START_METHOD", "fork"),
    ("CEPR_KEEP_HTML", "maybe"),
    ("CEPR_ENABLED", "sometimes"),
    ("CEPR_TITLE_FIELD", ""),
])
def test_bad_value_names_the_setting(setting, value):
    with pytest.raises(ValueError, match=setting):
        CEPRConfig.from_settings(Settings({setting: value}))


def test_same_field_twice_is_refused():
    with pytest.raises(ValueError, match="CEPR_BODY_FIELD and CEPR_TITLE_FIELD must differ"):
        CEPRConfig.from_settings({"CEPR_BODY_FIELD": "title"})


def test_unknown_setting_is_refused():
    with pytest.raises(ValueError, match="unknown setting CEPR_ALHPA: neither a general setting nor a parameter"):
        CEPRConfig.from_settings({"CEPR_ALHPA": 0.9})
    # Still refused when another method is chosen on the command line.
    with pytest.raises(ValueError, match="unknown setting CEPR_RADUIS"):
        CEPRConfig.from_settings(Settings({"CEPR_RADUIS": 2, "CEPR_METHOD": "cetr"}))


def test_command_line_method_switch_ignores_other_methods_parameters(caplog):
    # Issue 10 item 8: settings.py tunes setpr (CEPR_RADIUS, CEPR_ALPHA), the command line
    # says -s CEPR_METHOD=cetr: cetr runs with its own defaults, the others are ignored.
    settings = Settings({"CEPR_RADIUS": 2, "CEPR_ALPHA": 0.9}, priority="project")
    settings.set("CEPR_METHOD", "cetr", priority="cmdline")
    with caplog.at_level(logging.INFO, logger="scrapy_cepr.settings"):
        config = CEPRConfig.from_settings(settings)
    assert config.method == "cetr"
    assert config.params == ()
    assert config.ignored == ("CEPR_ALPHA", "CEPR_RADIUS")
    assert "CEPR_METHOD='cetr' ignores CEPR_ALPHA, CEPR_RADIUS" in caplog.text
    # A parameter shared by the chosen method is used (cedst has radius too).
    assert dict(CEPRConfig.from_settings({"CEPR_METHOD": "cedst", "CEPR_RADIUS": 2}).params) == {"radius": 2}


def test_spider_attribute_chooses_the_method():
    # Issue 10 item 7: a spider attribute (or -a cepr_method=...) beats CEPR_METHOD.
    class Spider(scrapy.Spider):
        name = "s"
        cepr_method = "nce"

    crawler = get_crawler(Spider, settings_dict={"CEPR_METHOD": "etpr", "CEPR_RADIUS": 3})
    crawler.spider = crawler._create_spider()
    config = CEPRConfig.from_crawler(crawler)
    assert config.method == "nce" and config.ignored == ("CEPR_RADIUS",)
    pipeline = build_from_crawler(CEPRPipeline, crawler)
    assert pipeline.config.method == "nce"


def test_custom_settings_choose_the_method():
    class Spider(scrapy.Spider):
        name = "s"
        custom_settings = {"CEPR_METHOD": "cetr"}

    crawler = get_crawler(Spider, settings_dict={"CEPR_RADIUS": 3})
    assert CEPRConfig.from_crawler(crawler).method == "cetr"


@pytest.mark.parametrize(("setting", "value", "message"), [
    ("CEPR_OVERWRITE", "replace", "CEPR_OVERWRITE must be one of keep, fill, overwrite"),
    ("CEPR_NON_ARTICLE", "hide", "CEPR_NON_ARTICLE must be one of keep, mark, drop"),
    ("CEPR_WARN_LIMIT", -1, "CEPR_WARN_LIMIT must be an integer >= 0"),
    ("CEPR_POOL_AFTER_SECONDS", "soon", "CEPR_POOL_AFTER_SECONDS must be a number"),
    ("CEPR_OPT_IN", "maybe", "CEPR_OPT_IN must be True or False"),
    ("CEPR_PAGE_TYPE_FIELD", "body", "CEPR_PAGE_TYPE_FIELD and CEPR_BODY_FIELD must differ"),
])
def test_new_settings_are_validated(setting, value, message):
    with pytest.raises(ValueError, match=message):
        CEPRConfig.from_settings({setting: value})


def test_bad_setting_stops_the_crawler_at_start_up():
    crawler = get_crawler(settings_dict={"CEPR_ALPHA": -2})
    with pytest.raises(ValueError, match="CEPR_ALPHA=-2"):
        build_from_crawler(CEPRPipeline, crawler)
    with pytest.raises(ValueError, match="CEPR_ALPHA=-2"):
        build_from_crawler(CEPRSpiderMiddleware, crawler)


def test_disabled_is_not_configured():
    crawler = get_crawler(settings_dict={"CEPR_ENABLED": False})
    with pytest.raises(NotConfigured):
        build_from_crawler(CEPRPipeline, crawler)
    with pytest.raises(NotConfigured):
        build_from_crawler(CEPRSpiderMiddleware, crawler)


def test_addon_enables_both_components():
    crawler = get_crawler(settings_dict={"ADDONS": {"scrapy_cepr.Addon": 0}})
    assert crawler.settings.getdict("SPIDER_MIDDLEWARES")[CEPRSpiderMiddleware] == 10
    assert crawler.settings.getdict("ITEM_PIPELINES")[CEPRPipeline] == 100


def test_addon_keeps_the_projects_priorities():
    settings = Settings({"ITEM_PIPELINES": {"scrapy_cepr.pipelines.CEPRPipeline": 700}})
    Addon().update_settings(settings)
    pipelines = settings.getdict("ITEM_PIPELINES")
    # (+ the canonical-URL pipeline of incremental crawling, issue 22, at its own priority)
    from scrapy_cepr.incremental import CanonicalPipeline

    assert pipelines == {"scrapy_cepr.pipelines.CEPRPipeline": 700, CanonicalPipeline: 50}


def test_settings_doc_defaults_match_the_code():
    # Every documented default is what from_settings uses when the setting is absent.
    config = CEPRConfig.from_settings({})
    documented = {name: default for name, default, _ in SETTINGS_DOC}
    for name, default in documented.items():
        if name in ("CEPR_ALPHA", "CEPR_LAMBDA", "CEPR_RADIUS", "CEPR_EDGES"):
            expected = {s: d for s, d, _ in method_settings("setpr")}[name]
            assert default.replace('"', "'") == expected, name
            continue
        value = getattr(config, name[len("CEPR_"):].lower())
        if default == "os.cpu_count()":
            assert value == (os.cpu_count() or 1)
        else:
            assert eval(default) == value, name
    table = settings_table()
    assert table.count("\n") == len(SETTINGS_DOC) + 1
    assert "| `CEPR_TIMEOUT` | `30.0` |" in table


@pytest.mark.parametrize(("module", "package"), [("jieba", "jieba"), ("stop_words", "stop-words")])
def test_cedst_without_its_extra_names_the_install_command(monkeypatch, module, package):
    # Issue 10 item 12: jieba and stop-words are the "cedst" extra; choosing CEDST without
    # them stops the crawl at start-up with the command to run.
    import sys

    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    with pytest.raises(ImportError, match=rf'CEDST needs {package}: pip install "scrapy-cepr\[cedst\]"'):
        CEPRConfig.from_settings({"CEPR_METHOD": "cedst"})
    CEPRConfig.from_settings({"CEPR_METHOD": "setpr"})  # the other methods do not need them


def test_declared_dependencies():
    # Issue 10 item 12: the oldest Scrapy that works is 2.14 (scrapy.utils.asyncio; .ci/run
    # runs the Scrapy-layer tests on it); parsel is not a direct dependency; the CEDST-only
    # package (jieba) is an extra, also in the test extra so that CI runs the CEDST tests.
    # Issue 18 (6): stop-words is a base requirement, since CEPR_METADATA's language guess
    # needs it (a base install failed whole pages without it).
    import configparser
    from pathlib import Path

    cfg = configparser.ConfigParser()
    cfg.read(Path(__file__).resolve().parents[1] / "setup.cfg")
    requires = cfg["options"]["install_requires"].split()
    assert "scrapy>=2.14" in requires
    assert not [r for r in requires if r.startswith(("parsel", "jieba"))]
    assert "stop-words>=2025.11.4" in requires
    extras = cfg["options.extras_require"]
    for extra in ("cedst", "test"):
        assert "jieba>=0.42" in extras[extra].split()


def test_start_method_on_posix_is_accepted_and_said_to_be_ignored(caplog):
    # The pipe workers are always fresh interpreters: CEPR_START_METHOD only selects how
    # the fallback pool starts (platforms without asyncio subprocess pipes). Still
    # validated, and never silently ignored.
    from scrapy_cepr.executors import PIPE_WORKERS

    with caplog.at_level(logging.INFO, logger="scrapy_cepr.settings"):
        config = CEPRConfig.from_settings({"CEPR_START_METHOD": "spawn"})
    assert config.start_method == "spawn"
    said = "CEPR_START_METHOD is ignored here" in caplog.text
    assert said == PIPE_WORKERS
    with pytest.raises(ValueError, match="CEPR_START_METHOD"):
        CEPRConfig.from_settings({"CEPR_START_METHOD": "fork"})


def test_method_extras_come_from_the_registry():
    # Issue 19: wang2009's styled HTML is an extra the registry declares (asked for by its
    # parameter styled_html, CEPR_STYLED_HTML), not a name the pipeline knows.
    pytest.importorskip("playwright", reason='CEPR_METHOD="wang2009" needs playwright: pip install -e ".[render]"')
    styled = CEPRConfig(method="wang2009", params=(("styled_html", True),), executor="inline")
    row, field = styled.outputs()[-1]
    assert (row.name, row.setting, row.required, field) == ("body_styled_html", "CEPR_STYLED_HTML", True,
                                                           "body_styled_html")
    assert styled.options.extras() == ("body_styled_html",)
    plain = CEPRConfig(method="wang2009", executor="inline")
    assert [f for _, f in plain.outputs()] == ["title", "body", "cepr_error", "page_type"]


def test_shared_path_names_no_method_extra():
    # Issue 19: no wang2009-only logic in the shared path (the pipeline, the worker, the
    # settings and the options know extras only through the registry).
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "scrapy_cepr"
    for shared in ("pipelines.py", "worker.py", "settings.py", "options.py"):
        tree = ast.parse((package / shared).read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        code = [n.value if isinstance(n, ast.Constant) else getattr(n, "attr", getattr(n, "id", ""))
                for n in ast.walk(tree) if id(n) not in docstrings
                and isinstance(n, (ast.Constant, ast.Attribute, ast.Name))]
        assert not [c for c in code if isinstance(c, str) and "styled" in c], shared


def test_output_fields_follow_the_table():
    # Issue 19: one table gives the fields, their order and what item classes need.
    config = CEPRConfig.from_settings({"CEPR_BODY_FORMATS": "markdown,text,html", "CEPR_METADATA": True,
                                       "CEPR_TITLE_FIELD": "headline"})
    assert [f for _, f in config.outputs()] == ["headline", "body", "cepr_error", "page_type", "cepr_confidence", "body_html",
                                                "body_markdown", "metadata"]
    assert [row.name for row, _ in config.outputs() if not row.required] == ["page_type", "cepr_confidence"]
    assert config.options.formats == ("markdown", "html")


def test_max_workers_has_one_default():
    # Issue 19: the dataclass and the settings agreed on nothing (1 against os.cpu_count()).
    assert CEPRConfig().max_workers == CEPRConfig.from_settings({}).max_workers == (os.cpu_count() or 1)
