"""The web archive (WARC_DIR): every HTTP exchange the crawler makes written as WARC
records (ISO 28500) that replay tools read as they are.

``exchange`` says what one exchange's request and response records hold (pure);
``payloads`` which payloads were written before, so a copy becomes a revisit (pure);
``records`` makes the records with warcio; ``files`` writes them, one gzip member each,
into files rotated at WARC_MAX_SIZE and recovered after a hard stop; ``writer`` does that
in a thread of its own, off the reactor; ``config`` is the settings, read once.
"""
