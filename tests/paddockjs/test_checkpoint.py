"""The paddockjs-distilled-actor-v1 export: an exported file, evaluated by an independent numpy
implementation of the format's arithmetic, is the torch actor; the training wrapper builds PaddockJS's
input; the policy that serves a file keeps each driver's history."""

import json

import numpy as np
import pytest
import torch

from paddock_ma.adapters.vector_env import CarVectorEnv
from paddock_ma.errors import PaddockError
from paddock_ma.adapters.paddockjs_actor import PaddockActorVectorEnv
from paddock_ma.paddockjs.checkpoint import (
    FORMAT, HISTORY_SIZE, ActorPolicy, controls_from_steering_accel, evaluate_actor, export_actor, load_actor,
    make_torch_actor, vector_speed_offset,
)


def independent_forward(doc, inputs):
    """The format's arithmetic, written out a second time from checkpointPolicy.js's description: each
    layer's output j is bias[j] + sum_i weight[j][i] * input[i]; ReLU between layers; tanh at the end."""
    out = []
    for row in inputs:
        values = list(map(float, row))[: doc["obsDim"]]
        values += [0.0] * (doc["obsDim"] - len(values))
        for index, layer in enumerate(doc["layers"]):
            values = [b + sum(w * x for w, x in zip(weights, values)) for weights, b in zip(layer["weight"], layer["bias"])]
            if index < len(doc["layers"]) - 1:
                values = [max(0.0, v) for v in values]
        out.append([float(np.tanh(v)) for v in values])
    return np.array(out)


@pytest.fixture(scope="module")
def recorded():
    """1,000 actor inputs recorded from a real rollout of the oval through the PaddockJS-actor wrapper
    (the actor drives, with noise), the actor, and the env's vector width."""
    torch.manual_seed(0)
    env = PaddockActorVectorEnv(CarVectorEnv("paddock/oval-batch-v0", 2))
    obs, _ = env.reset(seed=5)
    actor = make_torch_actor(env.obs_dim, (64, 64, 64))
    rng = np.random.default_rng(0)
    rows = []
    while sum(len(r) for r in rows) < 1000:
        rows.append(obs.copy())
        with torch.no_grad():
            mean = actor(torch.from_numpy(obs)).numpy()
        obs, *_ = env.step(np.clip(mean + rng.normal(0, 0.3, mean.shape), -1, 1))
    env.close()
    return np.concatenate(rows)[:1000], actor, env.obs_dim - HISTORY_SIZE


def test_exported_file_is_the_torch_actor_within_1e5(recorded, tmp_path):
    inputs, actor, _ = recorded
    doc = export_actor(actor, tmp_path / "actor.json")
    loaded = json.loads((tmp_path / "actor.json").read_text())
    assert loaded["format"] == FORMAT and len(loaded["layers"]) == 4 and loaded["obsDim"] == inputs.shape[1]
    with torch.no_grad():
        expected = actor(torch.from_numpy(inputs)).double().numpy()
    assert np.abs(evaluate_actor(loaded, inputs) - expected).max() < 1e-5
    assert np.abs(independent_forward(loaded, inputs[:50]) - expected[:50]).max() < 1e-5
    assert np.abs(expected).max() > 0.01        # the check is not on all-zero outputs
    assert doc == loaded


def test_wrapper_history_features_follow_paddockjs(recorded):
    """Feature columns: previous steering, previous accel, speed change / 100, offset change / 20, zero
    history after a reset; the speed and offset decoded from the vector are the object's."""
    env = PaddockActorVectorEnv(CarVectorEnv("paddock/oval-batch-v0", 1))
    obs, _ = env.reset(seed=1)
    d = env.obs_dim - HISTORY_SIZE
    speed0, offset0 = vector_speed_offset(obs[:, :d])
    assert np.allclose(obs[:, d:d + 2], 0) and np.allclose(obs[:, d + 2], speed0 / 100, atol=1e-6)
    assert np.allclose(obs[:, d + 3], offset0 / 20, atol=1e-6)
    action = np.tile([0.25, -0.5], (env.num_envs, 1))
    obs1, *_ = env.step(action)
    speed1, offset1 = vector_speed_offset(obs1[:, :d])
    assert np.allclose(obs1[:, d:d + 2], action)
    assert np.allclose(obs1[:, d + 2], (speed1 - speed0) / 100, atol=1e-6)
    assert np.allclose(obs1[:, d + 3], (offset1 - offset0) / 20, atol=1e-6)
    # the speed in the vector is the object's self.speedKph
    from paddock_ma.env.views.observation_object import object_view
    assert object_view(env.unwrapped.engine, 0, 0)["self"]["speed_kph"] == pytest.approx(speed1[0], rel=1e-5)
    env.close()


def test_controls_mapping():
    out = controls_from_steering_accel(np.array([[0.5, 0.7], [-2.0, -0.25], [0.0, 0.0]]))
    assert np.allclose(out, [[0.5, 0.7, 0.0], [-1.0, 0.0, 0.25], [0.0, 0.0, 0.0]])


def test_actor_policy_matches_the_trained_network_over_a_rollout(recorded, tmp_path):
    """ActorPolicy (what the policy server runs) builds the same inputs as the training wrapper and
    takes the torch actor's actions, driver by driver, through a rollout."""
    _, actor, _ = recorded
    doc = export_actor(actor, tmp_path / "a.json")
    env = PaddockActorVectorEnv(CarVectorEnv("paddock/oval-batch-v0", 1))
    obs, _ = env.reset(seed=2)
    d = env.obs_dim - HISTORY_SIZE
    policy = ActorPolicy(doc, env.num_envs)
    for _ in range(30):
        with torch.no_grad():
            sa = actor(torch.from_numpy(obs)).double().numpy()
        controls = policy.decide(obs[:, :d], *vector_speed_offset(obs[:, :d]))
        assert np.abs(controls - controls_from_steering_accel(sa)).max() < 1e-5
        obs, *_ = env.step(sa)
    env.close()


@pytest.mark.parametrize("change, field", [
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d.update(obsDim=0), "obsDim"),
    (lambda d: d["layers"].pop(), "layers"),
    (lambda d: d["layers"][1].update(bias=[0.0]), "layers[1].weight"),
    (lambda d: d["layers"][2]["weight"][0].__setitem__(0, float("nan")), "layers[2]"),
])
def test_bad_files_are_refused_naming_the_field(recorded, tmp_path, change, field):
    _, actor, _ = recorded
    doc = export_actor(actor, tmp_path / "a.json")
    change(doc)
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(PaddockError) as err:
        load_actor(tmp_path / "bad.json")
    assert err.value.field == field
