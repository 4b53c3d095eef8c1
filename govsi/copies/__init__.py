"""Finding a page's original before it is stored: in crawldb and among the pages fetched a
moment ago (``index``), the stored keys of another main-text definition made again
(``rekey``), and the crawl's check of each fetched page, crawldb asked off the reactor
(``check``). Above the store, which it reads; the keys and signatures it compares are
``govsi.dedup``'s."""
