"""``verify`` and ``inspect``: whether a dataset directory is complete and untouched (exit codes
``VERIFY_OK`` 0, ``VERIFY_PROBLEM`` 1, ``VERIFY_INCOMPLETE`` 3 with the command that resumes it), checked
against its manifest: provenance hash, listed files and their SHA-256, no unlisted file, rows and steps."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

from ..value_rules import integer_problem, is_integer
from .format import (
    COLLECTION_END, DATA_DIR, DATASET_FORMAT, DATASET_VERSION, MANIFEST, PROVENANCE_KEYS, RUN_DIR, config_hash,
    provenance_sha256,
)
from .storage.local import TMP_DIR
from .storage.opening import open_store
from .storage.store import Store

VERIFY_OK, VERIFY_PROBLEM, VERIFY_INCOMPLETE = 0, 1, 3
# the columns the row checks read
ROW_COLUMNS = ["world", "driver", "episode_id", "episode_step", "seq", "terminated", "truncated"]


@dataclass
class Verdict:
    """What ``inspect`` found. ``problems``: how the directory differs from what its manifest says (first
    problem first; empty when untouched); ``complete``: every file of the config is there; ``expected`` /
    ``present``: ``{"steps", "rows", "files"}`` (steps: every world's); ``resume``: how to finish an
    incomplete run; ``uncommitted``: data files an interrupted run wrote before its manifest listed them
    (a resume keeps them if it regenerates the same bytes); ``temporaries``: files under ``_run/tmp`` a
    writer killed midway left (not data: a resume removes them)."""
    problems: list = field(default_factory=list)
    complete: bool = False
    expected: dict = field(default_factory=dict)
    present: dict = field(default_factory=dict)
    resume: str | None = None
    uncommitted: list = field(default_factory=list)
    temporaries: list = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """``VERIFY_OK`` (complete and untouched), ``VERIFY_PROBLEM`` or ``VERIFY_INCOMPLETE``."""
        return VERIFY_PROBLEM if self.problems else VERIFY_OK if self.complete else VERIFY_INCOMPLETE

    def incomplete_message(self) -> str:
        e, p = self.expected, self.present
        return (f"incomplete: an interrupted run ({p.get('steps')} of {e.get('steps')} steps, {p.get('rows'):,} of "
                f"{e.get('rows'):,} rows, {p.get('files')} of {e.get('files')} files"
                + (f"; {len(self.uncommitted)} more written but not yet committed" if self.uncommitted else "")
                + (f"; {len(self.temporaries)} temporaries of a write cut short under {TMP_DIR}" if self.temporaries
                   else "")
                + f"), consistent as far as it goes; to finish it: {self.resume}")


def resume_command(manifest: dict, root) -> str:
    """The command (or call) that resumes the run of ``manifest`` in ``root``."""
    c, layout = manifest.get("config", {}), (manifest.get("run") or {}).get("layout") or {}
    if c.get("env_overrides") or c.get("reset_placement") != "random" or c.get("start_placement") != "random":
        return (f"call paddock_ma.distributed.collection.run.collect(CollectConfig(...), {str(root)!r}) with the same config "
                "(its env_overrides / placements are not command-line options; see config in the manifest)")
    return (f"paddock-ma collect --env {c.get('env')} --shards {layout.get('num_shards')} --worlds-per-shard "
            f"{layout.get('worlds_per_shard')} --steps {c.get('steps')} --seed {c.get('seed')} --policy "
            f"{c.get('policy')} --fragment-steps {c.get('fragment_steps')} --snapshot-every "
            f"{layout.get('snapshot_every')} --file-worlds {c.get('file_worlds')} --out {root} [--address ...]")


class _Bad(Exception):
    """A manifest that does not have the shape of one (caught by ``inspect``)."""


def _need(ok, message: str) -> None:
    if not ok:
        raise _Bad(message)


def _check_shape(m: dict) -> None:
    """Raise _Bad naming the first manifest field that is missing or of the wrong type."""
    for key, typ in (("format_version", int), ("config", dict), ("env_config", dict), ("config_hash", str),
                     ("provenance_sha256", str), ("seeds", dict), ("layout", dict), ("files", list),
                     ("status", str)):
        value = m.get(key)
        _need(is_integer(value) if typ is int else isinstance(value, typ),
              f"manifest: {key} is {value!r}; expected a {typ.__name__} (the manifest was edited or truncated)")
    _need(m["format_version"] == DATASET_VERSION, f"manifest: format_version {m['format_version']}; this paddock_ma "
          f"reads version {DATASET_VERSION} (use the paddock_ma that wrote it)")
    _need(m["status"] in ("running", "complete"), f"manifest: status {m['status']!r}; expected running or complete")
    c, lay = m["config"], m["layout"]
    for key in ("steps", "fragment_steps", "file_worlds", "total_worlds", "seed"):
        _need(integer_problem(c.get(key), 0 if key == "seed" else 1) is None,
              f"manifest: config.{key} is {c.get(key)!r}; expected a positive integer")
    _need(isinstance(lay.get("controlled"), list) and lay["controlled"]
          and all(isinstance(d, str) for d in lay["controlled"]),
          f"manifest: layout.controlled is {lay.get('controlled')!r}; expected the controlled drivers' ids")
    state = m.get("state", {})
    _need(isinstance(state, dict), f"manifest: state is {state!r}; expected a mapping")
    for i, f in enumerate(m["files"]):
        _need(isinstance(f, dict), f"manifest: files[{i}] is {f!r}; expected an object")
        for key in ("block", "fragment", "seq_from", "seq_to", "rows"):
            _need(integer_problem(f.get(key), 0) is None, f"manifest: files[{i}].{key} is {f.get(key)!r}; expected "
                  "an integer >= 0")
        for key in ("path", "sha256"):
            _need(isinstance(f.get(key), str), f"manifest: files[{i}].{key} is {f.get(key)!r}; expected a string")


def inspect(path) -> Verdict:
    """Check a dataset directory: is it untouched (``problems``), and is it complete? Never raises.

    Checks: the manifest reads and has its shape; its provenance (config, env config, seeds, layout,
    versions) hashes to ``config_hash`` and ``provenance_sha256``; every listed file exists with its
    SHA-256 and row count, under the name, worlds and steps its block and fragment give; nothing else
    is in the directory (anything under data/ that is not listed, anything beside data/, _manifest.json
    and _run/; an interrupted run's unlisted files of its next fragments are reported as uncommitted);
    every (world, driver, episode, episode step) appears once; each car's seqs are 1..N without a gap; each episode's steps are
    contiguous from 1 and an episode only follows one that ended; in a complete run every car's last row
    ends its episode, and there are steps x worlds x drivers rows.
    """
    try:
        return _inspect(open_store(path))
    except Exception as exc:  # noqa: BLE001 - a verdict, never a traceback: any surprise is a problem
        return Verdict([f"{path}: cannot be checked ({type(exc).__name__}: {exc})"])


def verify(path) -> list[str]:
    """The problems of dataset ``path``, first problem first; empty only when it is complete and untouched
    (an incomplete run gives one line with expected vs present and how to resume; ``inspect`` tells it apart)."""
    v = inspect(path)
    if v.problems:
        return v.problems
    return [] if v.complete else [v.incomplete_message()]


@dataclass
class _Plan:
    """What a manifest's config says the directory holds: K drivers, blocks of worlds x fragments of steps."""
    k: int
    blocks: int
    fragments: int

    @classmethod
    def of(cls, m: dict) -> _Plan:
        c = m["config"]
        return cls(len(m["layout"]["controlled"]), -(-c["total_worlds"] // c["file_worlds"]),
                   -(-c["steps"] // c["fragment_steps"]))

    def file_names(self) -> set:
        return {f"{DATA_DIR}/block-{b:04d}-frag-{fr:06d}.parquet" for b in range(self.blocks)
                for fr in range(self.fragments)}


def _inspect(root: Store) -> Verdict:
    """``inspect``'s steps, in order; each step adds its problems, and a step whose inputs are already
    wrong is not taken (the first problem is the one to fix)."""
    import pyarrow as pa

    m = _read_manifest(root)
    if isinstance(m, Verdict):
        return m
    c, plan = m["config"], _Plan.of(m)
    v = Verdict(expected={"steps": c["steps"], "rows": c["steps"] * c["total_worlds"] * plan.k,
                          "files": plan.blocks * plan.fragments}, resume=resume_command(m, root.uri))
    _check_provenance(m, v.problems)
    _check_entries(root, m, plan, v)
    parts, reach = _check_files(root, m, plan, v.problems)
    if v.problems:
        return v
    contiguous = [next((i for i in range(plan.fragments) if i not in reach.get(b, ())), plan.fragments)
                  for b in range(plan.blocks)]
    v.present = {"steps": min(min(contiguous) * c["fragment_steps"], c["steps"]),
                 "rows": sum(f["rows"] for f in m["files"]), "files": len(m["files"])}
    v.complete = v.present["files"] == v.expected["files"]
    if m["status"] == "complete" and not v.complete:
        v.problems.append(f"manifest: complete but lists {len(m['files'])} of the config's {v.expected['files']} files")
    if parts and not v.problems:
        _check_rows(pa.concat_tables(parts), m, v)
    return v


def _read_manifest(root: Store) -> dict | Verdict:
    """The manifest of ``root`` when it reads and has its shape, else the Verdict saying why not."""
    if root.local and not root.root.is_dir():
        return Verdict([f"{root.uri}: not a directory"])
    try:
        data, _ = root.read_manifest(MANIFEST)
    except OSError as exc:
        return Verdict([f"{root.where(MANIFEST)}: unreadable ({exc})"])
    if data is None:
        return Verdict([f"{root.where(MANIFEST)}: missing (not a dataset directory"
                        + ("; it holds a manifest.json of an older paddock_ma format)" if root.exists("manifest.json")
                           else ")")])
    try:
        m = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return Verdict([f"{root.where(MANIFEST)}: unreadable ({exc})"])
    if not isinstance(m, dict) or m.get("format") != DATASET_FORMAT:
        return Verdict([f"{root.where(MANIFEST)}: format {m.get('format') if isinstance(m, dict) else m!r}, expected "
                        f"{DATASET_FORMAT!r}"])
    try:
        _check_shape(m)
    except _Bad as exc:
        return Verdict([str(exc)])
    return m


def _check_provenance(m: dict, problems: list) -> None:
    """The manifest's hashes and the copies of the config's values it holds agree with its config."""
    c, lay = m["config"], m["layout"]
    if m["config_hash"] != config_hash(c, m["env_config"], m["format_version"]):
        problems.append("manifest: config_hash does not hash config and env_config (the config or env was edited)")
    if m["provenance_sha256"] != provenance_sha256(m):
        problems.append(f"manifest: provenance_sha256 does not hash {', '.join(PROVENANCE_KEYS)} (one was edited)")
    controlled = lay["controlled"]
    for what, got, want in (("seeds.root", m["seeds"].get("root"), c["seed"]),
                            ("layout.total_worlds", lay.get("total_worlds"), c["total_worlds"]),
                            ("layout.file_worlds", lay.get("file_worlds"), c["file_worlds"]),
                            ("layout.controlled", controlled, m["env_config"].get("controlled_drivers", controlled))):
        if got != want:
            problems.append(f"manifest: {what} is {got!r} but the config says {want!r} (the manifest was edited)")


def _check_entries(root: Store, m: dict, plan: _Plan, v: Verdict) -> None:
    """The dataset holds the listed files and nothing else (an interrupted run's files of its next
    fragments are ``uncommitted``, a killed writer's temporaries ``temporaries``), and the shard
    snapshots the manifest lists are under ``_run``."""
    problems, files = v.problems, m["files"]
    listed = {f["path"] for f in files}
    if len(listed) != len(files):
        problems.append("manifest: files lists a path twice")
    present = root.list_files()
    top = {rel.split("/", 1)[0] for rel in present}
    if root.local:
        top |= {p.name for p in root.root.iterdir()}
        folders = {p.relative_to(root.root).as_posix() for p in (root.root / DATA_DIR).rglob("*") if p.is_dir()} \
            if (root.root / DATA_DIR).is_dir() else set()
    else:
        folders = set()
    for name in sorted(top - {MANIFEST, RUN_DIR, DATA_DIR}):
        problems.append(f"{name}: not part of the dataset (readers of the directory would take it for data); remove it")
    folders |= {rel.rsplit("/", 1)[0] for rel in present if rel.startswith(f"{DATA_DIR}/") and rel.count("/") > 1}
    for rel in sorted(folders):
        problems.append(f"{rel}/: a folder in {DATA_DIR}/ (readers would take its files for data); remove it")
    names = plan.file_names()
    for rel in sorted(r for r in present if r.startswith(f"{DATA_DIR}/") and r.count("/") == 1):
        if rel in names - listed and m["status"] == "running":
            v.uncommitted.append(rel)       # written by an interrupted run before its manifest listed it
        elif rel not in listed:
            problems.append(f"{rel}: a file in {DATA_DIR}/ the manifest does not list (readers would take it for "
                            "data); remove it")
    v.temporaries = sorted(r for r in present if r.startswith(f"{TMP_DIR}/"))
    state = m.get("state", {})
    if m["status"] == "complete" and state:      # (unlisted files under _run/ are bookkeeping a kill right after
        problems.append("manifest: complete but still lists shard snapshots (state)")   # completion left: not data)
    for s, entry in sorted(state.items()):
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or entry["path"] not in present:
            problems.append(f"manifest: state of shard {s} names {entry!r}, which is not in {RUN_DIR}/state "
                            "(the run cannot resume)")


def _check_files(root: Store, m: dict, plan: _Plan, problems: list) -> tuple[list, dict]:
    """Each listed file: its name, worlds and steps, then its bytes and rows. Returns the tables of the
    files that pass (their ``ROW_COLUMNS``) and ``{block: fragments present}``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    c = m["config"]
    fs = c["fragment_steps"]
    reach, parts = {}, []
    for f in m["files"]:
        b, fr = f["block"], f["fragment"]
        lo, hi = b * c["file_worlds"], min((b + 1) * c["file_worlds"], c["total_worlds"])
        seq_to = min((fr + 1) * fs, c["steps"])
        want = {"path": f"{DATA_DIR}/block-{b:04d}-frag-{fr:06d}.parquet", "worlds": [lo, hi], "seq_from": fr * fs + 1,
                "seq_to": seq_to, "rows": (hi - lo) * plan.k * (seq_to - fr * fs)}
        bad = [key for key, val in want.items() if f.get(key) != val]
        if b >= plan.blocks or fr >= plan.fragments or bad:
            problems.append(f"manifest: {f['path']}: {', '.join(f'{key} {f.get(key)!r} (expected {want[key]!r})' for key in bad) or 'block or fragment out of range'}")
            continue
        try:
            data = root.read_bytes(f["path"])
        except FileNotFoundError:
            problems.append(f"{f['path']}: listed in the manifest but missing")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != f["sha256"]:
            problems.append(f"{f['path']}: SHA-256 {digest[:16]}..., manifest says {f['sha256'][:16]}...")
            continue
        if f.get("bytes", len(data)) != len(data):
            problems.append(f"{f['path']}: {len(data)} bytes, manifest says {f['bytes']}")
            continue
        meta = pq.ParquetFile(pa.BufferReader(data)).metadata
        if meta.num_rows != f["rows"]:
            problems.append(f"{f['path']}: {meta.num_rows} rows, manifest says {f['rows']}")
            continue
        parts.append(pq.read_table(pa.BufferReader(data), columns=ROW_COLUMNS))
        reach.setdefault(b, set()).add(fr)
    return parts, reach


@dataclass
class _Rows:
    """The rows' columns as int64/bool arrays sorted by (world, driver, seq); ``car`` = world * K + driver,
    ``first``: the row is its car's first."""
    world: np.ndarray
    drv: np.ndarray
    ep: np.ndarray
    es: np.ndarray
    seq: np.ndarray
    done: np.ndarray
    car: np.ndarray
    first: np.ndarray

    @classmethod
    def of(cls, t, drv: np.ndarray, k: int) -> _Rows:
        world = t["world"].to_numpy().astype(np.int64)
        ep = t["episode_id"].to_numpy().astype(np.int64)
        es = t["episode_step"].to_numpy().astype(np.int64)
        seq = t["seq"].to_numpy().astype(np.int64)
        done = t["terminated"].to_numpy(zero_copy_only=False) | t["truncated"].to_numpy(zero_copy_only=False)
        order = np.lexsort((seq, drv, world))
        world, drv, ep, es, seq, done = world[order], drv[order], ep[order], es[order], seq[order], done[order]
        car = world * k + drv
        return cls(world, drv, ep, es, seq, done, car, np.concatenate([[True], np.diff(car) != 0]))


def _check_rows(t, m: dict, v: Verdict) -> None:
    """The rows of every file together (``ROW_COLUMNS``): the manifest's drivers, then the first of a
    duplicate transition, a gap in a car's seqs or an episode that does not continue or follow an ended
    one; in a complete run, the row count and every car's last row ending its episode."""
    controlled = m["layout"]["controlled"]
    index = {d: i for i, d in enumerate(controlled)}
    drv_names = t["driver"].to_pylist()
    if any(d not in index for d in set(drv_names)):
        v.problems.append(f"driver column: names {sorted(set(drv_names) - set(index))} are not the manifest's "
                          "controlled drivers")
        return
    r = _Rows.of(t, np.array([index[d] for d in drv_names], np.int64), len(controlled))
    for check in (_duplicate, _gap, _episode_break):
        problem = check(r, controlled)
        if problem is not None:
            v.problems.append(problem)
            return
    if v.complete:
        v.problems.extend(_incomplete_rows(r, controlled, m["config"]["steps"], v.expected["rows"]))


def _duplicate(r: _Rows, controlled: list) -> str | None:
    key = np.lexsort((r.es, r.ep, r.car))
    dup = (np.diff(r.car[key]) == 0) & (np.diff(r.ep[key]) == 0) & (np.diff(r.es[key]) == 0)
    if not dup.any():
        return None
    i = key[np.argmax(dup)]
    return (f"duplicate transition: world {r.world[i]}, driver {controlled[r.drv[i]]}, episode {r.ep[i]}, "
            f"step {r.es[i]}")


def _gap(r: _Rows, controlled: list) -> str | None:
    seq, first = r.seq, r.first
    bad = (~first & ((seq - np.roll(seq, 1)) != 1)) | (first & (seq != 1))
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return (f"gap: world {r.world[i]}, driver {controlled[r.drv[i]]}: seq {seq[i]} follows "
            f"{seq[i - 1] if not first[i] else 'nothing'} (expected {seq[i - 1] + 1 if not first[i] else 1})")


def _episode_break(r: _Rows, controlled: list) -> str | None:
    ep, es, first = r.ep, r.es, r.first
    prev_ep, prev_es, prev_done = np.roll(ep, 1), np.roll(es, 1), np.roll(r.done, 1)
    cont = ~first & (ep == prev_ep) & (es != prev_es + 1)
    new_ep = ~first & (ep != prev_ep) & ((es != 1) | ~prev_done | (ep < prev_ep))
    bad = cont | new_ep | (first & (es != 1) & (r.seq == 1))
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return (f"episode not contiguous: world {r.world[i]}, driver {controlled[r.drv[i]]}, episode {ep[i]} step "
            f"{es[i]} at seq {r.seq[i]} follows episode {prev_ep[i]} step {prev_es[i]}"
            f"{' (which had not ended)' if not prev_done[i] and ep[i] != prev_ep[i] else ''}")


def _incomplete_rows(r: _Rows, controlled: list, steps: int, rows: int) -> list:
    problems = []
    if len(r.seq) != rows:
        problems.append(f"row count: {len(r.seq)} rows, a complete run of this config has {rows}")
    last = r.seq == steps
    if not r.done[last].all():
        i = int(np.flatnonzero(last & ~r.done)[0])
        problems.append(f"world {r.world[i]}, driver {controlled[r.drv[i]]}: its last row (seq {r.seq[i]}) does not "
                        f"end its episode (expected truncated, end_reason {COLLECTION_END})")
    return problems
