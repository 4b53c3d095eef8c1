"""Search over the crawl's text (``page_text``): Slovenian-aware analysis (lemmas, folded
diacritics, stop words), the index beside crawldb, queries, ranking and snippets."""
