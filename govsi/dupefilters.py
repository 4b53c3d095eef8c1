"""Scrapy's ``DUPEFILTER_CLASS``: the seen-URL filter, which lives in ``govsi.frontier.seen``."""

from govsi.frontier.seen import CanonicalDupeFilter

__all__ = ["CanonicalDupeFilter"]
