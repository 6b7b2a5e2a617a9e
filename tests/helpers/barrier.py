"""Crashing cars through the simulation, for the adapter tests: a car's current life is driven off the
track at 60 degrees to the right of it at about 20 m/s until the barrier destroys it (about 40 steps of
4 ticks on the oval from a rolling start or a grid placement). The driver reads the engine's state
(``BatchEnv.state``) and acts through the adapter's ``step`` only."""

import math

import numpy as np

from paddock_ma.sim.core import layout as L

COAST = np.zeros(3, np.float32)


def into_the_barrier(env, agent) -> np.ndarray:
    """The action (steering, throttle, brake) float32[3] that takes ``agent``'s car toward the barrier on
    the right of the track: steer to a heading 60 degrees right of the track's, full throttle below
    20 m/s, a little above."""
    w, k, _ = env.lives.index[agent]
    car = env.engine.state.cars_f[w, env.engine.slots[k]]
    steer = min(max(1.5 * (math.radians(60.0) - car[L.F_HEADING_ERROR]), -1.0), 1.0)
    return np.array([steer, 1.0 if car[L.F_SPEED] < 20.0 else 0.3, 0.0], np.float32)


def drive_into_barrier(env, cars, max_steps=150):
    """Step ``env`` (the PettingZoo or RLlib adapter) with the current lives of ``cars`` ((world, k) pairs)
    driving into the barrier and every other live agent coasting, until each of those lives has ended.

    Returns (the last step's (obs, rewards, terminations, truncations, infos), {ended agent: its
    termination flag}) and fails when a life is still running after ``max_steps`` steps."""
    targets = {env.lives.agent_of(w, k) for w, k in cars}
    ended = {}
    for _ in range(max_steps):
        out = env.step({a: into_the_barrier(env, a) if a in targets else COAST for a in env.agents})
        term, trunc = out[2], out[3]
        ended.update({a: bool(term[a]) for a in targets if term.get(a) or trunc.get(a)})
        if len(ended) == len(targets):
            return out, ended
    raise AssertionError(f"{sorted(targets - set(ended))} still running after {max_steps} steps")
