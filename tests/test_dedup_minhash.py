"""datasketch's MinHash imported without scipy.integrate, which nothing of govsi calls, and
without breaking whoever does call it."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import sys
import govsi.dedup.index, govsi.dedup.signature
print("scipy.integrate" in sys.modules)
import datasketch
lsh = datasketch.MinHashLSH(threshold=0.7, num_perm=128)  # needs scipy.integrate.quad
print(lsh.b * lsh.r <= 128)
import scipy.integrate
print(hasattr(scipy.integrate, "solve_ivp"), round(scipy.integrate.quad(lambda x: x, 0, 1)[0], 6))
"""


def test_reading_pages_does_not_load_scipy_integrate_and_lsh_still_works() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "True", "True", "0.5"], done.stderr


def test_the_signature_is_datasketchs_minhash() -> None:
    from datasketch import MinHash as Original

    from govsi.dedup.minhash import MinHash

    assert MinHash is Original
