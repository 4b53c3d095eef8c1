"""Several workers sharing one crawl politely: leases on IP addresses in crawldb
(``leases``, SQL), hearing hand-over notices as they happen (``notices``), keeping this
worker's leases alive and fair (``keeper``), and the scheduler's side of serving an address's
hosts (``addresses``)."""
