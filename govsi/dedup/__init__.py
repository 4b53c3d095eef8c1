"""Is this page a copy: the exact key and MinHash signature of a page's main text
(``govsi.text.maintext``; ``signature``), a page's duplicate question (``question``) and how
alike two signatures are (``similarity``). Pure, and below the store: crawldb's writer
compares signatures with ``similarity`` as it settles copies; finding a page's original in
crawldb is ``govsi.copies``'."""
