"""Several workers sharing one crawl politely: leases on IP addresses in crawldb
(``leases``, SQL), hearing hand-over notices as they happen (``notices``), and keeping this
worker's leases alive and fair (``keeper``). The scheduler's side, serving an address's
hosts only under its lease, is ``govsi.frontier.addresses``: this package knows nothing of
the frontier."""
