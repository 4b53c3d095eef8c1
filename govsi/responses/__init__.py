"""A fetched response read off the reactor into its record: an HTML page (``pages``: read
whole here or in a worker process by ``govsi.page``, rendered when its plan says,
``rendering``, and checked for copies by ``govsi.copies``), a document's text read in the
worker pool (``documents``). Each part takes its own settings and is held by the spider,
which makes the requests."""
