"""The simulated .gov.si web: hosts on loopback addresses (``server``), the resolver a test
crawl uses to reach them and nothing else (``resolver``), and the webs built on them."""
