"""Is this page a copy of one already stored? The exact key and MinHash signature of a
page's main text (``govsi.text.maintext``; ``signature``), and finding the original among
every stored page (``index``)."""
