"""WorldState: allocation, copies, canonical bytes, checksums and snapshots of W race worlds.

The state is four contiguous arrays (field indices in ``layout.py``):

* ``cars_f``  float64[W, C, NF]   per-car continuous state (SI units)
* ``cars_i``  int32[W, C, NI]     per-car discrete state and per-step event counters
* ``world_f`` float64[W, NWF]     per-world continuous state (time, ...)
* ``world_i`` int64[W, NWI]       per-world discrete state, including the RNG key and counter

and three parameter arrays that do not change within a step: ``car_params`` float64[W, C, NP],
``car_flags`` int32[W, C] and ``rules`` float64[W, NR].

Canonical bytes are the four state arrays, C-ordered, little-endian, in that order. The checksum is
FNV-1a-64 over those bytes, computed in numba (per world or over the whole batch).

A snapshot is a JSON-safe document: a header (format, version, track fingerprint, shape, layout sizes)
plus every array as base64 of its canonical bytes and an FNV-1a-64 over the whole payload, so a
modified payload, another track or another format version is rejected on restore. Every field is then
checked against its range (``state_check``: codes, indices, flags, finite floats), so a document with
recomputed checksums cannot put a state the kernels would index out of bounds with.

The FNV checksums detect accidents (truncation, bit flips, another track), not forgeries: anyone can
recompute them. For snapshots that cross an untrusted transport, ``snapshot(key=...)`` adds an
HMAC-SHA-256 under a key the two ends share and ``from_snapshot(..., key=...)`` / ``restore(..., key=...)``
refuse a document without a matching one.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import numpy as np

from . import layout as L
from .jit import allocating_kernel, kernel
from .state_check import check_state

SNAPSHOT_FORMAT = "paddock_ma.world-snapshot"
SNAPSHOT_VERSION = 2      # 2: DRS state (race.drs) and PaddockJS's progress fields

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)

# Array name -> (dtype, trailing shape builder). The order is the canonical byte order.
STATE_ARRAYS = ("cars_f", "cars_i", "world_f", "world_i")
PARAM_ARRAYS = ("car_params", "car_flags", "rules")
_DTYPES = {
    "cars_f": np.float64, "cars_i": np.int32, "world_f": np.float64, "world_i": np.int64,
    "car_params": np.float64, "car_flags": np.int32, "rules": np.float64,
}


class SnapshotError(ValueError):
    """A snapshot document that cannot be restored here (format, version, track, shape or payload)."""


@kernel
def fnv1a64_update(h, data):
    """Fold the bytes of ``data`` (uint8[n]) into the FNV-1a-64 hash ``h`` (uint64); return the new hash."""
    for i in range(data.shape[0]):
        h = (h ^ np.uint64(data[i])) * _FNV_PRIME
    return h


def fnv1a64(*arrays: np.ndarray) -> int:
    """FNV-1a-64 of the canonical (C-ordered, little-endian) bytes of ``arrays``, in order."""
    h = _FNV_OFFSET
    for a in arrays:
        # np.uint64 on every call: a Python int below 2**63 would otherwise be typed int64 by numba.
        h = np.uint64(fnv1a64_update(np.uint64(h), _canonical_bytes(a)))
    return int(h)


def _canonical_bytes(a: np.ndarray) -> np.ndarray:
    """uint8 view of ``a`` as C-ordered little-endian bytes (copies only when it must)."""
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and np.little_endian is False):
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.reshape(-1).view(np.uint8)


def track_fingerprint(track) -> str:
    """Hex FNV-1a-64 of a track's centreline and cross-section: which track a snapshot belongs to."""
    widths = np.array([track.length, track.half_width, track.kerb_edge, track.gravel_edge,
                       track.grass_edge], dtype=np.float64)
    return f"{fnv1a64(track.cx, track.cy, widths):016x}"


@dataclass
class WorldState:
    """W worlds x C car slots on one track: the arrays the kernels step.

    Build with ``WorldState.allocate(num_worlds, num_cars, track)``; every array starts at zero (slots
    inactive). The environment layer fills parameters and places cars (``race.placement.place_car``).
    """

    track: object
    cars_f: np.ndarray
    cars_i: np.ndarray
    world_f: np.ndarray
    world_i: np.ndarray
    car_params: np.ndarray
    car_flags: np.ndarray
    rules: np.ndarray

    @classmethod
    def allocate(cls, num_worlds: int, num_cars: int, track) -> "WorldState":
        """Zeroed state for ``num_worlds`` worlds of ``num_cars`` car slots each on ``track``."""
        if num_worlds < 1 or num_cars < 1:
            raise ValueError(f"num_worlds and num_cars must be >= 1, got {num_worlds} and {num_cars}")
        w, c = int(num_worlds), int(num_cars)
        return cls(
            track=track,
            cars_f=np.zeros((w, c, L.NF), np.float64),
            cars_i=np.zeros((w, c, L.NI), np.int32),
            world_f=np.zeros((w, L.NWF), np.float64),
            world_i=np.zeros((w, L.NWI), np.int64),
            car_params=np.zeros((w, c, L.NP), np.float64),
            car_flags=np.zeros((w, c), np.int32),
            rules=np.zeros((w, L.NR), np.float64),
        )

    @property
    def num_worlds(self) -> int:
        return self.cars_f.shape[0]

    @property
    def num_cars(self) -> int:
        return self.cars_f.shape[1]

    def arrays(self, names=STATE_ARRAYS + PARAM_ARRAYS) -> dict:
        return {name: getattr(self, name) for name in names}

    def copy(self) -> "WorldState":
        """A deep copy of every array (the track is immutable and shared)."""
        return WorldState(self.track, **{k: v.copy() for k, v in self.arrays().items()})

    def world(self, w: int) -> "WorldState":
        """A one-world copy of world ``w`` (the same bytes as that world's slice)."""
        return WorldState(self.track, **{k: v[w:w + 1].copy() for k, v in self.arrays().items()})

    def canonical_bytes(self, w: int | None = None) -> bytes:
        """The canonical state bytes of world ``w`` (or of the whole batch)."""
        sl = slice(None) if w is None else slice(w, w + 1)
        return b"".join(_canonical_bytes(getattr(self, n)[sl]).tobytes() for n in STATE_ARRAYS)

    def checksum(self, w: int | None = None) -> int:
        """FNV-1a-64 of the canonical state bytes of world ``w`` (or of the whole batch)."""
        sl = slice(None) if w is None else slice(w, w + 1)
        return fnv1a64(*(getattr(self, n)[sl] for n in STATE_ARRAYS))

    def checksums(self) -> np.ndarray:
        """uint64[W]: the checksum of each world, as ``checksum(w)`` gives it."""
        return world_checksums(self.cars_f, self.cars_i, self.world_f, self.world_i)

    def memory_bytes(self) -> int:
        """Bytes held by the state and parameter arrays (the track not included)."""
        return sum(a.nbytes for a in self.arrays().values())

    # -- snapshots ---------------------------------------------------------------------------
    def snapshot(self, key: bytes | None = None) -> dict:
        """A JSON-safe, checksummed document of every state and parameter array; with ``key`` (bytes),
        also ``hmac``: HMAC-SHA-256 of the document under that key (see the module docstring)."""
        payload = {n: base64.b64encode(_canonical_bytes(a).tobytes()).decode("ascii")
                   for n, a in self.arrays().items()}
        doc = {
            "format": SNAPSHOT_FORMAT,
            "version": SNAPSHOT_VERSION,
            "track": track_fingerprint(self.track),
            "shape": {"worlds": self.num_worlds, "cars": self.num_cars},
            "layout": _layout_sizes(),
            "state_checksum": f"{self.checksum():016x}",
            "arrays": payload,
            "payload_checksum": f"{_payload_checksum(payload):016x}",
        }
        if key is not None:
            doc["hmac"] = snapshot_hmac(doc, key)
        return doc

    @classmethod
    def from_snapshot(cls, doc: dict, track, key: bytes | None = None) -> "WorldState":
        """Rebuild a WorldState from ``snapshot()``'s document; raises SnapshotError when it does not fit.
        ``key``: the document must carry a matching ``hmac`` (``snapshot(key=...)``)."""
        if not isinstance(doc, dict):
            raise SnapshotError(f"snapshot: expected a JSON object, got {type(doc).__name__}")
        if key is not None:
            import hmac as _hmac
            if not isinstance(doc.get("hmac"), str) or not _hmac.compare_digest(doc["hmac"], snapshot_hmac(doc, key)):
                raise SnapshotError("snapshot.hmac: missing or not made with this key; the snapshot was not written "
                                    "by a holder of the key (or was modified): take it again with snapshot(key=...)")
        if doc.get("format") != SNAPSHOT_FORMAT:
            raise SnapshotError(f"snapshot.format: expected {SNAPSHOT_FORMAT!r}, got {doc.get('format')!r}")
        if doc.get("version") != SNAPSHOT_VERSION:
            raise SnapshotError(
                f"snapshot.version: this build reads version {SNAPSHOT_VERSION}, got {doc.get('version')!r}; "
                "take the snapshot again with this version")
        expected_track = track_fingerprint(track)
        if doc.get("track") != expected_track:
            raise SnapshotError(
                f"snapshot.track: the snapshot belongs to track {doc.get('track')!r}, this world runs track "
                f"{expected_track!r}; restore it into an environment on the same track")
        if doc.get("layout") != _layout_sizes():
            raise SnapshotError(f"snapshot.layout: field counts {doc.get('layout')!r} differ from this "
                                f"build's {_layout_sizes()!r}")
        payload = doc.get("arrays")
        if not isinstance(payload, dict) or set(payload) != set(STATE_ARRAYS + PARAM_ARRAYS):
            raise SnapshotError("snapshot.arrays: expected exactly the arrays "
                                f"{', '.join(STATE_ARRAYS + PARAM_ARRAYS)}")
        if doc.get("payload_checksum") != f"{_payload_checksum(payload):016x}":
            raise SnapshotError("snapshot.payload_checksum: the payload does not match its checksum; "
                                "the snapshot was modified or truncated")
        shape = doc.get("shape") or {}
        w, c = shape.get("worlds"), shape.get("cars")
        if not isinstance(w, int) or not isinstance(c, int) or w < 1 or c < 1:
            raise SnapshotError(f"snapshot.shape: expected positive integers, got {shape!r}")
        empty = cls.allocate(w, c, track)
        arrays = {}
        for name in STATE_ARRAYS + PARAM_ARRAYS:
            like = getattr(empty, name)
            raw = base64.b64decode(payload[name], validate=True)
            if len(raw) != like.nbytes:
                raise SnapshotError(f"snapshot.arrays.{name}: {len(raw)} bytes, expected {like.nbytes}")
            arrays[name] = np.frombuffer(raw, dtype=np.dtype(_DTYPES[name]).newbyteorder("<")) \
                .astype(_DTYPES[name]).reshape(like.shape)
        restored = cls(track, **arrays)
        if doc.get("state_checksum") != f"{restored.checksum():016x}":
            raise SnapshotError("snapshot.state_checksum: the restored state does not match its checksum")
        bad = check_state(arrays, track)
        if bad is not None:
            raise SnapshotError(f"snapshot.{bad}: a state the simulation cannot run (the checksums only show the "
                                "bytes are the ones written); take the snapshot again")
        return restored

    def restore(self, doc: dict, key: bytes | None = None) -> None:
        """Overwrite this state in place from a snapshot of the same shape (arrays keep identity); ``key``
        as for ``from_snapshot``."""
        other = WorldState.from_snapshot(doc, self.track, key)
        if (other.num_worlds, other.num_cars) != (self.num_worlds, self.num_cars):
            raise SnapshotError(
                f"snapshot.shape: {other.num_worlds} worlds x {other.num_cars} cars cannot restore into "
                f"{self.num_worlds} x {self.num_cars}")
        for name, arr in other.arrays().items():
            getattr(self, name)[...] = arr


def snapshot_hmac(doc: dict, key: bytes) -> str:
    """HMAC-SHA-256 (hex) under ``key`` of ``doc`` without its ``hmac`` entry (canonical JSON)."""
    import hashlib
    import hmac
    import json
    if not isinstance(key, (bytes, bytearray)) or not key:
        raise SnapshotError(f"key: got {type(key).__name__}; expected non-empty bytes shared by both ends")
    body = json.dumps({k: v for k, v in doc.items() if k != "hmac"}, sort_keys=True, separators=(",", ":"))
    return hmac.new(bytes(key), body.encode(), hashlib.sha256).hexdigest()


def _layout_sizes() -> dict:
    return {"NF": L.NF, "NI": L.NI, "NWF": L.NWF, "NWI": L.NWI, "NP": L.NP, "NR": L.NR}


def _payload_checksum(payload: dict) -> int:
    h = _FNV_OFFSET
    for name in sorted(payload):
        h = np.uint64(fnv1a64_update(np.uint64(h), np.frombuffer(name.encode() + b"=" + str(payload[name]).encode(),
                                                                  np.uint8)))
    return int(h)


@kernel
def _world_checksum(cf, ci, wf, wi):
    h = _FNV_OFFSET
    h = fnv1a64_update(h, cf.reshape(-1).view(np.uint8))
    h = fnv1a64_update(h, ci.reshape(-1).view(np.uint8))
    h = fnv1a64_update(h, wf.reshape(-1).view(np.uint8))
    h = fnv1a64_update(h, wi.reshape(-1).view(np.uint8))
    return h


@allocating_kernel
def _world_checksums(cars_f, cars_i, world_f, world_i, out):
    for w in range(cars_f.shape[0]):
        out[w] = _world_checksum(cars_f[w:w + 1].copy(), cars_i[w:w + 1].copy(),
                                 world_f[w:w + 1].copy(), world_i[w:w + 1].copy())


def world_checksums(cars_f, cars_i, world_f, world_i) -> np.ndarray:
    """uint64[W] FNV-1a-64 per world over that world's canonical state bytes (little-endian hosts)."""
    out = np.zeros(cars_f.shape[0], np.uint64)
    _world_checksums(cars_f, cars_i, world_f, world_i, out)
    return out
