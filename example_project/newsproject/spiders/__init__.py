"""Spiders of the scrapy-cepr example project."""
