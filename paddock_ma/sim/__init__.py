"""The numba simulation core: pure jitted kernels (``jit.py``) over structure-of-arrays state, no Python
objects.

Numba's on-disk cache (``cache=True``) checks only the source file of the function it loads, not the
files whose kernels it calls or inlines, so editing one module could leave a stale compiled caller.
Unless the user chose ``NUMBA_CACHE_DIR``, the cache therefore lives in a directory keyed by a hash of
every module of this package: any source change starts a fresh cache. Caches of other sources are
pruned when a new one starts (the two most recent stay, for another checkout state in use), so
editing the package does not pile up compiled code (~25 MB per cache).
"""

import hashlib
import os
import shutil
from pathlib import Path

_KEEP_OTHER_CACHES = 2


def _prune_caches(current: Path, keep: int) -> None:
    """Remove sibling ``numba-*`` cache directories of ``current`` but the ``keep`` most recent."""
    try:
        others = [p for p in current.parent.glob("numba-*") if p != current and p.is_dir()]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in others[keep:]:
        shutil.rmtree(old, ignore_errors=True)


if not os.environ.get("NUMBA_CACHE_DIR"):
    import numba

    _here = Path(__file__).resolve().parent
    _digest = hashlib.sha256()
    for _path in sorted(_here.glob("*.py")):
        _digest.update(_path.name.encode() + b"\0" + _path.read_bytes())
    _cache = _here / "__pycache__" / f"numba-{_digest.hexdigest()[:16]}"
    if not _cache.exists():
        _prune_caches(_cache, _KEEP_OTHER_CACHES)
    numba.config.CACHE_DIR = str(_cache)
