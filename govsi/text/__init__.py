"""The text of what the crawl fetched, for search and for SQL users: an HTML page's main
text (``maintext``: the one definition page_text, copies and changes use), binary
documents (PDF, DOCX, PPTX, DOC, PPT) read within bounds of time, size and pages, and a
text's language.

Pure: bytes in, text out; hostile files end in a status and a reason, never an exception.
"""
