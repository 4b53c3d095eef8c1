"""Is this page a copy of one already stored? The main content of a page
(``maincontent``), its exact key and MinHash signature (``signature``), and finding the
original among every stored page (``index``)."""
