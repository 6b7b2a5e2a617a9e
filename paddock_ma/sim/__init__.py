"""The numba simulation: pure jitted kernels (``core.jit``) over structure-of-arrays state, no Python
objects, in rooms by concern (``core``, ``track``, ``vehicle``, ``race``, ``driver``, ``sensing``) with
the transition order of a tick in ``step``.

Numba cache policy. Kernels are compiled with ``cache=True``. Numba's on-disk cache checks only the
source file of the function it loads, not the files whose kernels it calls or inlines, so editing one
module could load a stale compiled caller. So, unless the user set ``NUMBA_CACHE_DIR`` (then numba's
own rules apply and this package changes nothing), importing ``paddock_ma.sim`` points numba's cache
directory (``NUMBA_CACHE_DIR``, so that numba's reloads of its settings keep it) at
``paddock_ma/sim/__pycache__/numba-<hash of every module of this package and its subpackages>``: any
source change starts a fresh cache. This has to happen at import, before the first kernel is decorated (numba
picks a kernel's cache location when it is defined); it is the only thing the import does besides
defining the package. Nothing is deleted at import: another process may be using an older cache right
now (another checkout state, a long run). ``prune_numba_caches(keep)`` removes all but the ``keep``
most recent other caches (~25 MB each) when you ask for it (``paddock_ma.sim.prune_numba_caches()``).
"""

import os
import shutil
from pathlib import Path

from ..sources import files_digest, python_sources

_HERE = Path(__file__).resolve().parent


# what the user (or a parent process of this package) set before this import
_GIVEN_CACHE_DIR = os.environ.get("NUMBA_CACHE_DIR") or None


def source_digest(root: Path) -> str:
    """Hex SHA-256 of every ``*.py`` file under ``root`` (subpackages included), each keyed by its path
    relative to ``root`` (``sources.files_digest``): a moved or renamed module changes the digest as an
    edited one does, so a cache keyed by it never loads a kernel compiled from other sources."""
    return files_digest(python_sources(root), root)


def numba_cache_dir() -> Path | None:
    """The cache directory this package chose for numba (None when ``NUMBA_CACHE_DIR`` was set before
    the import)."""
    if _GIVEN_CACHE_DIR:
        return None
    return _HERE / "__pycache__" / f"numba-{source_digest(_HERE)[:16]}"


def prune_numba_caches(keep: int = 2) -> list[Path]:
    """Remove the package's ``numba-*`` caches other than the current one, but the ``keep`` most
    recent; returns the removed directories. Only call it when no other process runs older sources."""
    current = numba_cache_dir() or Path(os.environ["NUMBA_CACHE_DIR"])
    try:
        others = [p for p in (_HERE / "__pycache__").glob("numba-*") if p != current and p.is_dir()]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    for old in others[keep:]:
        shutil.rmtree(old, ignore_errors=True)
    return others[keep:]


_CACHE_DIR = numba_cache_dir()
if _CACHE_DIR is not None:
    # Through the environment, not numba.config alone: numba re-reads every NUMBA_* variable whenever one
    # of them changes (its compiler calls reload_config), which would put CACHE_DIR back to its default
    # for the kernels defined afterwards. Child processes (workers, Ray shards) inherit the directory.
    os.environ["NUMBA_CACHE_DIR"] = str(_CACHE_DIR)
    import numba

    numba.config.CACHE_DIR = str(_CACHE_DIR)
