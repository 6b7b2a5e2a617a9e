"""A dataset under a prefix of an object store (``s3://BUCKET/PREFIX``, ``gs://...``, ``abfs://...``).

Object stores have no rename and no ``O_EXCL``, so nothing is written under a temporary name: each data
file and snapshot is one create-only PUT under its final name (``conditions``: it appears whole or not
at all, and never replaces another object; an upload killed midway leaves no object, only an
incomplete multipart upload that the store's lifecycle rule for aborted uploads removes). The manifest
is the one commit point: replaced only if its ETag (GCS: generation) is still the one this run wrote, so
a second collector, or a first one that lost its lease, cannot commit over another's manifest.

Reading, listing and deleting go through pyarrow's filesystems (``pyarrow.fs.FileSystem.from_uri``),
which the Parquet readers use too.
"""

from __future__ import annotations

from ..format import CollectError
from .conditions import Conflict, conditions_for
from .store import Store, StoreConflict


class ObjectStore(Store):
    """The dataset at ``uri`` (see the module docstring); ``scheme``: ``s3``, ``gs``, ``gcs``, ``abfs``, ``abfss``."""

    local = False

    def __init__(self, uri: str, scheme: str):
        import pyarrow.fs as pafs

        self.uri, self.scheme = uri.rstrip("/"), scheme
        try:
            self.fs, root = pafs.FileSystem.from_uri(self.uri)
        except (ValueError, OSError) as exc:
            raise CollectError(f"out: cannot open {self.uri} ({exc}); check the URI and the store's credentials "
                               "(its usual environment variables or profile)") from None
        self.root = root.rstrip("/")
        self.bucket, _, self.prefix = self.root.partition("/")
        if not self.prefix:
            raise CollectError(f"out: {self.uri} names a whole bucket; give a prefix for the dataset "
                               f"({self.uri}/NAME)")
        self._conditions = None

    @property
    def conditions(self):
        if self._conditions is None:
            self._conditions = conditions_for(self.scheme, self.bucket)
        return self._conditions

    def _key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}"

    def _path(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    # -- reading ------------------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes:
        with self.fs.open_input_stream(self._path(rel)) as fh:
            return fh.read()

    def exists(self, rel: str) -> bool:
        import pyarrow.fs as pafs
        return self.fs.get_file_info(self._path(rel)).type == pafs.FileType.File

    def list_files(self, prefix: str = "") -> dict:
        import pyarrow.fs as pafs
        base = self._path(prefix).rstrip("/") if prefix else self.root
        infos = self.fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        return {i.path[len(self.root) + 1:]: i.size for i in infos if i.type == pafs.FileType.File}

    def is_dir_like(self) -> bool:
        import pyarrow.fs as pafs
        try:
            return self.fs.get_file_info(self.bucket).type == pafs.FileType.Directory
        except OSError:
            return False

    def arrow_filesystem(self):
        return self.fs, self.root

    # -- writing ------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """The bucket must exist and take objects (creating buckets is the operator's job: their region,
        retention and access rules are theirs to choose)."""
        if not self.is_dir_like():
            raise CollectError(f"out: the bucket of {self.uri} does not exist or cannot be read with these "
                               "credentials; create it (or fix the credentials) and run again")

    def put_new(self, rel: str, data: bytes) -> None:
        try:
            self.conditions.create(self._key(rel), data)
        except Conflict:
            raise FileExistsError(rel) from None

    def delete(self, rel: str) -> None:
        try:
            self.fs.delete_file(self._path(rel))
        except FileNotFoundError:
            pass

    def read_manifest(self, rel: str):
        try:
            return self.conditions.get(self._key(rel))
        except FileNotFoundError:
            return None, None

    def commit_manifest(self, rel: str, data: bytes, token):
        try:
            if token is None:
                return self.conditions.create(self._key(rel), data)
            return self.conditions.replace(self._key(rel), data, token)
        except Conflict:
            raise StoreConflict(f"out: {self.where(rel)} changed under this run (another collector committed "
                                "it, or took over this run's lease); this run stops without writing") from None
