"""CEPR-Article (``cepr-article``): SETPR's content score restricted to the one article
region below the headline, with the region's comment thread and boilerplate removed.

The steps, their sources (Wu et al. 2013; Wang et al. 2009; Laber et al. 2009; Zhang et
al. 2018) and their parameters are documented in :mod:`scrapy_cepr.core.article`, where
they live because CEPR-Typed (:mod:`.typed`) builds on them too; this module is the
method's entry in the registry (:mod:`scrapy_cepr.methods`).
"""

from __future__ import annotations

from ..core.article import NON_ARTICLE_TAGS, ArticleParams, body_evidence, body_subtree, record_lists, run

__all__ = ["NON_ARTICLE_TAGS", "ArticleParams", "body_evidence", "body_subtree", "record_lists", "run"]
