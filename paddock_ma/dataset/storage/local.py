"""A dataset in a directory: a local disk, or a filesystem every node of a cluster mounts at the same path
(NFS, CephFS, a cloud file share), where shards on several nodes write their own files.

Every file is written under ``_run/tmp`` (a name no reader takes for data), fsync-ed, renamed into place
and its directory fsync-ed (``Disk``), so a kill at any instant leaves the file whole or absent plus at
most a temporary, which a resume removes and ``verify`` reports. The manifest is committed the same way,
under the directory's lock (``dataset.lock.OutLock``), after checking it is still the one this run wrote.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..format import RUN_DIR, CollectError
from .store import Store, StoreConflict

TMP_DIR = f"{RUN_DIR}/tmp"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Disk:
    """The local filesystem steps. A crash falls between two of them (or inside ``create``, whose file is a
    temporary nobody reads); the writers order them so every such instant leaves a resumable directory.
    Tests substitute a subclass that dies at a chosen step."""

    def create(self, path: Path, data: bytes) -> None:
        """Write ``path`` (a new temporary) with ``data`` and fsync it."""
        with open(path, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

    def replace(self, src: Path, dst: Path) -> None:
        """Rename ``src`` to ``dst`` (atomic on one filesystem) and make the rename durable."""
        os.replace(src, dst)
        _fsync_dir(dst.parent)

    def link_new(self, src: Path, dst: Path) -> None:
        """Give ``src`` the name ``dst`` only if ``dst`` does not exist (FileExistsError), durably; ``src`` goes."""
        os.link(src, dst)
        _fsync_dir(dst.parent)
        os.unlink(src)

    def unlink(self, path: Path) -> None:
        path.unlink(missing_ok=True)


class LocalStore(Store):
    """A dataset directory ``root`` (see the module docstring); ``disk``: the filesystem steps."""

    local = True

    def __init__(self, root: Path, disk: Disk | None = None):
        self.root = Path(root)
        self.uri = str(root)
        self.disk = disk or Disk()

    def _tmp(self, rel: str) -> Path:
        """A temporary for ``rel``: under ``_run/tmp`` (named after the file and this process, so shards on
        several nodes never share one)."""
        return self.root / TMP_DIR / f"{rel.replace('/', '--')}.{os.uname().nodename}-{os.getpid()}.partial"

    def read_bytes(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def exists(self, rel: str) -> bool:
        return (self.root / rel).exists()

    def list_files(self, prefix: str = "") -> dict:
        base = self.root / prefix if prefix else self.root
        if not base.is_dir():
            return {}
        return {p.relative_to(self.root).as_posix(): p.stat().st_size for p in base.rglob("*") if p.is_file()}

    def is_dir_like(self) -> bool:
        return self.root.is_dir()

    def arrow_filesystem(self):
        import pyarrow.fs as pafs
        return pafs.LocalFileSystem(), str(self.root.resolve())

    def prepare(self) -> None:
        """data/, _run/state and _run/tmp, and a write probe (CollectError naming the path)."""
        try:
            for d in ("data", f"{RUN_DIR}/state", TMP_DIR):
                (self.root / d).mkdir(parents=True, exist_ok=True)
            probe = self.root / TMP_DIR / "write-probe"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise CollectError(f"out: cannot write to {self.root} ({exc.strerror or exc}); pass a writable "
                               "directory") from None

    def put_new(self, rel: str, data: bytes) -> None:
        dst = self.root / rel
        if dst.exists():
            raise FileExistsError(rel)
        tmp = self._tmp(rel)
        self.disk.create(tmp, data)
        try:
            self.disk.link_new(tmp, dst)
        except FileExistsError:
            self.disk.unlink(tmp)
            raise

    def put(self, rel: str, data: bytes) -> None:
        """Replace ``rel`` with ``data`` atomically and durably."""
        tmp = self._tmp(rel)
        self.disk.create(tmp, data)
        self.disk.replace(tmp, self.root / rel)

    def delete(self, rel: str) -> None:
        self.disk.unlink(self.root / rel)

    def read_manifest(self, rel: str):
        try:
            data = (self.root / rel).read_bytes()
        except FileNotFoundError:
            return None, None
        return data, hashlib.sha256(data).hexdigest()

    def commit_manifest(self, rel: str, data: bytes, token) -> str:
        """Under the directory's lock (held by the caller): check the manifest is the one ``token`` names,
        then replace it atomically."""
        _, now = self.read_manifest(rel)
        if now != token:
            raise StoreConflict(f"out: {self.where(rel)} changed under this run (another collector wrote it); "
                                "this run stops: check which collector owns the directory")
        self.put(rel, data)
        return hashlib.sha256(data).hexdigest()
