"""robots.txt: its rules as RFC 9309 and Google's parser read them (``rules``, pure), and
fetching each host's file once per crawl and reading what the outcome means (``fetching``)."""
