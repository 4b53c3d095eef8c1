"""Keeping the copy fresh: when a stored page is due again, how it is asked for
(conditionally), and what counts as a change."""
