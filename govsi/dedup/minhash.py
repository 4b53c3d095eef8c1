"""datasketch's ``MinHash``, imported without the rest of datasketch until it is used.

Importing anything of datasketch runs its package ``__init__``, which imports every class
it has: LSH variants, HNSW, the async storages, ``WeightedMinHash`` and with it scipy.
That is ~50 MB in every process that reads pages (the crawler and each worker); govsi
bands signatures itself (``signature.band_keys``) and uses only ``MinHash``, whose module
needs numpy and ``datasketch.hashfunc`` alone.

So unless datasketch is already imported, the package is a stand-in that has its path
but has not run its ``__init__``: ``datasketch.minhash`` loads under it (a pickled
signature names that module, and importing it finds the stand-in, not the real
``__init__``). The first use of any other name of the package (``datasketch.MinHashLSH``,
``from datasketch import ...``) runs the real ``__init__`` in the stand-in, which then is
the package: one ``MinHash`` class either way.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from importlib.machinery import ModuleSpec
from typing import Any

__all__ = ["MinHash"]

_PACKAGE = "datasketch"


class _Package(types.ModuleType):
    """datasketch before its ``__init__`` has run; runs it on the first missing name."""

    def __init__(self, spec: ModuleSpec) -> None:
        super().__init__(spec.name)
        self.__spec__ = spec
        self.__path__ = list(spec.submodule_search_locations or [])
        self.__file__ = spec.origin
        self._govsi_loading = False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or self._govsi_loading:
            # The import system asks (__loader__, __all__ ...): not a use.
            raise AttributeError(name)
        self._govsi_loading = True
        assert self.__spec__ is not None and self.__spec__.loader is not None
        self.__spec__.loader.exec_module(self)
        return getattr(self, name)  # a name the package lacks raises, loaded now


def _load() -> types.ModuleType:
    if _PACKAGE not in sys.modules:
        spec = importlib.util.find_spec(_PACKAGE)
        if spec is not None and spec.loader is not None and spec.submodule_search_locations:
            sys.modules[_PACKAGE] = _Package(spec)
    return importlib.import_module(f"{_PACKAGE}.minhash")


MinHash = _load().MinHash
