"""The numba simulation core: pure jitted kernels (``jit.py``) over structure-of-arrays state, no Python
objects.

Numba's on-disk cache (``cache=True``) checks only the source file of the function it loads, not the
files whose kernels it calls or inlines, so editing one module could leave a stale compiled caller.
Unless the user chose ``NUMBA_CACHE_DIR``, the cache therefore lives in a directory keyed by a hash of
every module of this package: any source change starts a fresh cache.
"""

import hashlib
import os
from pathlib import Path

if not os.environ.get("NUMBA_CACHE_DIR"):
    import numba

    _here = Path(__file__).resolve().parent
    _digest = hashlib.sha256()
    for _path in sorted(_here.glob("*.py")):
        _digest.update(_path.name.encode() + b"\0" + _path.read_bytes())
    numba.config.CACHE_DIR = str(_here / "__pycache__" / f"numba-{_digest.hexdigest()[:16]}")
