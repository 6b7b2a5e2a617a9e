"""Opening a dataset's storage from what ``--out`` names: ``open_store(out)`` (the backends: ``local``,
``objects``; the interface: ``store.Store``)."""

from __future__ import annotations

from pathlib import Path

from .local import Disk, LocalStore
from .store import Store, scheme_of


def open_store(out, disk: Disk | None = None) -> Store:
    """The store ``out`` names: a local path (``str``, ``Path`` or ``file://``) or an object store URI
    (``s3://``, ``gs://``, ``abfs://``); a ``Store`` is returned as is. ``disk``: the local filesystem
    steps (``local.Disk``; tests pass doubles that die at a chosen step)."""
    if isinstance(out, Store):
        return out
    scheme = scheme_of(out)
    if scheme is None:
        text = str(out)
        return LocalStore(Path(text[len("file://"):] if text.startswith("file://") else text), disk)
    from .objects import ObjectStore        # pyarrow's filesystems, imported only for an object store
    return ObjectStore(str(out), scheme)
