"""What the tests and the benchmarks share to crawl for real: the simulated .gov.si web
(``simweb``), ``scrapy crawl govsi`` run in a subprocess against it (``crawl``), crawldb read
back, a throwaway PostgreSQL, the corpus of real gov.si pages, and the other processes and
servers an end-to-end run needs (scrapyd, ``scrapy serve``, a small filesystem).

Never imported by govsi; not in scrapyd's egg. In-process fakes for unit tests (a stats
collector, a scheduler harness, a spider without components) stay in ``tests/support``.
"""
