"""Former home of :mod:`scrapy_cepr.core.metadata`; its public names are re-exported here
so that ``from scrapy_cepr.metadata import extract_metadata`` keeps working."""

from .core.metadata import METADATA_KEYS, empty_metadata, extract_metadata, guess_language, move_byline

__all__ = ["METADATA_KEYS", "empty_metadata", "extract_metadata", "guess_language", "move_byline"]
