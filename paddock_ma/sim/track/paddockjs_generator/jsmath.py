"""PaddockJS's units and JavaScript's arithmetic, as its track generator uses them.

Lengths are sim units (``U`` = 12 per metre) in PaddockJS's frame (x right, y down). ``js_*`` reproduce
V8's ``Math`` functions where numpy's differ in rounding; ``mulberry32`` is PaddockJS's seeded stream
(32-bit state, floats in [0, 1)), ``normalize_seed`` its rule for ``trackSeed`` values."""

import math

import numpy as np

SIM_UNITS_PER_METER = 12.0
U = SIM_UNITS_PER_METER
PI = math.pi
TWO_PI = math.pi * 2

WORLD_W = 3550 * U
WORLD_H = 2148 * U
TRACK_WIDTH = 15 * U
KERB_WIDTH = 1.5 * U
GRAVEL_WIDTH = 12 * U
RUNOFF_WIDTH = 20 * U
SAMPLE_COUNT = 3600

TRACK_BOUNDARY_PADDING = 248 * U
PIT_WORLD_PADDING = 24 * U

MASK32 = 0xFFFFFFFF


def js_round(x: float) -> float:
    """JavaScript's Math.round: nearest integer, halves toward +infinity."""
    return float(math.floor(x + 0.5))


def js_hypot(a: float, b: float) -> float:
    """V8's Math.hypot of two numbers: normalised by the larger magnitude, Kahan-summed squares."""
    a, b = abs(a), abs(b)
    top = a if a > b else b
    if top == 0.0:
        return 0.0
    total = 0.0
    compensation = 0.0
    for value in (a, b):
        n = value / top
        summand = n * n - compensation
        preliminary = total + summand
        compensation = (preliminary - total) - summand
        total = preliminary
    return math.sqrt(total) * top


def js_hypot_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``js_hypot`` elementwise (the same operations on float64 arrays)."""
    a, b = np.abs(a), np.abs(b)
    top = np.maximum(a, b)
    safe = np.where(top == 0.0, 1.0, top)
    n0 = a / safe
    s0 = n0 * n0                                  # first summand, compensation 0
    total = 0.0 + s0
    compensation = (total - 0.0) - s0
    n1 = b / safe
    summand = n1 * n1 - compensation
    total = total + summand
    return np.where(top == 0.0, 0.0, np.sqrt(total) * top)


def normalize_angle(angle: float) -> float:
    """PaddockJS's normalizeAngle: into [-pi, pi) via JavaScript's remainder (C fmod)."""
    value = math.fmod(angle + PI, TWO_PI) - PI
    if value < -PI:
        value += TWO_PI
    return value


def normalize_angle_array(angle: np.ndarray) -> np.ndarray:
    value = np.fmod(angle + PI, TWO_PI) - PI
    return np.where(value < -PI, value + TWO_PI, value)


def clamp(value, lo, hi):
    """JavaScript's Math.min(Math.max(value, lo), hi) (hi wins when lo > hi)."""
    return min(max(value, lo), hi)


def wrap_distance(value: float, length: float) -> float:
    return math.fmod(math.fmod(value, length) + length, length)


def mulberry32(seed: int):
    """PaddockJS's createMulberry32: a function returning floats in [0, 1), bit for bit."""
    state = seed & MASK32

    def random() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & MASK32
        t = state
        t = ((t ^ (t >> 15)) * (t | 1)) & MASK32
        t ^= (t + ((t ^ (t >> 7)) * (t | 61))) & MASK32
        return ((t ^ (t >> 14)) & MASK32) / 4294967296.0

    return random


def seeded_range(random, lo, hi):
    return lo + (hi - lo) * random()


def random_integer(random, lo, hi) -> int:
    return int(math.floor(seeded_range(random, lo, hi + 1)))


def clamp_integer(value, lo, hi) -> int:
    return int(js_round(clamp(value, lo, hi)))


def normalize_seed(seed) -> int:
    """PaddockJS's normalizeSeed: a finite number -> ToUint32 (truncated, modulo 2^32); anything else
    (a string, or a missing seed as 'f1-track') -> the FNV-1a hash of its UTF-16 code units."""
    if isinstance(seed, bool):
        seed = int(seed)
    if isinstance(seed, (int, float)) and math.isfinite(seed):
        return int(math.trunc(seed)) & MASK32
    text = "f1-track" if seed is None else str(seed)
    value = 2166136261
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        value ^= units[i] | (units[i + 1] << 8)
        value = (value * 16777619) & MASK32
    return value
