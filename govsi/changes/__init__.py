"""What the crawl found new, changed, gone or moved, for a reader who follows a topic.

A change is a ``page_change`` row (``store/pagetables.py``, written by ``store/changes.py``
as a visit finds it): a page fetched for the first time, its main content changed as
revisits judge it, now a 404/410, now a redirect. ``query`` lists them under a filter
(time, hosts, kinds, document types, search words matched the Slovenian way), newest
first, with short excerpts of the words added and removed; ``diff`` is the word-level
diff of a change's two versions of the main text, bounded in size and time (pure).
``scrapy changes`` (``commands/changes.py``), the Changes page and its Atom feed
(``scrapy serve``) read them. docs/changes.md explains.
"""
