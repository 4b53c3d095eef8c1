"""crawldb: the schema (``schema``, typed ORM models), opening it and migrating it
(``database``, ``migrations/``), batched writes (``writer``) with pictures stored once
(``images``) and copies settled as they are written (``originals``), the reads a continuing
crawl makes (``reader``), spill files for what could not be written (``spill``), and the
Scrapy extension that runs the writer for a crawl (``extension``)."""
