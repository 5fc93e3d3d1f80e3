"""Sphinx configuration of the scrapy-cepr documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (warnings are errors, as in
CI). The settings reference is generated from :data:`scrapy_cepr.settings.SETTINGS_DOC`
and each method's parameters dataclass by the ``cepr-settings`` directive below; the API
reference comes from the docstrings (autodoc).
"""

from __future__ import annotations

import os
import sys

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

sys.path.insert(0, os.path.abspath(".."))

import scrapy_cepr  # noqa: E402

project = "scrapy-cepr"
author = "scrapy-cepr contributors"
copyright = "scrapy-cepr contributors, BSD-3-Clause"  # noqa: A001 - Sphinx's name
release = scrapy_cepr.__version__
version = release

extensions = ["sphinx.ext.autodoc", "sphinx.ext.viewcode", "sphinx.ext.intersphinx", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 3
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path: list[str] = []
nitpicky = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "show-inheritance": False}
# Objects documented in several places (re-exported names): one canonical entry.
suppress_warnings = ["ref.python"]
intersphinx_mapping: dict[str, tuple[str, None]] = {}


def _rst_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {cell}" for cell in row[1:]]
    return lines


class SettingsDirective(SphinxDirective):
    """``.. cepr-settings::`` — the general settings (``general``) or each method's
    parameters (``methods``), generated from the code."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        from scrapy_cepr.methods import METHOD_NAMES
        from scrapy_cepr.settings import SETTINGS_DOC, method_settings

        if self.arguments[0] == "general":
            rows = [[f"``{n}``", f"``{d}``", desc.replace("*", r"\*")] for n, d, desc in SETTINGS_DOC]
            lines = _rst_table(["Setting", "Default", "Description"], rows)
        else:
            rows = []
            for name in METHOD_NAMES:
                params = ", ".join(f"``{s}`` = ``{d}``" for s, d, _ in method_settings(name))
                rows.append([f"``{name}``", params or "(none)"])
            lines = _rst_table(["Method (``CEPR_METHOD``)", "Settings and defaults"], rows)
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(StringList(lines, source="scrapy_cepr.settings"), self.content_offset, node)
        return node.children


def setup(app):
    app.add_directive("cepr-settings", SettingsDirective)
    return {"parallel_read_safe": True}
