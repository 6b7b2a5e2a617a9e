"""A BlockWriter run without Ray (the driver writing, ``run_writer``, or the shards writing their own
files, ``run_shard_writes``), and a filesystem test double that SIGKILLs its own process at write step k.

Imported by test_dataset_writer.py and test_shard_writes.py (which make the steps with ShardCore and resume
in-process) and run as a script in a subprocess: ``python writer_double.py RUN.pickle OUT K [shards]``:
the writer's (or the shards') K-th filesystem step kills the process (a ``create`` K leaves half its
bytes first, as a torn write).
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
from paddock_ma.dataset.storage.opening import open_store
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


def run_shard_writes(out, cfg, env_config: dict, manifest0: dict, disk: Disk | None = None, until: int | None = None,
                     commit: bool = True) -> None:
    """What ``collect`` does when the shards write their own files, minus Ray: lock ``out`` (a path or an
    object store URI), start or resume its run, step in-process ShardCores that write their files
    (``disk``: their local filesystem steps) up to step ``until`` (default: the end), shard 0 first at
    each step, and hand what they wrote to the BlockWriter. ``commit=False``: the last fragment's entries
    are not listed (what a kill at the commit point leaves)."""
    from paddock_ma.dataset.lock import lock_for
    from paddock_ma.dataset.shard_files import FilesSpec
    from paddock_ma.distributed.shard import ShardCore

    store = open_store(out)
    lock = lock_for(store).acquire()
    try:
        manifest, token = load_manifest(store)
        if manifest is None:
            store.prepare()
            manifest = copy.deepcopy(manifest0)
            manifest["provenance_sha256"] = provenance_sha256(manifest)
        elif manifest["status"] == "complete":
            return
        writer = BlockWriter(store, manifest, cfg, token)
        docs = writer.resume_docs()
        spec = FilesSpec(str(out), cfg.fragment_steps, cfg.file_worlds, cfg.steps, cfg.total_worlds).to_dict()
        cores, w = [], cfg.worlds_per_shard
        for s in range(cfg.num_shards):
            core = ShardCore(env_config, s * w, w, policy=cfg.policy, files=spec)
            if disk is not None:
                core.files.store = open_store(out, disk)
            core.restore(docs[s]) if s in docs else core.reset(cfg.seed)
            cores.append(core)
        last = cfg.steps if until is None else until
        for seq in range(1, last + 1):
            for s, core in enumerate(cores):
                if core.seq < seq:
                    _, arrays = core.step(seq, None)
                    if arrays["written"] is not None and (commit or seq < last):
                        writer.add_written(s, arrays["written"])
    finally:
        lock.release()


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as fh:
        cfg, manifest0, steps = pickle.load(fh)
    if sys.argv[4:] == ["shards"]:
        run_shard_writes(Path(sys.argv[2]), cfg, steps, manifest0, DieAt(int(sys.argv[3])))   # steps: the env config
    else:
        run_writer(Path(sys.argv[2]), cfg, manifest0, steps, DieAt(int(sys.argv[3])))
