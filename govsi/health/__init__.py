"""The crawl's own health, watched while it runs: how long the reactor thread was kept from
its other work (a stall freezes every host's downloads, not only the one that caused it),
and what the process frees handed back to the system."""
