"""crawldb: the schema (``schema``, Core tables), opening it and migrating it
(``database``, ``migrations/``), batched writes (``writer``) with each page's visit written
over its stored row (``visits``: the current copy, a change's earlier version), pictures
stored once (``images``) and copies settled as they are written (``originals``), the reads
a continuing crawl makes (``reader``), spill files for what could not be written
(``spill``), and the Scrapy extension that runs the writer for a crawl (``extension``)."""
