"""The package's source files and their digest: the one source hash.

``files_digest`` keys the numba cache (``sim.numba_cache_dir``: any edit of a simulation module starts a
fresh cache) and the code fingerprint Ray shards and their driver compare (``distributed.shard
.code_fingerprint``: a cluster whose nodes run different code is refused). It imports nothing of the
package, so every layer, the simulation core first, can use it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def python_sources(root: Path) -> list[Path]:
    """Every ``*.py`` file under ``root``, subpackages included, caches (``__pycache__``) excluded."""
    return [p for p in root.rglob("*.py") if "__pycache__" not in p.relative_to(root).parts]


def files_digest(paths, root: Path, salt: bytes = b"") -> str:
    """Hex SHA-256 of ``salt`` and the files ``paths`` (in sorted order), each keyed by its path relative
    to ``root``: a moved or renamed file changes the digest as an edited one does."""
    digest = hashlib.sha256(salt)
    for path in sorted(paths):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
