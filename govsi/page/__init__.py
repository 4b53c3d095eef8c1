"""The page reader: one parse of a fetched HTML page into its links (made canonical within
the crawl's scope), images, feeds, render-plan inputs, duplicate question and text. Pure:
a page's markup in, plain values out, the same on the reactor or in a worker process."""
