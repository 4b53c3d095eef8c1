"""What to fetch next: the time-aware breadth-first queue (``queue``, pure), what is kept per
queued page and host (``entries``), crawler traps (``traps``), the seen-URL filter
(``seen``), and the Scrapy scheduler that puts them together over crawldb's FRONTIER rows
(``scheduler``)."""
