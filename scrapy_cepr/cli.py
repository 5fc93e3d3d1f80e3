"""The ``scrapy-cepr`` command line: ``extract``, ``evaluate`` and ``plot``.

* ``scrapy-cepr extract FILE|URL|- …`` prints the title and the body of pages, in the
  style of trafilatura's command line: ``--output-format txt|json|markdown|html``,
  ``--with-metadata``, many inputs or ``--input-dir`` with a progress bar,
  ``--parallel N`` processes, ``--output-dir`` (per-node records with ``--nodes``);
* ``scrapy-cepr evaluate CORPUS`` scores methods on an evaluation corpus (the
  article-extraction-benchmark layout or JSON lines with ``html`` and ``gold_body``) under
  the CEPR paper's metrics (Eqs. 7–8) and the benchmark's shingle metric (spec §6), with
  the median time per page; ``--write-floor`` pins the quality floor of the CI gate;
* ``scrapy-cepr plot FILE|URL -o page.png`` draws the CEPR paper's Figures 5–7 for a page.

Errors on the *input* (unreadable file, unreachable URL, not HTML, an input above
``--max-bytes``) print one line on stderr and exit with status 1; bad *parameters* (a
malformed or non-http(s) URL, an unusable ``--output-dir``) exit with status 2, as
argparse does. Files, devices and stdin are read up to the same cap as fetched pages
(:data:`MAX_INPUT_BYTES`); only ``http://`` and ``https://`` URLs are fetched, any other
``scheme://`` is refused, and everything else is a file path.
Tracebacks are shown only with ``--verbose`` (``-v``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import __version__
from .api import extract
from .core.errors import ExtractionError
from .evaluation import FLOOR_TOLERANCE as FLOOR_TOLERANCE  # defined here before issue 19
from .evaluation import REPIN_COMMAND as REPIN_COMMAND
from .evaluation import (
    MethodResult,
    Sample,
    corpus_digest,
    evaluate_methods,
    floor_record,
    format_page_losses,
    load_corpus,
    page_loss,
)
from .exceptions import InputError, UsageError
from .methods import DEFAULT_METHOD, METHOD_NAMES, get_method

__all__ = [
    "DEFAULT_EVAL_METHODS",
    "build_parser",
    "main",
    "parse_param",
    "parse_value",
    "read_source",
]

logger = logging.getLogger(__name__)

PROG = "scrapy-cepr"
#: Methods scored by ``evaluate`` when no ``--method`` is given.
DEFAULT_EVAL_METHODS: tuple[str, ...] = ("tpr", "etpr", "setpr")
#: Largest input read (a file, stdin or a URL's response), in bytes: as the crawl's
#: ``CEPR_MAX_HTML_BYTES`` default. ``scrapy-cepr extract --max-bytes`` changes it.
MAX_INPUT_BYTES = 10_000_000
#: Largest response read from a URL, in bytes (:data:`MAX_INPUT_BYTES`).
MAX_FETCH_BYTES = MAX_INPUT_BYTES
#: Timeout of a URL fetch, in seconds.
FETCH_TIMEOUT = 20.0


_URL_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")


def check_source(source: str) -> str:
    """Say what *source* is: ``"stdin"`` (``-``), ``"url"`` (an ``http(s)://`` URL) or
    ``"path"`` (anything else that is not ``scheme://…``).

    :raises UsageError: a ``scheme://`` other than http(s) (``file://``, ``ftp://``: give a
        file by its path), or a malformed http(s) URL (no host, bad port, spaces or
        control characters).

    >>> check_source("-"), check_source("https://example.com/a"), check_source("page.html")
    ('stdin', 'url', 'path')
    """
    if source == "-":
        return "stdin"
    match = _URL_RE.match(source)
    if match is None:
        return "path"
    if match.group(1).lower() not in ("http", "https"):
        raise UsageError(f"{source}: only http:// and https:// URLs are fetched; give a local file by its path")
    try:
        parts = urlsplit(source)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise UsageError(f"{source}: invalid URL: {exc}") from None
    if not parts.hostname:
        raise UsageError(f"{source}: invalid URL: no host")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in source):
        raise UsageError(f"{source}: invalid URL: spaces or control characters (percent-encode them)")
    return "url"


# --------------------------------------------------------------------------- params


def parse_value(text: str) -> int | float | str | bool:
    """A ``--param`` value: ``true``/``false`` as a bool, int if it parses as one, else
    float, else the string.

    >>> parse_value("3"), parse_value("0.5"), parse_value("1e-3"), parse_value("pad"), parse_value("False")
    (3, 0.5, 0.001, 'pad', False)
    """
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_param(text: str) -> tuple[str, int | float | str]:
    """``NAME=VALUE`` of ``--param`` as ``(name, value)``; dashes in NAME become
    underscores.

    :raises argparse.ArgumentTypeError: no ``=`` or an empty name.

    >>> parse_param("smoothing-radius=2")
    ('smoothing_radius', 2)
    """
    name, sep, value = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, parse_value(value.strip())


def _given_params(args: argparse.Namespace) -> dict[str, Any]:
    given: dict[str, Any] = {}
    for name in ("alpha", "lambda_", "radius"):
        value = getattr(args, name, None)
        if value is not None:
            given[name] = value
    for name, value in getattr(args, "param", None) or []:
        given[name] = value
    return given


def _params_per_method(methods: Sequence[str], given: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Split the given parameters among *methods*: each method gets those it declares.
    A name no method declares is an error; so is a bad value (checked by the method's
    parameters class). ``lambda`` is accepted for ``lambda_``.

    :raises ValueError: unknown parameter or bad value, naming it.
    """
    out: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    known_all: list[str] = []
    for name in methods:
        try:
            spec = get_method(name)
        except ImportError as exc:
            raise ValueError(f"method {name!r} is not available ({exc})") from None
        known = spec.param_names()
        known_all.extend(k for k in known if k not in known_all)
        mine = {}
        for key, value in given.items():
            real = key if key in known else (key + "_" if key + "_" in known else None)
            if real is not None:
                mine[real] = value
                used.add(key)
        spec.make_params(**mine)  # validates; raises ValueError naming the parameter
        out[name] = mine
    unknown = [k for k in given if k not in used]
    if unknown:
        raise ValueError(
            f"unknown parameter {unknown[0]!r} for method {', '.join(methods)}; "
            f"allowed: {', '.join(known_all) or '(none)'}"
        )
    return out


def _split_methods(values: Sequence[str] | None, default: Sequence[str]) -> list[str]:
    """``--method a --method b,c`` -> ``[a, b, c]``; ``all`` means every method that can
    be imported (others are skipped with a warning)."""
    if not values:
        return list(default)
    names: list[str] = []
    for value in values:
        for name in value.split(","):
            name = name.strip()
            if not name:
                continue
            if name == "all":
                for m in METHOD_NAMES:
                    if m not in names and _available(m):
                        names.append(m)
                continue
            if name not in METHOD_NAMES:
                raise ValueError(f"method must be one of {', '.join(METHOD_NAMES)} or all; got {name!r}")
            if name not in names:
                names.append(name)
    return names


def _available(name: str) -> bool:
    try:
        get_method(name)
    except ImportError as exc:
        logger.warning("method %s is not available (%s); skipped", name, exc)
        return False
    return True


# --------------------------------------------------------------------------- input


def read_source(
    source: str, *, timeout: float = FETCH_TIMEOUT, max_bytes: int = MAX_INPUT_BYTES
) -> tuple[bytes, str | None, str | None]:
    """Read a page from a file path, an ``http(s)://`` URL or ``-`` (stdin), at most
    *max_bytes* bytes (a device such as ``/dev/zero`` or an endless stdin stops there).

    :returns: ``(raw bytes, url or None, charset from the HTTP header or None)``.
    :raises UsageError: a non-http(s) or malformed URL (:func:`check_source`).
    :raises InputError: unreadable file, fetch failure, or an input above *max_bytes*.
    """
    kind = check_source(source)
    too_large = f"{source}: larger than {max_bytes} bytes (raise the limit with --max-bytes)"
    if kind == "stdin":
        data = sys.stdin.buffer.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise InputError(too_large)
        return data, None, None
    if kind == "url":
        request = urllib.request.Request(source, headers={"User-Agent": f"{PROG}/{__version__}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                data = response.read(max_bytes + 1)
                charset = response.headers.get_content_charset()
                url = response.geturl()
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise InputError(f"{source}: cannot fetch: {reason}") from exc
        if len(data) > max_bytes:
            raise InputError(too_large)
        logger.info("fetched %s (%d bytes, charset %s)", url, len(data), charset)
        return data, url, charset
    try:
        with open(source, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:
        raise InputError(too_large)
    return data, None, None


# --------------------------------------------------------------------------- evaluation


def _markdown_table(results: dict[str, MethodResult]) -> str:
    head = (
        "| method | bench P | bench R | bench F1 | accuracy | paper P | paper R | paper F | paper score "
        "| median ms | failures |"
    )
    lines = [head, "|" + "|".join(["---"] * 11) + "|"]
    for name, r in results.items():
        b, p = r.benchmark, r.paper
        lines.append(
            f"| {name} | {b['precision']:.4f} | {b['recall']:.4f} | {b['f1']:.4f} | {b['accuracy']:.4f} "
            f"| {p.precision:.4f} | {p.recall:.4f} | {p.f1:.4f} | {p.score:.4f} | {r.median_ms:.2f} | {r.failures} |"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- commands


#: ``--output-format`` values and the file extension of each (with ``--output-dir``).
OUTPUT_FORMATS: dict[str, str] = {"txt": ".txt", "json": ".json", "markdown": ".md", "html": ".html"}
#: Files read from ``--input-dir`` (searched recursively).
INPUT_SUFFIXES: tuple[str, ...] = (".html", ".htm", ".xhtml")


@dataclass(frozen=True)
class ExtractOptions:
    """What ``scrapy-cepr extract`` computes and prints for each page (picklable: it is
    sent to the ``--parallel`` workers).

    ``output_format``: one of :data:`OUTPUT_FORMATS`; ``with_metadata``: add
    :attr:`Extraction.metadata <scrapy_cepr.core.result.Extraction.metadata>`;
    ``body_formats``: extra body formats in JSON output (``"html"``, ``"markdown"``);
    ``nodes``: per-node records in JSON output; ``indent``: JSON indentation (None: one
    line, as in JSON lines).
    """

    method: str = "setpr"
    params: tuple[tuple[str, Any], ...] = ()
    encoding: str | None = None
    output_format: str = "txt"
    with_metadata: bool = False
    body_formats: tuple[str, ...] = ()
    nodes: bool = False
    indent: int | None = 2
    max_bytes: int = MAX_INPUT_BYTES


def render(result: Any, options: ExtractOptions) -> str:
    """One page's output in ``options.output_format`` (ends with a newline).

    * ``txt``: the title, a blank line, the body; with metadata, a header of
      ``key: value`` lines between ``---`` lines first (as trafilatura's);
    * ``json``: :meth:`Extraction.to_dict <scrapy_cepr.core.result.Extraction.to_dict>`;
    * ``markdown``: ``# title``, then ``body_markdown``; with metadata, YAML-like front
      matter;
    * ``html``: a small document, ``<h1>`` title then ``body_html`` in ``<article>``;
      with metadata, ``<meta>`` elements in its head.

    :param result: an :class:`~scrapy_cepr.core.result.Extraction`.
    """
    fmt = options.output_format
    meta = result.metadata if options.with_metadata else None
    if fmt == "json":
        data = result.to_dict(nodes=options.nodes, formats=options.body_formats, metadata=options.with_metadata)
        return json.dumps(data, ensure_ascii=False, indent=options.indent) + "\n"
    if fmt == "html":
        import html as html_lib

        esc = html_lib.escape
        head = ['<meta charset="utf-8">', f"<title>{esc(result.title or '')}</title>"]
        if meta:
            for key, value in _meta_lines(meta):
                head.append(f'<meta name="{esc(key)}" content="{esc(value)}">')
        lang = f' lang="{esc(meta["language"])}"' if meta and meta.get("language") else ""
        title = f"<h1>{esc(result.title)}</h1>\n" if result.title else ""
        if title and title.rstrip("\n") in result.body_html:  # the body holds the headline already
            title = ""
        return (f"<!DOCTYPE html>\n<html{lang}>\n<head>\n" + "\n".join(head) + "\n</head>\n<body>\n<article>\n"
                f"{title}{result.body_html}\n</article>\n</body>\n</html>\n")
    header = ""
    if meta:
        header = "---\n" + "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in _meta_lines(meta)) + "---\n"
    if fmt == "markdown":
        title = f"# {result.title}\n\n" if result.title else ""
        if title and result.body_markdown.startswith(title.rstrip("\n")):
            title = ""
        return f"{header}{title}{result.body_markdown}\n"
    return f"{header}{result.title or ''}\n\n{result.body}\n"


def _meta_lines(meta: dict[str, Any]) -> list[tuple[str, str]]:
    """The present metadata values as ``(key, text)``, lists joined with ``"; "``."""
    out = []
    for key, value in meta.items():
        if key == "sources" or value in (None, [], ""):
            continue
        out.append((key, "; ".join(value) if isinstance(value, list) else str(value)))
    return out


def extract_one(source: str, options: ExtractOptions) -> tuple[str, str | None, str | None]:
    """Read, extract and render one input (the unit of work of ``--parallel``).

    :returns: ``(source, output, None)``, or ``(source, None, one-line error)`` for an
        input error (unreadable, not HTML); other exceptions propagate.
    """
    try:
        data, url, charset = read_source(source, max_bytes=options.max_bytes)
        if url is None and source != "-":
            url = Path(source).resolve().as_uri()
        result = extract(data, url=url, method=options.method, encoding=options.encoding or charset,
                         **dict(options.params))
        return source, render(result, options), None
    except InputError as exc:
        return source, None, str(exc)
    except ExtractionError as exc:
        return source, None, f"{source}: {exc}"


def _inputs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    sources = list(args.source)
    if args.input_dir:
        root = Path(args.input_dir)
        if not root.is_dir():
            raise InputError(f"{root}: not a directory")
        sources += sorted(str(p) for p in root.rglob("*") if p.is_file() and p.suffix.lower() in INPUT_SUFFIXES)
    if not sources and not args.input_dir:
        parser.error("give at least one FILE|URL|- or --input-dir")
    return sources


def _cmd_extract(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.warc:
        return _cmd_extract_warc(args, parser)
    try:
        params = _params_per_method([args.method], _given_params(args))[args.method]
    except ValueError as exc:
        parser.error(str(exc))
    from .core.formats import BODY_FORMATS

    formats = tuple(f.strip() for f in (args.body_formats or "").split(",") if f.strip() and f.strip() != "text")
    if any(f not in BODY_FORMATS for f in formats):
        parser.error(f"--body-formats must be names among {', '.join(BODY_FORMATS)}; got {args.body_formats!r}")
    if args.parallel < 1:
        parser.error(f"--parallel must be >= 1; got {args.parallel}")
    if args.max_bytes < 1:
        parser.error(f"--max-bytes must be >= 1; got {args.max_bytes}")
    fmt = "json" if (args.json or args.nodes) else args.output_format
    sources = _inputs(args, parser)
    for source in sources:  # a bad URL is a usage error, before any page is read
        check_source(source)
    if args.output_dir is not None:
        try:
            Path(args.output_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--output-dir {args.output_dir}: {exc.strerror or exc}") from None
    many = len(sources) > 1 or bool(args.input_dir)
    options = ExtractOptions(method=args.method, params=tuple(params.items()), encoding=args.encoding,
                             output_format=fmt, with_metadata=args.with_metadata, body_formats=formats,
                             nodes=args.nodes, indent=None if many and not args.output_dir else 2,
                             max_bytes=args.max_bytes)
    if not many:
        source, output, error = extract_one(sources[0], options)
        if error is not None:
            raise InputError(error)
        return _write(source, output, args.output_dir, fmt)
    from tqdm import tqdm

    failures = 0
    bar = tqdm(total=len(sources), unit="page", file=sys.stderr, disable=args.quiet, leave=False)
    try:
        for source, output, error in _run_many(sources, options, args.parallel):
            bar.update()
            if error is not None:
                failures += 1
                sys.stderr.write(f"{PROG}: error: {error.splitlines()[0]}\n")
                continue
            _write(source, output, args.output_dir, fmt)
    finally:
        bar.close()
    if failures:
        logger.warning("%d of %d inputs failed", failures, len(sources))
    return 1 if failures else 0


def _cmd_extract_warc(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``extract --warc FILE…``: one JSON line per archived HTML page on stdout
    (:func:`scrapy_cepr.archive.extract_archives`); skipped records counted on stderr."""
    if args.source or args.input_dir or args.output_dir:
        parser.error("--warc reads archives only: give no FILE|URL, --input-dir or --output-dir")
    if args.parallel < 1 or args.max_bytes < 1:
        parser.error("--parallel and --max-bytes must be >= 1")
    from collections import Counter

    from .archive import ArchiveFilter, expand_paths, extract_archives

    try:
        params = _params_per_method([args.method], _given_params(args))[args.method]
        filters = ArchiveFilter.from_args(hosts=args.hosts, since=args.since, until=args.until)
        paths = expand_paths(args.warc)
    except ValueError as exc:
        parser.error(str(exc))
    formats = tuple(f.strip() for f in (args.body_formats or "").split(",") if f.strip() and f.strip() != "text")
    skipped: Counter[str] = Counter()
    pages = 0
    try:
        for row in extract_archives(paths, filters, method=args.method, params=params, body_formats=formats,
                                    with_metadata=args.with_metadata, max_bytes=args.max_bytes,
                                    parallel=args.parallel, on_skip=lambda reason: skipped.update([reason])):
            pages += 1
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise InputError(f"{getattr(exc, 'filename', None) or 'archive'}: {exc.strerror or exc}") from None
    if not args.quiet:
        detail = ", ".join(f"{k} {v}" for k, v in sorted(skipped.items()))
        sys.stderr.write(f"{PROG}: {pages} pages from {len(paths)} archives; skipped {sum(skipped.values())}"
                         f"{f' ({detail})' if detail else ''}\n")
    return 0


def _run_many(sources: list[str], options: ExtractOptions, parallel: int) -> Iterable[tuple[str, str | None, str | None]]:
    """Results in input order; with *parallel* > 1 from a process pool (chunks of pages
    per task, so the pool's transport cost stays small)."""
    if parallel == 1:
        for source in sources:
            yield extract_one(source, options)
        return
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial
    from multiprocessing import get_context

    chunk = max(1, min(16, len(sources) // (4 * parallel)))
    with ProcessPoolExecutor(max_workers=parallel, mp_context=get_context("spawn")) as pool:
        yield from pool.map(partial(extract_one, options=options), sources, chunksize=chunk)


def _write(source: str, output: str | None, output_dir: str | None, fmt: str) -> int:
    """Print *output*, or write it to ``output_dir/<name>.<ext>`` (name from the input)."""
    if output_dir is None:
        sys.stdout.write(output or "")
        return 0
    directory = Path(output_dir)
    if source == "-" or urlsplit(source).scheme in ("http", "https"):
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in source.rstrip("/").rsplit("/", 1)[-1]) or "page"
    else:
        stem = Path(source).name.split(".")[0] or "page"
    target = directory / (stem + OUTPUT_FORMATS[fmt])
    try:
        target.write_text(output or "", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from exc
    return 0


def _cmd_evaluate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        methods = _split_methods(args.method, DEFAULT_EVAL_METHODS)
        given = _given_params(args)
        if args.write_floor and given:
            raise ValueError("--write-floor pins the default parameters; drop the method parameters")
        if args.per_page < 0:
            raise ValueError(f"--per-page must be >= 0, got {args.per_page}")
        params = _params_per_method(methods, given)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        samples = load_corpus(args.corpus)
        first = next(samples, None)
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(str(exc)) from exc
    if first is None:
        raise InputError(f"{args.corpus}: the corpus has no pages")

    def pages() -> Iterable[Sample]:
        yield first
        yield from samples

    progress = not args.quiet and sys.stderr.isatty()
    try:
        total = _count_pages(Path(args.corpus)) if progress else None
        results = evaluate_methods(pages(), methods, params, progress=progress, total=total, worst=args.per_page)
    except ValueError as exc:  # a malformed JSON-lines record
        raise InputError(str(exc)) from exc
    n = next(iter(results.values())).benchmark["pages"] if results else 0
    if args.write_floor:
        record = floor_record(results, corpus_digest(load_corpus(args.corpus)))
        Path(args.write_floor).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        logger.warning("quality floor written to %s", args.write_floor)
    if args.json:
        out = {
            "corpus": str(args.corpus),
            "pages": n,
            "methods": {k: r.to_dict() for k, r in results.items()},
        }
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(f"corpus: {args.corpus} ({n} pages)\n\n{_markdown_table(results)}\n")
        for name, r in results.items() if args.per_page else ():
            losses = [page_loss(s.id, s.url, body, s.gold_body) for _, _, s, body in sorted(r.worst, reverse=True)]
            sys.stdout.write(f"\n{format_page_losses(name, losses)}\n")
    return 0


def _count_pages(path: Path) -> int | None:
    """Pages in a corpus without reading them (for the progress bar), or None."""
    try:
        if (path / "ground-truth.json").is_file():
            return len(json.loads((path / "ground-truth.json").read_text(encoding="utf-8")))
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            path = found[0] if len(found) == 1 else path
        with path.open("rb") as fh:
            return sum(1 for line in fh if line.strip())
    except (OSError, ValueError):
        return None


def _cmd_plot(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .plot import plot_page

    kwargs: dict[str, Any] = {}
    if args.lambda_ is not None:
        kwargs["lambda_"] = args.lambda_
    if args.radius is not None:
        kwargs["radius"] = args.radius
    try:
        get_method("setpr").make_params(**kwargs)
    except ValueError as exc:
        parser.error(str(exc))
    data, url, charset = read_source(args.source)
    plot_page(data, args.output, url=url, encoding=args.encoding or charset, scale=args.scale, **kwargs)
    logger.warning("plot written to %s", args.output)
    return 0


# --------------------------------------------------------------------------- parser


def _add_method_params(p: argparse.ArgumentParser, *, alpha: bool = True) -> None:
    g = p.add_argument_group("method parameters (defaults: the paper's values)")
    if alpha:
        g.add_argument("--alpha", type=float, metavar="A", help="threshold factor α of τ = α·σ (>= 0)")
    g.add_argument(
        "--lambda",
        dest="lambda_",
        type=float,
        metavar="L",
        help="SETPR: λ of the path weight 1/dist^λ (>= 0)",
    )
    g.add_argument("--radius", type=int, metavar="R", help="SETPR: smoothing radius r (window 2r+1)")
    if alpha:
        g.add_argument(
            "--param",
            action="append",
            type=parse_param,
            metavar="NAME=VALUE",
            help="any other parameter of the method (repeatable; VALUE read as int, float or string)",
        )


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``scrapy-cepr`` with its subcommands."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Extract the main content of news pages (CEPR and other methods)."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "extract",
        help="print the title and body of one page",
        description="Print the title and main content of one page.",
    )
    p.add_argument("source", metavar="FILE|URL|-", nargs="*",
                   help="HTML files, http(s) URLs, or - for stdin (many allowed)")
    p.add_argument("--input-dir", metavar="DIR", help="also every .html/.htm/.xhtml file under DIR (recursive)")
    p.add_argument("--output-dir", metavar="DIR",
                   help="write one file per input to DIR (name of the input, extension of the format) "
                        "instead of printing")
    p.add_argument(
        "--method", default=DEFAULT_METHOD, choices=METHOD_NAMES, help=f"extraction method (default: {DEFAULT_METHOD})"
    )
    p.add_argument("--encoding", help="charset to try first when decoding the bytes")
    p.add_argument("--output-format", choices=tuple(OUTPUT_FORMATS), default="txt",
                   help="txt (title, blank line, body), json, markdown (body_markdown) or html (body_html); "
                        "default txt")
    p.add_argument("--with-metadata", action="store_true",
                   help="add the metadata (authors, dates, language, lead image …): a header in txt/markdown, "
                        "<meta> in html, a 'metadata' key in json")
    p.add_argument("--body-formats", metavar="LIST", default="",
                   help="json output: also body_html and/or body_markdown (comma-separated: html,markdown)")
    p.add_argument("--max-bytes", type=int, default=MAX_INPUT_BYTES, metavar="N",
                   help=f"largest input read from a file, stdin or a URL, in bytes (default {MAX_INPUT_BYTES}, "
                        "as CEPR_MAX_HTML_BYTES)")
    p.add_argument("--parallel", type=int, default=1, metavar="N",
                   help="extract many inputs in a pool of N processes (default 1)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar (shown for many inputs)")
    p.add_argument("--json", action="store_true", help="same as --output-format json")
    p.add_argument(
        "--nodes", action="store_true", help="with the per-node inspection records (implies --json)"
    )
    w = p.add_argument_group("web archives (pip install 'scrapy-cepr[warc]'; see docs/archives.md)")
    w.add_argument("--warc", nargs="+", metavar="FILE",
                   help="read the HTML responses of WARC, WARC.gz or WACZ files (globs allowed) and print one "
                        "JSON line per page (url, warc_date, warc_record_id, warc_file, warc_offset, title, body)")
    w.add_argument("--hosts", metavar="LIST", help="--warc: only these hosts and their subdomains (comma-separated)")
    w.add_argument("--since", metavar="DATE", help="--warc: WARC-Date from DATE (YYYY-MM-DD or ISO 8601)")
    w.add_argument("--until", metavar="DATE", help="--warc: WARC-Date up to DATE (a bare date: that whole day)")
    _add_method_params(p)
    p.set_defaults(func=_cmd_extract, subparser=p)

    p = sub.add_parser(
        "evaluate",
        help="score methods on an evaluation corpus",
        description=(
            "Score methods on a corpus: the article-extraction-benchmark layout (ground-truth.json + "
            "html/) or JSON lines with html and gold_body. Prints benchmark P/R/F1 and accuracy, the "
            "CEPR paper's macro P/R/F/score, and the median ms per page."
        ),
    )
    p.add_argument("corpus", metavar="DATASET_DIR", help="corpus directory or .jsonl file")
    p.add_argument(
        "--method",
        action="append",
        metavar="NAME[,NAME…]",
        help=f"method(s) to score, repeatable or comma-separated, or 'all' (default: {','.join(DEFAULT_EVAL_METHODS)})",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--per-page",
        type=int,
        default=0,
        metavar="N",
        help="also list, per method, the N pages with the lowest F1 and what it kept wrongly (+) and missed (-)",
    )
    p.add_argument(
        "--write-floor",
        metavar="FILE",
        help="also write the quality floor (corpus digest, F1/P/R per method) to FILE, e.g. tests/quality_floor.json",
    )
    _add_method_params(p)
    p.set_defaults(func=_cmd_evaluate, subparser=p)

    p = sub.add_parser(
        "plot",
        help="draw the TPR/ETPR/SETPR histograms of one page (CEPR Figs. 5–7)",
        description="Draw the CEPR paper's Figures 5–7 for one page: the TPR, ETPR and SETPR histograms "
        "over its text nodes with each τ, the content nodes and the title node. Needs matplotlib "
        "(pip install scrapy-cepr[plot]).",
    )
    p.add_argument("source", metavar="FILE|URL|-", help="an HTML file, an http(s) URL, or - for stdin")
    p.add_argument(
        "-o", "--output", required=True, metavar="PNG", help="image file to write (.png, .svg, .pdf)"
    )
    p.add_argument("--encoding", help="charset to try first when decoding the bytes")
    p.add_argument(
        "--scale",
        choices=("symlog", "linear"),
        default="symlog",
        help="y axis scale (default: symlog, zeros shown)",
    )
    _add_method_params(p, alpha=False)
    p.set_defaults(func=_cmd_plot, subparser=p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``scrapy-cepr`` with *argv* (default ``sys.argv[1:]``); returns the exit status
    (0 ok, 1 input error, 2 usage error, 130 interrupted)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING if args.verbose == 0 else logging.INFO if args.verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format=f"{PROG}: %(message)s", stream=sys.stderr)
    try:
        return args.func(args, args.subparser)
    except UsageError as exc:
        return _fail(str(exc), 2)
    except InputError as exc:
        return _fail(str(exc))
    except ExtractionError as exc:  # NotHTMLError: name the input
        return _fail(f"{getattr(args, 'source', '')}: {exc}")
    except ImportError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: one line for the user, the traceback with -v
        logger.debug("traceback", exc_info=True)
        return _fail(f"internal error: {type(exc).__name__}: {exc} (run with -vv for the traceback)")


def _fail(message: str, status: int = 1) -> int:
    sys.stderr.write(f"{PROG}: error: {message.splitlines()[0] if message else 'failed'}\n")
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
