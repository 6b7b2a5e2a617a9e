"""Shared helpers of the environment-contract tests: small oval worlds, few steps."""

from __future__ import annotations

import copy

from paddock_ma.env.environment import PaddockEnv
from paddock_ma.sim.core import layout as L

# 4 cars on the oval (2448.6 m lap, straights at s < 288 m and s > 2160 m), rolling start so the
# cars move from step one, two controlled drivers.
BASE = {
    "drivers": 4,
    "controlled_drivers": ["car-00", "car-01"],
    "track": "oval",
    "seed": 11,
    "total_laps": 3,
    "rules": {"standing_start": False},
}


def merge(base: dict, extra: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def config(**overrides) -> dict:
    return merge(BASE, overrides)


def make_env(**overrides) -> PaddockEnv:
    return PaddockEnv(config(**overrides))


def act(steering=0.0, throttle=0.5, brake=0.0, **extra) -> dict:
    return dict(steering=steering, throttle=throttle, brake=brake, **extra)


def all_act(env, **kw) -> dict:
    """The same action for every controlled driver whose episode is running."""
    running = env.engine.running_mask()[env.w]
    return {d: act(**kw) for d, run in zip(env.controlled, running) if run}


def slot(env, driver_id) -> int:
    return env.engine.driver_ids.index(driver_id)


def car_bytes(env, c, w=0) -> bytes:
    st = env.engine.state          # a PaddockEnv's engine, or a BatchEnv (its own engine)
    return st.cars_f[w, c].tobytes() + st.cars_i[w, c].tobytes()


def world_bytes(batch) -> bytes:
    st = batch.state
    return b"".join(a.tobytes() for a in (st.cars_f, st.cars_i, st.world_f, st.world_i, st.car_flags))


def decode(vector, schema) -> dict:
    assert len(vector) == len(schema)
    return {e["name"]: float(v) for e, v in zip(schema, vector)}


KPH_PER_MPS = 3.6
SURF = L.SURFACE_NAMES
