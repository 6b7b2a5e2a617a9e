"""PaddockJS's ``paddockjs-distilled-actor-v1`` checkpoint: the network, its input, export and evaluation.

The format is what PaddockJS 2.0's Policy Runner loads (``local-preview/src/policyRunner/
checkpointPolicy.js``): a JSON object ``{"format": "paddockjs-distilled-actor-v1", "obsDim": D_in,
"layers": [{"weight": [[...]], "bias": [...]}] * 4}``; the actor is four linear layers with ReLU between
them and tanh on the last layer's two outputs, ``(steering, accel)``; ``accel >= 0`` is throttle, ``< 0``
brake (``controls_from_steering_accel``).

Its input (``actor_input``) is the driver's observation vector followed by four history features, in
this order and these units, then cut or zero-padded to ``obsDim``:

1. the previous step's steering (the clamped network output, [-1, 1]; 0 after a reset)
2. the previous step's accel (likewise)
3. (speed km/h now - speed km/h at the previous step) / 100  (the previous speed is 0 after a reset)
4. (track offset m now - track offset m at the previous step) / 20  (likewise 0 after a reset)

Speed and offset are ``self.speedKph`` and ``self.trackOffsetMeters`` of the observation object; the
vector carries both (``vector_speed_offset``: the vector's first entry is km/h / 400 and its 12th the raw
offset in m), so the features are computed from vectors alone when no object is at hand.

``History`` keeps that per-driver state for N drivers at once (training wrappers, the policy server);
``evaluate_actor`` is an independent float64 numpy implementation of the format's arithmetic (what a
test checks an exported file against); ``export_actor`` writes a torch actor (``PaddockActor`` or any
module whose four ``nn.Linear`` layers are in order) as the JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import INVALID_CONFIG, PaddockError
from ..value_rules import integer_problem
from ..env.observations import BASE_FIELD_NAMES

FORMAT = "paddockjs-distilled-actor-v1"
NUM_LAYERS = 4                 # checkpointPolicy.js refuses any other count
NUM_OUTPUTS = 2                # steering, accel
HISTORY_SIZE = 4               # previous steering, previous accel, speed change / 100, offset change / 20
SPEED_CHANGE_SCALE = 100.0     # km/h
OFFSET_CHANGE_SCALE = 20.0     # m
SPEED_INDEX = BASE_FIELD_NAMES.index("self.speedKph")             # scaled km/h / 400 in the vector
SPEED_VECTOR_SCALE = 400.0
OFFSET_INDEX = BASE_FIELD_NAMES.index("self.trackOffsetMeters")   # raw metres in the vector


def vector_speed_offset(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(speed km/h float64[N], track offset m float64[N]) decoded from observation vectors float32[N, D]."""
    v = np.asarray(vectors)
    return v[:, SPEED_INDEX].astype(np.float64) * SPEED_VECTOR_SCALE, v[:, OFFSET_INDEX].astype(np.float64)


def fit_input(rows: np.ndarray, obs_dim: int) -> np.ndarray:
    """float[N, obs_dim]: each row cut to ``obs_dim`` or zero-padded to it (PaddockJS's ``fitCheckpointInput``)."""
    rows = np.asarray(rows)
    n, d = rows.shape
    if d >= obs_dim:
        return rows[:, :obs_dim]
    return np.concatenate([rows, np.zeros((n, obs_dim - d), rows.dtype)], axis=1)


def controls_from_steering_accel(steering_accel: np.ndarray) -> np.ndarray:
    """float32[N, 3] ``[steering, throttle, brake]`` of ``(steering, accel)`` float[N, 2]: both clamped to
    [-1, 1]; accel >= 0 is throttle, < 0 is brake (PaddockJS's ``actionFromSteeringAccel``)."""
    sa = np.clip(np.asarray(steering_accel, np.float64), -1.0, 1.0)
    out = np.zeros((sa.shape[0], 3), np.float32)
    out[:, 0] = sa[:, 0]
    out[:, 1] = np.maximum(sa[:, 1], 0.0)
    out[:, 2] = np.maximum(-sa[:, 1], 0.0)
    return out


class History:
    """The per-driver recurrent state of the actor's input for N drivers (rows): previous action
    (steering, accel), previous speed (km/h) and previous offset (m), all 0 after a reset.

    Per decision: ``features(speed, offset)`` gives the four history features float64[N, 4] of the
    current observation; ``advance(steering_accel, speed, offset)`` then records the action taken and the
    observation it was taken on (PaddockJS updates its state in the same order inside ``predict``).
    """

    def __init__(self, n: int):
        self.previous_action = np.zeros((n, NUM_OUTPUTS))
        self.previous_speed = np.zeros(n)
        self.previous_offset = np.zeros(n)

    def reset(self, rows=None) -> None:
        """Zero the state of ``rows`` (bool[N] or indices; None = every row)."""
        rows = slice(None) if rows is None else rows
        self.previous_action[rows] = 0.0
        self.previous_speed[rows] = 0.0
        self.previous_offset[rows] = 0.0

    def features(self, speed_kph: np.ndarray, offset_m: np.ndarray, rows=None) -> np.ndarray:
        rows = slice(None) if rows is None else rows
        return np.column_stack([self.previous_action[rows],
                                (np.asarray(speed_kph, np.float64) - self.previous_speed[rows]) / SPEED_CHANGE_SCALE,
                                (np.asarray(offset_m, np.float64) - self.previous_offset[rows]) / OFFSET_CHANGE_SCALE])

    def advance(self, steering_accel: np.ndarray, speed_kph: np.ndarray, offset_m: np.ndarray, rows=None) -> None:
        rows = slice(None) if rows is None else rows
        self.previous_action[rows] = np.clip(np.asarray(steering_accel, np.float64), -1.0, 1.0)
        self.previous_speed[rows] = speed_kph
        self.previous_offset[rows] = offset_m


def actor_input(vectors: np.ndarray, history_features: np.ndarray, obs_dim: int) -> np.ndarray:
    """float32[N, obs_dim]: the observation vectors [N, D] followed by the history features [N, 4], fitted."""
    joined = np.concatenate([np.asarray(vectors, np.float32), np.asarray(history_features, np.float32)], axis=1)
    return np.ascontiguousarray(fit_input(joined, obs_dim))


# -- the file ------------------------------------------------------------------------------------------
def validate_actor(doc: dict) -> dict:
    """``doc`` if it is a well-formed actor file (what ``checkpointPolicy.js`` needs), else PaddockError
    (invalid_config) naming the field: format, obsDim, four layers of consistent shapes, finite numbers."""
    def bad(field, message):
        raise PaddockError(INVALID_CONFIG, f"{field}: {message}", field)
    if not isinstance(doc, dict):
        bad("checkpoint", f"expected a JSON object, got {type(doc).__name__}")
    if doc.get("format") != FORMAT:
        bad("format", f"got {doc.get('format')!r}; expected {FORMAT!r}")
    obs_dim = doc.get("obsDim")
    problem = integer_problem(obs_dim, low=1)
    if problem is not None:
        bad("obsDim", f"{problem} (the actor's input width)")
    layers = doc.get("layers")
    if not isinstance(layers, list) or len(layers) != NUM_LAYERS:
        bad("layers", f"expected a list of {NUM_LAYERS} layers, got "
            f"{len(layers) if isinstance(layers, list) else type(layers).__name__}")
    width = obs_dim
    for i, layer in enumerate(layers):
        try:
            w = np.asarray(layer["weight"], np.float64)
            b = np.asarray(layer["bias"], np.float64)
        except (KeyError, TypeError, ValueError):
            bad(f"layers[{i}]", "expected {weight: [[number]], bias: [number]} of rectangular shape")
        if w.ndim != 2 or b.shape != (w.shape[0],) or w.shape[1] != width:
            bad(f"layers[{i}].weight", f"shape {w.shape} with bias {b.shape}; expected [out, {width}] and [out]")
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            bad(f"layers[{i}]", "holds a non-finite number")
        width = w.shape[0]
    if width != NUM_OUTPUTS:
        bad(f"layers[{NUM_LAYERS - 1}].weight", f"has {width} outputs; expected {NUM_OUTPUTS} (steering, accel)")
    return doc


def load_actor(path) -> dict:
    """The validated actor document of a JSON file."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise PaddockError(INVALID_CONFIG, f"checkpoint: cannot read {path}: {exc}", "checkpoint") from None
    return validate_actor(doc)


def evaluate_actor(doc: dict, inputs: np.ndarray) -> np.ndarray:
    """float64[N, 2] tanh outputs (steering, accel) of the actor file ``doc`` on inputs [N, obsDim]:
    linear, ReLU, linear, ReLU, linear, ReLU, linear, tanh in float64 (the format's arithmetic, written
    without torch so that it checks an export independently)."""
    x = fit_input(np.asarray(inputs, np.float64), doc["obsDim"])
    layers = doc["layers"]
    for i, layer in enumerate(layers):
        x = x @ np.asarray(layer["weight"], np.float64).T + np.asarray(layer["bias"], np.float64)
        if i < len(layers) - 1:
            x = np.maximum(x, 0.0)
    return np.tanh(x)


class ActorPolicy:
    """A loaded actor file driving N drivers: per-driver history, decisions as controls.

    ``decide(vectors[N, D], speed_kph[N], offset_m[N]) -> float32[N, 3]`` builds each driver's input,
    evaluates the actor (float64 numpy, one matrix product per layer for the batch) and advances the
    history; ``history.reset(rows)`` starts drivers afresh.
    """

    def __init__(self, doc: dict, n: int):
        self.doc = validate_actor(doc)
        self.obs_dim = int(doc["obsDim"])
        self.weights = [(np.asarray(l["weight"], np.float64).T.copy(), np.asarray(l["bias"], np.float64))
                        for l in doc["layers"]]
        self.history = History(n)

    def forward(self, inputs: np.ndarray) -> np.ndarray:
        x = np.asarray(inputs, np.float64)
        for i, (w, b) in enumerate(self.weights):
            x = x @ w + b
            if i < len(self.weights) - 1:
                np.maximum(x, 0.0, out=x)
        return np.clip(np.tanh(x), -1.0, 1.0)

    def decide(self, vectors: np.ndarray, speed_kph: np.ndarray, offset_m: np.ndarray, rows=None) -> np.ndarray:
        feats = self.history.features(speed_kph, offset_m, rows)
        vectors = np.asarray(vectors, np.float64)
        x = fit_input(np.concatenate([vectors, feats], axis=1), self.obs_dim)
        sa = self.forward(x)
        self.history.advance(sa, speed_kph, offset_m, rows)
        return controls_from_steering_accel(sa)


# -- torch ---------------------------------------------------------------------------------------------
def make_torch_actor(obs_dim: int, hidden=(64, 64, 64)):
    """A torch ``PaddockActor``: Linear(obs_dim, h1), ReLU, Linear(h1, h2), ReLU, Linear(h2, h3), ReLU,
    Linear(h3, 2), tanh: exactly the network the format stores. Its forward gives the (steering, accel)
    means in [-1, 1]."""
    from torch import nn

    class PaddockActor(nn.Module):
        def __init__(self):
            super().__init__()
            h1, h2, h3 = hidden
            self.obs_dim = obs_dim
            self.layers = nn.ModuleList([nn.Linear(obs_dim, h1), nn.Linear(h1, h2), nn.Linear(h2, h3),
                                         nn.Linear(h3, NUM_OUTPUTS)])

        def forward(self, x):
            for layer in self.layers[:-1]:
                x = layer(x).relu()
            return self.layers[-1](x).tanh()

    return PaddockActor()


def actor_from_linear_layers(layers):
    """A ``make_torch_actor`` copy of four ``nn.Linear`` layers in order (ReLU between them in the source
    network); the last layer may have more outputs (e.g. Gaussian means then log standard deviations, as
    RLlib's pi head): its first two (the steering and accel means) are kept."""
    import torch
    if len(layers) != NUM_LAYERS:
        raise PaddockError(INVALID_CONFIG, f"actor: got {len(layers)} linear layers; the format stores exactly "
                           f"{NUM_LAYERS}", "actor")
    actor = make_torch_actor(layers[0].in_features, tuple(l.out_features for l in layers[:-1]))
    with torch.no_grad():
        for mine, theirs in zip(actor.layers, layers):
            rows = mine.out_features
            mine.weight.copy_(theirs.weight[:rows])
            mine.bias.copy_(theirs.bias[:rows])
    return actor


def actor_from_rllib_module(module):
    """The PaddockJS actor inside an RLlib PPO module trained over ``PaddockActorVectorEnv(squash=True)``
    with ``fcnet_hiddens`` of three layers, ReLU and no pi-head hidden layers (``examples/rllib_vector_ppo.py
    --actor paddockjs``): the actor encoder's three Linear layers and the pi head's (its first two
    outputs: the Gaussian's means, to which the env applies the tanh)."""
    from torch import nn
    encoder = getattr(module.encoder, "actor_encoder", None) or module.encoder.encoder
    return actor_from_linear_layers([m for part in (encoder, module.pi) for m in part.modules()
                                     if isinstance(m, nn.Linear)])


def rllib_module_path(path: Path) -> Path:
    """The default policy's RLModule directory inside an RLlib checkpoint (an ``Algorithm.save_to_path``
    directory), or ``path`` itself if it is one."""
    for candidate in (path / "learner_group" / "learner" / "rl_module" / "default_policy",
                      path / "rl_module" / "default_policy", path):
        if (candidate / "module_state.pt").exists() or (candidate / "module_state.pkl").exists() \
                or any(candidate.glob("module_state*")):
            return candidate
    raise PaddockError(INVALID_CONFIG, f"checkpoint: {path} is a directory but not an RLlib checkpoint "
                       "(no learner_group/learner/rl_module/default_policy)", "checkpoint")


def actor_document(actor, obs_dim: int | None = None, metadata: dict | None = None) -> dict:
    """The ``paddockjs-distilled-actor-v1`` document of a torch actor: its four ``nn.Linear`` layers in
    module order (weights float64 lists, [out][in], as checkpointPolicy.js reads them)."""
    from torch import nn
    linears = [m for m in actor.modules() if isinstance(m, nn.Linear)]
    if len(linears) != NUM_LAYERS:
        raise PaddockError(INVALID_CONFIG, f"actor: has {len(linears)} nn.Linear layers; the format stores "
                           f"exactly {NUM_LAYERS} (build it with make_torch_actor)", "actor")
    obs_dim = int(obs_dim if obs_dim is not None else linears[0].in_features)
    doc = {"format": FORMAT, "obsDim": obs_dim,
           "layers": [{"weight": l.weight.detach().double().cpu().tolist(),
                       "bias": l.bias.detach().double().cpu().tolist()} for l in linears]}
    if metadata:
        doc["metadata"] = metadata
    return validate_actor(doc)


def export_actor(actor, path, obs_dim: int | None = None, metadata: dict | None = None) -> dict:
    """Write ``actor`` (torch) as a ``paddockjs-distilled-actor-v1`` JSON file at ``path``; -> the document.
    Numbers are written with Python's shortest round-trip repr, so a float32 weight reads back exactly."""
    doc = actor_document(actor, obs_dim, metadata)
    Path(path).write_text(json.dumps(doc, allow_nan=False))
    return doc


TORCH_CHECKPOINT_KEY = "paddockjs_actor"     # the examples' torch checkpoint: {key: {obs_dim, hidden, state_dict}}


def save_torch_actor(actor, path, metadata: dict | None = None) -> None:
    """Save a ``make_torch_actor`` network as the examples' torch checkpoint (``load_actor_file`` reads it)."""
    import torch
    widths = tuple(int(l.out_features) for l in actor.layers[:-1])
    torch.save({TORCH_CHECKPOINT_KEY: {"obs_dim": int(actor.obs_dim), "hidden": widths,
                                       "state_dict": actor.state_dict(), "metadata": metadata or {}}}, path)


def load_actor_file(path) -> dict:
    """The actor document of ``path``: a ``paddockjs-distilled-actor-v1`` JSON file, a torch checkpoint
    the examples wrote with ``save_torch_actor`` (``--actor paddockjs --save FILE.pt``), or an RLlib
    checkpoint directory of ``examples/rllib_vector_ppo.py --actor paddockjs --checkpoint-dir DIR``."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        return load_actor(path)
    if path.is_dir():
        from ray.rllib.core.rl_module.rl_module import RLModule
        module = RLModule.from_checkpoint(str(rllib_module_path(path).resolve()))
        return actor_document(actor_from_rllib_module(module), metadata={"rllib_checkpoint": str(path)})
    import torch
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 (torch raises many kinds for an unreadable file)
        raise PaddockError(INVALID_CONFIG, f"checkpoint: cannot read {path} as a torch checkpoint: {exc}",
                           "checkpoint") from None
    entry = blob.get(TORCH_CHECKPOINT_KEY) if isinstance(blob, dict) else None
    if entry is None:
        raise PaddockError(INVALID_CONFIG, f"checkpoint: {path} holds no {TORCH_CHECKPOINT_KEY!r} entry; train "
                           "with an example's PaddockJS-actor option (--actor paddockjs) and --save", "checkpoint")
    actor = make_torch_actor(entry["obs_dim"], tuple(entry["hidden"]))
    actor.load_state_dict(entry["state_dict"])
    return actor_document(actor, metadata=entry.get("metadata") or None)


def export_checkpoint(checkpoint, out) -> dict:
    """``paddock-ma export-paddockjs``: write ``checkpoint`` (an example's torch checkpoint, an RLlib
    checkpoint directory, or an actor JSON, checked again) as a ``paddockjs-distilled-actor-v1`` JSON file
    at ``out`` for PaddockJS's Policy Runner; -> the document. Raises PaddockError for a checkpoint it
    cannot read."""
    doc = load_actor_file(checkpoint)
    Path(out).write_text(json.dumps(doc, allow_nan=False))
    return doc
