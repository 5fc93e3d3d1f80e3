"""WARC fixtures for the archive tests, written with warcio from pages written here
(never copied from a corpus): :func:`write_warc`, :func:`mixed_records`,
:func:`article`."""

from __future__ import annotations

import gzip
import io
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

#: Sentences of the generated articles (written for these tests).
_SENTENCES = (
    "The harbour board met on Tuesday evening, and the vote on the new pier was close.",
    "Fishermen said the plan, which costs more than the old one, would cut their catch.",
    "A spokesperson for the board replied that the design had been reviewed twice.",
    "Work is expected to start in the spring, weather permitting, and last two years.",
    "Residents can read the full plan at the library, or online, until the end of May.",
)


def article(n: int, *, charset: str = "utf-8", title: str | None = None, lang: str | None = "en",
            extra: str = "") -> bytes:
    """A news page: navigation, headline ``title`` (default ``Harbour story N``), four
    paragraphs, footer; encoded in *charset*."""
    title = title or f"Harbour story {n}"
    paras = "\n".join(f"<p>{_SENTENCES[(n + i) % 5]} Report {n}, part {i}; details follow.</p>" for i in range(4))
    lang_attr = f' lang="{lang}"' if lang else ""
    html = (f'<!DOCTYPE html><html{lang_attr}><head><meta charset="{charset}"><title>{title} | Gazette</title></head>'
            f'<body><div class="nav"><a href="/">Home</a> <a href="/local">Local</a></div>'
            f"<h1>{title}</h1><div class=\"story\">{extra}{paras}</div>"
            f'<div class="footer"><a href="/about">About</a> <a href="/contact">Contact</a></div></body></html>')
    return html.encode(charset)


def chunked(data: bytes, size: int = 100) -> bytes:
    """*data* in HTTP/1.1 chunked transfer coding."""
    out = b""
    for i in range(0, len(data), size):
        piece = data[i:i + size]
        out += f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    return out + b"0\r\n\r\n"


def response(url: str, body: bytes, *, status: str = "200 OK", content_type: str | None = "text/html; charset=utf-8",
             headers: Iterable[tuple[str, str]] = (), date: str = "2024-03-01T10:00:00Z",
             warc_headers: dict[str, str] | None = None) -> dict[str, Any]:
    """A ``response`` record spec for :func:`write_warc`."""
    hdrs = ([("Content-Type", content_type)] if content_type else []) + list(headers)
    return {"type": "response", "url": url, "body": body, "status": status, "headers": hdrs, "date": date,
            "warc_headers": warc_headers or {}}


def write_warc(path: Path, specs: Iterable[dict[str, Any]], *, gzip_members: bool = True) -> list[str]:
    """Write the records *specs* to *path* (one gzip member per record unless
    *gzip_members* is False); return their ``WARC-Record-ID``s."""
    ids = []
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=gzip_members)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "scrapy-cepr tests"}))
        for spec in specs:
            rtype = spec["type"]
            rid = f"<urn:uuid:{uuid.uuid4()}>"
            warc_headers = {"WARC-Record-ID": rid, "WARC-Date": spec.get("date", "2024-03-01T10:00:00Z"),
                            **spec.get("warc_headers", {})}
            if rtype in ("response", "revisit"):
                http = StatusAndHeaders(spec["status"], spec["headers"], protocol="HTTP/1.1")
                payload = io.BytesIO(spec["body"])
                rec = writer.create_warc_record(spec["url"], rtype, payload=payload, http_headers=http,
                                                warc_headers_dict=warc_headers)
            else:
                rec = writer.create_warc_record(spec["url"], rtype, payload=io.BytesIO(spec["body"]),
                                                warc_content_type=spec.get("content_type", "text/plain"),
                                                warc_headers_dict=warc_headers)
            writer.write_record(rec)
            ids.append(rid)
    return ids


def mixed_records() -> list[dict[str, Any]]:
    """The records of the issue's fixture list. Kept: ``ok``, ``chunked``, ``gzip``,
    ``latin1`` (4 pages). Skipped: 404 and 301 (``status``), a revisit, a PDF (``mime``),
    a truncated record, a request record (``record_type``), a ``resource`` (``non_http``)."""
    gz = gzip.compress(article(2))
    return [
        response("https://news.example.com/ok", article(1)),
        {"type": "request", "url": "https://news.example.com/ok", "body": b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n",
         "content_type": "application/http; msgtype=request"},
        response("https://news.example.com/missing", b"<html><body>Not found</body></html>", status="404 Not Found"),
        response("https://news.example.com/old", b"", status="301 Moved Permanently",
                 headers=[("Location", "https://news.example.com/ok")]),
        {"type": "revisit", "url": "https://news.example.com/ok", "body": b"", "status": "200 OK",
         "headers": [("Content-Type", "text/html")],
         "warc_headers": {"WARC-Profile": "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"}},
        response("https://news.example.com/report.pdf", b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\n",
                 content_type="application/pdf"),
        response("https://news.example.com/cut", article(9)[:300],
                 warc_headers={"WARC-Truncated": "length"}),
        response("https://news.example.com/chunked", chunked(article(3)),
                 headers=[("Transfer-Encoding", "chunked")]),
        response("https://other.example.org/gzip", gz, headers=[("Content-Encoding", "gzip")],
                 date="2024-03-05T08:00:00Z"),
        {"type": "resource", "url": "dns:news.example.com", "body": b"news.example.com. 60 IN A 192.0.2.1\n"},
        response("https://de.example.net/latin1", article(4, charset="iso-8859-1", title="Grüße aus Köln", lang="de"),
                 content_type="text/html; charset=iso-8859-1", date="2024-04-01T00:00:00Z"),
    ]


def write_pages_warc(path: Path, pages: Iterable[tuple[str, bytes]], *, copies: int = 1,
                     extras: bool = True) -> int:
    """Write *pages* (``(url, html bytes)``) *copies* times each (copy *k* > 0 at
    ``url#copy-k``, a new record id each) to the WARC.gz *path*, one record at a time;
    with *extras*, also a 404, a redirect and a PDF per copy round. Returns the number of
    HTML 200 records written."""
    n = 0
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        pages = list(pages)
        for k in range(copies):
            for url, html in pages:
                target = url if k == 0 else f"{url}#copy-{k}"
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
                writer.write_record(writer.create_warc_record(target, "response", payload=io.BytesIO(html),
                                                              http_headers=http))
                n += 1
            if extras:
                for status, ctype, body in (("404 Not Found", "text/html", b"<html><body>gone</body></html>"),
                                            ("301 Moved Permanently", "text/html", b""),
                                            ("200 OK", "application/pdf", b"%PDF-1.4\n%%EOF\n")):
                    http = StatusAndHeaders(status, [("Content-Type", ctype)], protocol="HTTP/1.1")
                    writer.write_record(writer.create_warc_record(f"https://extras.example/{k}/{status[:3]}",
                                                                  "response", payload=io.BytesIO(body),
                                                                  http_headers=http))
    return n
