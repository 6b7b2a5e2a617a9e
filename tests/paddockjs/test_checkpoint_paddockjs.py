"""Our ActorPolicy against PaddockJS's own checkpoint controller: fixtures/checkpoint-paddockjs-actions.json
holds the actions PaddockJS 28fc6c4's ``createCheckpointPolicy`` (Node) took on fixtures/checkpoint-actor.json
over fixtures/checkpoint-steps.json (made by tools/paddockjs/make_checkpoint_fixture.py from a checkout)."""

import json
from pathlib import Path

import numpy as np

from paddock_ma.paddockjs.checkpoint import ActorPolicy, load_actor

FIXTURES = Path(__file__).parent / "fixtures"


def test_actor_policy_takes_paddockjs_actions():
    doc = load_actor(FIXTURES / "checkpoint-actor.json")
    steps = json.loads((FIXTURES / "checkpoint-steps.json").read_text())["steps"]
    expected = json.loads((FIXTURES / "checkpoint-paddockjs-actions.json").read_text())["actions"]
    drivers = list(steps[0]["observations"])
    policy = ActorPolicy(doc, len(drivers))
    worst = 0.0
    for step, theirs in zip(steps, expected, strict=True):
        if step["reset"]:
            policy.history.reset([drivers.index(d) for d in step["reset"]])
        obs = [step["observations"][d] for d in drivers]
        ours = policy.decide(np.array([o["vector"] for o in obs]),
                             np.array([o["object"]["self"]["speedKph"] for o in obs]),
                             np.array([o["object"]["self"]["trackOffsetMeters"] for o in obs]))
        for k, d in enumerate(drivers):
            ref = [theirs[d]["steering"], theirs[d]["throttle"], theirs[d]["brake"]]
            worst = max(worst, float(np.abs(ours[k].astype(np.float64) - ref).max()))
    assert worst < 1e-6        # float32 controls vs PaddockJS's float64
