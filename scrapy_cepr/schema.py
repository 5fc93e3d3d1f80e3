"""The item schemas of the pipeline's output (``CEPR_ITEM_SCHEMA``): our own fields
(``"cepr"``), or zyte-common-items' ``Article`` (``"zyte"``, :func:`zyte_article`).

With ``"zyte"`` each cleaned page becomes a ``dict`` in the shape of
:class:`zyte_common_items.Article` (built with that package's classes, so its
converters and validators run, then serialised as zyte-common-items serialises its
items: absent values left out), which ``Article.from_dict`` reads back. The values
that the ``Article`` schema has no field for stay beside it under their own names (the
error, the page type, a spider's own fields, ``cepr_metadata``): ``from_dict`` keeps
them in the item's unknown fields, so nothing is lost. docs/formats.rst gives the
mapping field by field.

zyte-common-items is an optional dependency: ``pip install "scrapy-cepr[zyte]"``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

__all__ = ["ITEM_SCHEMAS", "ZYTE_EXTRA", "require_zyte", "zyte_article", "zyte_date"]

logger = logging.getLogger(__name__)

#: Accepted values of ``CEPR_ITEM_SCHEMA``.
ITEM_SCHEMAS: tuple[str, ...] = ("cepr", "zyte")

#: The install command of the ``zyte`` schema, named in the error when it is missing.
ZYTE_EXTRA = 'pip install "scrapy-cepr[zyte]"'


def require_zyte() -> None:
    """Check that zyte-common-items can be imported.

    :raises ImportError: naming ``CEPR_ITEM_SCHEMA`` and the install command.
    """
    try:
        import zyte_common_items  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"CEPR_ITEM_SCHEMA='zyte' needs zyte-common-items: {ZYTE_EXTRA}") from exc


def zyte_date(value: str | None) -> str | None:
    """An ISO 8601 date of our metadata in the ``Article`` format
    (``YYYY-MM-DDThh:mm:ssZ`` or ``YYYY-MM-DDThh:mm:ss±hh:mm``; without a time zone when
    the page gives none, a date alone at midnight); None when *value* is not ISO 8601.

    >>> zyte_date("2024-03-05"), zyte_date("2024-03-05T10:00:00+00:00"), zyte_date("2024-03-05T10:00:00.5+02:00")
    ('2024-03-05T00:00:00', '2024-03-05T10:00:00Z', '2024-03-05T10:00:00+02:00')
    >>> zyte_date("March 5") is None
    True
    """
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    text = parsed.replace(microsecond=0, tzinfo=None).isoformat()
    offset = parsed.utcoffset()
    if offset is None:
        return text
    if not offset:
        return text + "Z"
    return text + parsed.isoformat()[-6:]


def _language(tag: str | None) -> str | None:
    """The language subtag of a BCP 47 *tag* (``en-GB`` -> ``en``): the ``Article``
    schema asks for an ISO 639 code."""
    if not tag:
        return None
    return tag.split("-")[0].lower() or None


def zyte_article(url: str, *, title: str | None = None, body: str | None = None, body_html: str | None = None,
                 metadata: Mapping[str, Any] | None = None, confidence: float | None = None,
                 downloaded: datetime | None = None, beside: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One page as a ``dict`` in the shape of :class:`zyte_common_items.Article`.

    :param url: the page URL (``url``, the one required field).
    :param title: ``headline``.
    :param body: ``articleBody`` (plain text, one block per line); left out when empty.
    :param body_html: ``articleBodyHtml``; left out when empty.
    :param metadata: our metadata (:func:`scrapy_cepr.core.metadata.extract_metadata`):
        ``canonicalUrl``, ``authors``, ``datePublished`` / ``dateModified`` (and their
        ``…Raw`` as we read them), ``inLanguage``, ``mainImage``, ``description``,
        ``breadcrumbs`` when the page declares them.
    :param confidence: ``metadata.probability``, a float in [0, 1] (the item's
        ``cepr_confidence``); left out when None.
    :param downloaded: ``metadata.dateDownloaded`` (UTC), default now.
    :param beside: further keys of the dict, after the ``Article``'s (an ``Article``
        field name among them is refused).
    :returns: the ``Article``'s fields without the absent ones, then *beside*.
    :raises ImportError: zyte-common-items is not installed (:func:`require_zyte`).
    :raises ValueError: *beside* names an ``Article`` field.

    >>> item = zyte_article("https://c.example/a", title="Storm", body="It rained.",
    ...                     metadata={"authors": ["Ann Lee"], "date_published": "2024-03-05", "language": "en-GB"},
    ...                     confidence=0.9, downloaded=datetime(2024, 3, 6, tzinfo=UTC),
    ...                     beside={"cepr_error": None})
    >>> item["headline"], item["authors"], item["datePublished"], item["inLanguage"], item["metadata"]
    ('Storm', [{'name': 'Ann Lee'}], '2024-03-05T00:00:00', 'en', {'dateDownloaded': '2024-03-06T00:00:00Z', 'probability': 0.9})
    >>> item["cepr_error"] is None
    True
    """
    require_zyte()
    import attrs
    from zyte_common_items import Article, ArticleMetadata, Author, Breadcrumb, Image

    m = metadata or {}
    published, modified = m.get("date_published"), m.get("date_modified")
    crumbs = [Breadcrumb(name=c.get("name"), url=c.get("url")) for c in m.get("breadcrumbs") or ()
              if isinstance(c, Mapping) and (c.get("name") or c.get("url"))]
    when = (downloaded or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    # None, not the class default of 1.0: an absent value is left out of the export.
    info = ArticleMetadata(dateDownloaded=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                           probability=None if confidence is None else float(confidence))
    article = Article(
        url=url,
        canonicalUrl=m.get("canonical_url"),
        headline=title or None,
        articleBody=body or None,
        articleBodyHtml=body_html or None,
        authors=[Author(name=a) for a in m.get("authors") or ()] or None,
        datePublished=zyte_date(published),
        datePublishedRaw=published if zyte_date(published) else None,
        dateModified=zyte_date(modified),
        dateModifiedRaw=modified if zyte_date(modified) else None,
        inLanguage=_language(m.get("language")),
        mainImage=Image(url=m["image"]) if m.get("image") else None,
        description=m.get("description") or None,
        breadcrumbs=crumbs or None,
        metadata=info,
    )
    out = _zyte_adapter_class()(article).asdict()
    fields = attrs.fields_dict(Article)
    for key, value in (beside or {}).items():
        if key in fields:
            raise ValueError(f"{key!r} is a field of zyte_common_items.Article")
        out[key] = value
    return out


@lru_cache(maxsize=1)
def _zyte_adapter_class() -> type:
    """ItemAdapter with zyte-common-items' adapter first (absent values left out, as
    zyte-common-items serialises its items), without registering it globally."""
    from itemadapter import ItemAdapter
    from zyte_common_items import ZyteItemAdapter

    return type("ZyteFirstAdapter", (ItemAdapter,), {"ADAPTER_CLASSES": (ZyteItemAdapter, *ItemAdapter.ADAPTER_CLASSES)})
