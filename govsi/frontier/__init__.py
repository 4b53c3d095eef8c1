"""What to fetch next: the time-aware breadth-first queue (``queue``, pure), what is kept per
queued page and host (``entries``), crawler traps (``traps``), the seen-URL filter
(``seen``), and the Scrapy scheduler that puts them together over crawldb's FRONTIER rows
(``scheduler``), with the parts it holds: host set-up (``hostsetup``), refills from crawldb
(``refills``), serving addresses under their leases (``addresses``), pages out until their
outcome (``outcomes``), the renderer's hooks (``rendering``) and the progress line
(``progress``)."""
