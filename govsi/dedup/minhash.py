"""datasketch's ``MinHash``, imported without what govsi never calls.

Importing anything of datasketch runs its package ``__init__``, which imports its LSH
classes, which import ``scipy.integrate`` (for ``MinHashLSH``'s parameter search). That
costs ~55 MB of memory in every process that reads pages (the crawler and each worker)
and half a second of start-up. govsi bands signatures itself (``signature.band_keys``) and
never builds a ``MinHashLSH``. So ``scipy.integrate`` is first stood in for by a module whose
``quad`` (the one name datasketch takes from it) and every other attribute import the real
module on first use: nothing breaks if someone does call it, it only costs then.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__all__ = ["MinHash"]

_HEAVY = "scipy.integrate"


class _OnFirstUse(types.ModuleType):
    """Stands in for ``scipy.integrate`` until something of it is used."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            # The import system asks (__path__, __file__): not a use.
            raise AttributeError(name)
        if sys.modules.get(_HEAVY) is self:
            del sys.modules[_HEAVY]
        return getattr(importlib.import_module(_HEAVY), name)


def _quad(*args: Any, **kwargs: Any) -> Any:
    return _OnFirstUse.__getattr__(_stand_in, "quad")(*args, **kwargs)


_stand_in = _OnFirstUse(_HEAVY)
_stand_in.quad = _quad  # type: ignore[attr-defined]

if _HEAVY not in sys.modules and "datasketch" not in sys.modules:
    sys.modules[_HEAVY] = _stand_in
    try:
        from datasketch import MinHash
    finally:
        # Only datasketch sees the stand-in: a later import gets the real module.
        if sys.modules.get(_HEAVY) is _stand_in:
            del sys.modules[_HEAVY]
else:
    from datasketch import MinHash
