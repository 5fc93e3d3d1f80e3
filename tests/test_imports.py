"""The package's import graph (issue 19): no cycle, the core imports nothing outside
``scrapy_cepr/core/``, no method module imports another, and the extraction side never
imports Scrapy.

Every import is read from the source with :mod:`ast`, including the ones inside
functions (which would hide a cycle from a plain ``import``) and
``importlib.import_module("literal")``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "scrapy_cepr"

#: Modules that must not import Scrapy or Twisted (the worker runs without them).
SCRAPY_FREE = ("scrapy_cepr.core", "scrapy_cepr.methods", "scrapy_cepr.api", "scrapy_cepr.worker",
               "scrapy_cepr.transport", "scrapy_cepr.options")


def _modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under *package*."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported_names(module: str, path: Path) -> set[str]:
    """The absolute dotted names *module* imports, anywhere in its source (module level,
    functions, ``TYPE_CHECKING`` blocks) and through ``importlib.import_module`` with a
    literal name. ``from a import b`` gives both ``a`` and ``a.b``."""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - node.level + 1]
                target = ".".join(parent + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            names.update(f"{target}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value)
    return names


def import_graph(package: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """``(edges, external)``: *edges* maps each module of *package* to the modules of the
    package it imports (a name is reduced to the longest module it names; a module's own
    parent packages are left out); *external* maps it to the top-level names of the
    other packages it imports."""
    modules = _modules(package)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    external: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for name in _imported_names(module, path):
            if name.split(".")[0] != package.name:
                external[module].add(name.split(".")[0])
                continue
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(target + "."):
                edges[module].add(target)
    return edges, external


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    return import_graph(PACKAGE)


def test_no_import_cycle(graph):
    edges, _ = graph
    assert cycles(edges) == []


def test_core_imports_only_core(graph):
    edges, _ = graph
    upward = {m: sorted(t for t in targets if not (t + ".").startswith("scrapy_cepr.core."))
              for m, targets in edges.items() if (m + ".").startswith("scrapy_cepr.core.")}
    assert {m: t for m, t in upward.items() if t} == {}


def test_no_method_module_imports_another(graph):
    edges, _ = graph
    methods = [m for m in edges if m.startswith("scrapy_cepr.methods.")]
    assert methods, "no method module found"
    sideways = {m: sorted(t for t in edges[m] if t.startswith("scrapy_cepr.methods.")) for m in methods}
    assert {m: t for m, t in sideways.items() if t} == {}


def test_extraction_side_does_not_import_scrapy(graph):
    _, external = graph
    offenders = {m: sorted(external[m] & {"scrapy", "twisted"}) for m in external
                 if any(m == p or m.startswith(p + ".") for p in SCRAPY_FREE)}
    assert {m: e for m, e in offenders.items() if e} == {}


def test_walker_sees_hidden_imports(tmp_path):
    # The checks above are only as good as the walker: a cycle through an import inside a
    # function, a relative "from . import x", and importlib.import_module("...") must all
    # be seen, and a package's own parents must not count as a cycle.
    pkg = tmp_path / "pkg"
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .core import a\n")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "a.py").write_text("import pkg\n\ndef f():\n    from . import b\n")
    (pkg / "core" / "b.py").write_text("import importlib\n\ndef g():\n    importlib.import_module('pkg.core.a')\n")
    (pkg / "top.py").write_text("from pkg.core.b import g\n")
    edges, external = import_graph(pkg)
    assert edges["pkg.core.a"] == {"pkg.core.b"}
    assert edges["pkg.core.b"] == {"pkg.core.a"}
    assert edges["pkg.top"] == {"pkg.core.b"}
    assert external["pkg.core.b"] == {"importlib"}
    assert cycles(edges) == [["pkg.core.a", "pkg.core.b"]]


def test_every_public_exception_is_in_the_exceptions_module():
    # issue 19: one documented exceptions module (as scrapy.exceptions); the classes may
    # be defined in core/errors.py (the core imports nothing outside core/) and are
    # re-exported, and stay importable from where they were defined before.
    import scrapy_cepr.exceptions

    found = {}
    for module, path in _modules(PACKAGE).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                if any(b.endswith(("Error", "Exception")) or b in scrapy_cepr.exceptions.__all__ for b in bases):
                    found[node.name] = module
    assert found, "no exception class found"
    assert {name for name in found if name not in scrapy_cepr.exceptions.__all__} == set()
    assert {m for m in found.values()} <= {"scrapy_cepr.exceptions", "scrapy_cepr.core.errors"}
