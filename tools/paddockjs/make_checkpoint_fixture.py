"""Make tests/paddockjs/fixtures/checkpoint-*.json: an exported actor, a recorded observation sequence and
the actions PaddockJS's own ``createCheckpointPolicy`` (run under Node from a PaddockJS checkout) takes on
it. The test (tests/paddockjs/test_checkpoint_paddockjs.py) then checks our ``ActorPolicy`` against
PaddockJS's actions with no checkout. A maintainer tool:

    python tools/paddockjs/make_checkpoint_fixture.py /tmp/paddockjs    # a checkout of PaddockJS 28fc6c4

The sequence: world 0 of paddock/oval-batch-v0, cars car-00 and car-01 driven by the actor itself for
STEPS steps from random placements, every driver's policy state reset before step RESET_AT (PaddockJS's
actor policy clears every driver's state on a reset). Vectors are written as the shortest decimal of their
float32 value, so both sides read the same numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from paddock_ma.adapters.vector_env import CarVectorEnv  # noqa: E402
from paddock_ma.paddockjs.checkpoint import (  # noqa: E402
    HISTORY_SIZE, ActorPolicy, export_actor, make_torch_actor, vector_speed_offset,
)

FIXTURES = ROOT / "tests" / "paddockjs" / "fixtures"
DRIVERS = ("car-00", "car-01")
STEPS, RESET_AT = 24, 12


def short(values) -> list[float]:
    return [float(str(np.float32(x))) for x in values]


def main(checkout: str) -> None:
    torch.manual_seed(7)
    env = CarVectorEnv("paddock/oval-batch-v0", 1)
    vectors, _ = env.reset(seed=3)
    actor = make_torch_actor(vectors.shape[1] + HISTORY_SIZE, (16, 16, 16))
    actor_path = FIXTURES / "checkpoint-actor.json"
    doc = export_actor(actor, actor_path, metadata={"made_by": "tools/paddockjs/make_checkpoint_fixture.py"})
    policy = ActorPolicy(doc, env.num_envs)
    steps = []
    for t in range(STEPS):
        vectors = np.array([short(v) for v in vectors], np.float64)
        speed, offset = vector_speed_offset(vectors)
        if t == RESET_AT:
            policy.history.reset()
        steps.append({"reset": list(DRIVERS) if t == RESET_AT else None, "observations": {
            d: {"vector": vectors[k].tolist(),
                "object": {"self": {"id": d, "speedKph": speed[k], "trackOffsetMeters": offset[k]}}}
            for k, d in enumerate(DRIVERS)}})
        controls = policy.decide(vectors, speed, offset)
        vectors, *_ = env.step(controls)
    steps_path = FIXTURES / "checkpoint-steps.json"
    steps_path.write_text(json.dumps({"steps": steps}))
    out = subprocess.run(["node", str(ROOT / "tools/paddockjs/run_checkpoint_policy.mjs"), checkout,
                          str(actor_path), str(steps_path)], check=True, capture_output=True, text=True).stdout
    (FIXTURES / "checkpoint-paddockjs-actions.json").write_text(
        json.dumps({"source": "PaddockJS 28fc6c4 local-preview/src/policyRunner/checkpointPolicy.js "
                    "createCheckpointPolicy, under Node", **json.loads(out)}))
    print(f"wrote {actor_path.name}, {steps_path.name}, checkpoint-paddockjs-actions.json in {FIXTURES}")


if __name__ == "__main__":
    main(sys.argv[1])
