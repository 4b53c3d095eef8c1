"""JavaScript rendering: deciding which pages need a browser, and rendering them fenced."""
