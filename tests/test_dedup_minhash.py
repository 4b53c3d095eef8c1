"""datasketch's MinHash imported without the rest of datasketch (its LSH classes, scipy),
which nothing of govsi calls, and without breaking whoever does call it."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import sys
import pickle
import govsi.copies.index, govsi.dedup.signature
signature = govsi.dedup.signature.signature_of_text("a page of words read by a worker")
assert pickle.loads(pickle.dumps(signature)) == signature  # as it comes back from a worker
print(sorted(m for m in sys.modules if m.startswith(("datasketch", "scipy"))))
import datasketch
print(datasketch.MinHash is govsi.dedup.signature.MinHash)
lsh = datasketch.MinHashLSH(threshold=0.7, num_perm=128)  # needs scipy.integrate.quad
print(lsh.b * lsh.r <= 128)
import scipy.integrate
print(hasattr(scipy.integrate, "solve_ivp"), round(scipy.integrate.quad(lambda x: x, 0, 1)[0], 6))
"""


def test_reading_pages_loads_only_minhash_and_the_rest_still_works() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [
        "['datasketch', 'datasketch.hashfunc', 'datasketch.minhash']",
        "True",
        "True",
        "True 0.5",
    ], done.stderr


def test_the_signature_is_datasketchs_minhash() -> None:
    from datasketch import MinHash as Original

    from govsi.dedup.minhash import MinHash

    assert MinHash is Original
