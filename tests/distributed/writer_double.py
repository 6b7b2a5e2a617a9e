"""A BlockWriter run without Ray, and a filesystem test double that SIGKILLs its own process at write step k.

Imported by test_dataset_writer.py (which makes the steps with ShardCore and resumes in-process) and run
as a script in a subprocess: ``python writer_double.py RUN.pickle OUT K``: the writer's K-th filesystem
step kills the process (a ``create`` K leaves half its bytes first, as a torn write).
"""

import copy
import os
import pickle
import signal
import sys
from pathlib import Path

from paddock_ma.dataset.directory import load_manifest
from paddock_ma.dataset.format import MANIFEST, provenance_sha256
from paddock_ma.dataset.lock import OutLock
from paddock_ma.dataset.storage.local import Disk
from paddock_ma.dataset.storage.store import open_store
from paddock_ma.dataset.writer import BlockWriter, manifest_bytes


class CountingDisk(Disk):
    """Counts the writer's filesystem steps."""

    def __init__(self):
        self.n = 0

    def step(self, *_):
        self.n += 1

    def create(self, path, data):
        self.step(path, data)
        super().create(path, data)

    def replace(self, src, dst):
        self.step()
        super().replace(src, dst)

    def link_new(self, src, dst):
        self.step()
        super().link_new(src, dst)

    def unlink(self, path):
        self.step()
        super().unlink(path)


class DieAt(CountingDisk):
    """Dies by SIGKILL at filesystem step ``k`` (1-based), before the step (or halfway through a write)."""

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def step(self, path=None, data=None):
        self.n += 1
        if self.n == self.k:
            if path is not None:       # a torn write: half its bytes reach the temporary
                with open(path, "wb") as fh:
                    fh.write((data or b"PAR1-torn-parquet")[: max(1, len(data or b"PAR1-torn") // 2)])
            os.kill(os.getpid(), signal.SIGKILL)


def run_writer(out: Path, cfg, manifest0: dict, steps: list, disk: Disk | None = None) -> None:
    """What ``collect`` does with a directory, minus Ray: lock it, start or resume its run, hand the steps
    a shard would (re)produce from its listed snapshot to a BlockWriter."""
    out = Path(out)
    store = open_store(out, disk)
    with OutLock(out):
        manifest, token = load_manifest(store)
        if manifest is None:
            store.prepare()
            manifest = copy.deepcopy(manifest0)
            manifest["provenance_sha256"] = provenance_sha256(manifest)
            token = open_store(out).commit_manifest(MANIFEST, manifest_bytes(manifest), None)   # as collect() does
        elif manifest["status"] == "complete":
            return
        writer = BlockWriter(store, manifest, cfg, token)
        docs = writer.resume_docs()
        for st in steps:
            if st.seq > docs.get(st.shard, {}).get("seq", 0):
                writer.add(st)


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as fh:
        cfg, manifest0, steps = pickle.load(fh)
    run_writer(Path(sys.argv[2]), cfg, manifest0, steps, DieAt(int(sys.argv[3])))
