"""The one interface a dataset is written and read through, whatever holds it (``Store``), and the choice
of backend from what ``--out`` names (``opening.open_store``): a local path (or one on a filesystem every node
mounts, such as NFS), or an object store URI, ``s3://BUCKET/PREFIX``, ``gs://BUCKET/PREFIX`` or
``abfs://CONTAINER@ACCOUNT.dfs.core.windows.net/PREFIX``.

What a store must offer (and what each backend uses for it):

* ``put_new(rel, data)``: the object appears whole under its final name or not at all, and never
  replaces another (local: a temporary, fsync, rename; object stores: one create-only PUT, S3's
  ``If-None-Match: *``, GCS's ``ifGenerationMatch=0``, Azure's ``If-None-Match: *``).
* ``commit_manifest(data, token)``: the manifest is replaced only if it is still the one this run last
  wrote (``token``: local, its SHA-256, under the directory's lock; object stores, its ETag or
  generation, ``If-Match``), so two collectors can never both commit: the one that lost the race stops.
* listing, reading and deleting (pyarrow's filesystems for object stores).

Credentials are never part of a URI, a manifest or a message: each process (the driver and every shard)
finds them where the store's own tools do (S3: ``AWS_*`` variables, ``~/.aws`` profiles, an instance or
pod role; ``AWS_ENDPOINT_URL`` for an S3-compatible server; GCS: application default credentials; Azure:
``AZURE_STORAGE_*`` variables or a managed identity).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..format import CollectError

OBJECT_SCHEMES = ("s3", "gs", "gcs", "abfs", "abfss")


class StoreConflict(CollectError):
    """The manifest (or the lease) changed under this run: another collector wrote it."""


def scheme_of(out) -> str | None:
    """``s3``, ``gs``... for an object store URI, None for a local path (``file://`` included)."""
    text = str(out) if isinstance(out, Path) else out
    if not isinstance(text, str) or "://" not in text:
        return None
    scheme = text.split("://", 1)[0].lower()
    if scheme == "file":
        return None
    if scheme not in OBJECT_SCHEMES:
        raise CollectError(f"out: got the scheme {scheme}:// ({text}); expected a local path, s3://BUCKET/PREFIX, "
                           "gs://BUCKET/PREFIX or abfs://CONTAINER@ACCOUNT.dfs.core.windows.net/PREFIX")
    return scheme


class Store:
    """A dataset's storage; every path is relative to the dataset's root, with ``/`` separators.

    ``uri``: what messages and the command line name (a path or a URI, never a credential).
    ``local``: a directory of this machine (a lock by ``flock``) or not (a lease object)."""

    uri: str
    local: bool

    def where(self, rel: str = "") -> str:
        """``rel`` as messages name it."""
        return f"{self.uri.rstrip('/')}/{rel}" if rel else self.uri

    # -- reading ------------------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes:
        """The object's bytes; FileNotFoundError when there is none."""
        raise NotImplementedError

    def exists(self, rel: str) -> bool:
        raise NotImplementedError

    def list_files(self, prefix: str = "") -> dict:
        """``{rel: size}`` of every file (object) under ``prefix`` (the whole dataset by default), recursively."""
        raise NotImplementedError

    def is_dir_like(self) -> bool:
        """Whether the root can hold a dataset (a directory, or a prefix of an existing bucket)."""
        raise NotImplementedError

    def arrow_filesystem(self):
        """``(pyarrow filesystem, root path in it)`` for the Parquet readers."""
        raise NotImplementedError

    # -- writing ------------------------------------------------------------------------------------
    def put_new(self, rel: str, data: bytes) -> None:
        """Write a new object whole and durably (see the module docstring); FileExistsError when ``rel`` exists."""
        raise NotImplementedError

    def delete(self, rel: str) -> None:
        """Remove ``rel`` (nothing when it is missing)."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Make the root ready for a new dataset (local: its folders); CollectError naming why not."""

    def read_manifest(self, rel: str) -> tuple[bytes | None, object]:
        """``(bytes or None, token)`` of the manifest: ``token`` is what ``commit_manifest`` checks."""
        raise NotImplementedError

    def commit_manifest(self, rel: str, data: bytes, token) -> object:
        """Replace the manifest with ``data`` if it is unchanged since ``token`` (None: it must not exist);
        returns the new token. StoreConflict when another writer got there first."""
        raise NotImplementedError

    # -- shared steps -------------------------------------------------------------------------------
    def write_once(self, rel: str, data: bytes) -> str:
        """Put ``data`` at ``rel`` unless the same bytes are there already (a resumed run regenerating a file
        an interrupted one wrote); CollectError when other bytes are. Returns the SHA-256 (hex)."""
        digest = hashlib.sha256(data).hexdigest()
        try:
            self.put_new(rel, data)
        except FileExistsError:
            if hashlib.sha256(self.read_bytes(rel)).hexdigest() != digest:
                raise CollectError(f"{self.where(rel)} exists with other bytes than this run regenerates; it was not "
                                   "written by this config and code: move it away or pass a new out directory") from None
        return digest
