"""Which network addresses the crawler may connect to: the private-address guard that
wraps the reactor's name resolver, and the one address a host is pinned to for a crawl."""
