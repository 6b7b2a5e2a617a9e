"""RLlib MultiAgentEnv over every world of one BatchEnv, with per-car lives.

``PaddockMultiAgentEnv(env_config)`` packs W worlds into one env so that one numba call steps them all
(RLlib's ``num_envs_per_env_runner`` would instead step W separate env objects one by one in Python).
Agent ids are ``w{world}/{driver}@{life}``; every id is declared in ``possible_agents`` up front (an
undeclared id crashes RLlib's action connector), and ``observation_spaces`` / ``action_spaces`` map
every id to its space. Life semantics are those of ``paddock_ma.adapters.lives``; for RLlib a newborn
life appears with an observation (and an info) only, since an agent whose first step carries a reward
or a done flag is never scheduled to act. ``__all__`` in terminateds/truncateds is True when every
world's episode is over (no car left alive, or ``max_world_steps`` reached), never derived from the
per-agent flags of the step.

``env_config`` keys (all optional): ``env_id`` (catalogue id, default ``paddock/oval-batch-v0``) or
``config`` (an EnvConfig or dict), ``overrides`` (config keys merged over it), ``num_worlds`` (1),
``max_lives`` (8), ``auto_reset`` (True), ``reset_placement`` ("random"), ``max_world_steps`` (None),
``seed`` (None: fresh entropy per reset unless a reset passes one; see "Seeds" below), ``reward``: the one vectorised interface of ``paddock_ma.env.rewards``, a callable
``fn(metrics: float32[W, K, M]) -> float[W, K]``, a ``VectorReward`` or the name of an example reward
(``rewards.EXAMPLE_REWARDS``; default ``legal_progress`` unless the config has a reward; examples,
not canonical rewards); ``infos``: ``"summary"``
(default: an info is empty except ``{"newborn", "life"}`` on a life's first appearance and
``{"life_summary": {legal_progress_meters, steps, crashed, end_reason, retired}}`` on its last step, so
callbacks can compute per-life figures cheaply) or ``"full"`` (driver, life, world step, episode state
and the step's metrics, as the PettingZoo adapter; about 20 us more per agent step).

Endings as they happened: RLlib 2.60's ``MultiAgentEpisode.add_env_step`` declares the episode terminated
whenever every agent it has seen is done after a step ("Case 2"), and then ORs that episode flag into the
``terminated`` of every agent stepping in it. So when every agent ends in the same step (the world step
cap, every life truncating together) each truncated life is recorded ``terminated=True`` and PPO drops its
value bootstrap; likewise ``__all__`` terminated marks a truncated life terminated and ``__all__`` truncated
marks a terminated one truncated. The env cannot avoid it (every agent *is* done), so the env keeps the
flags it returned for the lives that ended in its latest step (``last_endings``) and the
``record_env_endings`` callback writes them back into RLlib's episodes before anything reads them: add it
with ``with_env_endings(config)`` (``config.callbacks(on_episode_step=record_env_endings)``).

Seeds: every env has a key ``(worker_index, vector_index, n)`` from RLlib's ``EnvContext`` (n counts the
envs made from one context: RLlib 2.60's MultiAgentEnvRunner gives its sub-envs one context with
``vector_index`` 0) and resets its worlds with the seeds spawned for that key from one root seed
(``episode_seed``): ``env_config["seed"]``, or the seed last passed to ``reset`` (gymnasium's rule: a
reset seed re-seeds, later resets continue from it). So every runner and every env in it draws distinct,
reproducible seeds. Env (0, 0, 0) resets its first episode with the root seed itself (as ``BatchEnv``
would); an env made from a plain dict has key (0, 0, 0).
"""

from __future__ import annotations

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from ..env.batch_env import BatchEnv
from ..errors import SNAPSHOT_REJECTED, ConfigError, PaddockError
from ..catalog import resolve_config
from ..env.rewards import resolve_reward, reward_or_default
from ..env.seeding import check_seed
from .lives import Lives, check_options, info_for
from .spaces import observation_space, vehicle_action_space

ENV_CONFIG_KEYS = ("env_id", "config", "overrides", "num_worlds", "max_lives", "auto_reset", "reset_placement",
                   "max_world_steps", "seed", "reward", "infos")
ENV_NAME = "paddock_ma"


class PaddockMultiAgentEnv(MultiAgentEnv):
    """W packed worlds of per-car lives as one RLlib MultiAgentEnv (module docstring)."""

    def __init__(self, env_config: dict | None = None):
        super().__init__()
        cfg = dict(env_config or {})
        unknown = [k for k in cfg if k not in ENV_CONFIG_KEYS]
        if unknown:
            raise ConfigError(f"env_config.{unknown[0]}", f"unknown key; known keys: {', '.join(ENV_CONFIG_KEYS)}")
        source = cfg.get("config") if cfg.get("config") is not None else cfg.get("env_id", "paddock/oval-batch-v0")
        config = resolve_config(source, dict(cfg.get("overrides") or {}))
        reward = reward_or_default(cfg.get("reward"), config.reward)
        check_options(cfg.get("max_lives", 8), cfg.get("reset_placement", "random"), cfg.get("max_world_steps"))
        self.engine = BatchEnv(config, int(cfg.get("num_worlds", 1)),
                               reward_fn=resolve_reward(reward, "env_config.reward"),
                               reset_placement=cfg.get("reset_placement", "random"))
        self.lives = Lives(self.engine, "w{w}/{driver}@{life}", max_lives=cfg.get("max_lives", 8),
                           auto_reset=cfg.get("auto_reset", True),
                           reset_placement=cfg.get("reset_placement", "random"),
                           max_world_steps=cfg.get("max_world_steps"))
        if cfg.get("infos", "summary") not in ("summary", "full"):
            raise ConfigError("env_config.infos", f"got {cfg.get('infos')!r}; expected 'summary' or 'full'")
        self._full_infos = cfg.get("infos", "summary") == "full"
        self._seed_key = env_key(env_config)
        self._seed_root = cfg.get("seed")               # the root of this env's seeds (None: fresh entropy)
        if self._seed_root is not None:
            episode_seed(self._seed_root, self._seed_key, 0, "env_config.seed")   # checks it
        self._episodes = 0                              # resets since the root was set
        self.last_endings: dict = {}                    # agent -> (terminated, truncated) of the latest step
        self.possible_agents = list(self.lives.possible_agents)
        self.agents = []
        # One space object per agent id (like the PettingZoo adapter), built once per env instance.
        self.observation_spaces = {a: observation_space(self.lives.obs_sizes[k])
                                   for a, (_, k, _) in self.lives.index.items()}
        self.action_spaces = {a: vehicle_action_space() for a in self.possible_agents}
        self.num_worlds = self.engine.num_worlds

    # -- API --------------------------------------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        if seed is not None:
            episode_seed(seed, self._seed_key, 0, "seed")     # checks it before anything changes
            self._seed_root, self._episodes = seed, 0
        if self._seed_root is not None:
            seed = episode_seed(self._seed_root, self._seed_key, self._episodes)
            self._episodes += 1
        self.last_endings = {}
        return self._start(self.lives.reset(seed))

    def _start(self, result):
        """(observations, infos) of the live agents from ``result`` (a reset's, or the restored worlds')."""
        self.agents = list(self.lives.agents)
        sizes = self.lives.obs_sizes
        obs, infos = {}, {}
        for agent in self.agents:
            w, k, _ = self.lives.index[agent]
            obs[agent] = result.obs[w, k, :sizes[k]]
            info = info_for(self.lives, result, w, k, full=self._full_infos)
            info.pop("metrics", None)
            infos[agent] = info
        return obs, infos

    def step(self, action_dict):
        lives = self.lives
        acts, _, _ = lives.actions_to_arrays(action_dict)
        record = lives.step(acts)
        result, reborn, newborn = record.result, record.reborn, record.newborn
        reward = result.reward
        sizes = lives.obs_sizes
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        stepped = record.ended | (lives.alive & ~newborn)
        w_idx, k_idx = np.nonzero(stepped)
        rew_list = reward[w_idx, k_idx].tolist()
        for w, k, r in zip(w_idx.tolist(), k_idx.tolist(), rew_list):
            agent = record.ended_ids.get((w, k)) or lives.agent_of(w, k)
            obs[agent] = record.final_obs[w, k, :sizes[k]]
            rewards[agent] = r
            terms[agent] = bool(record.terminated[w, k])
            truncs[agent] = bool(record.truncated[w, k])
            infos[agent] = info_for(lives, result, w, k, record=record, full=self._full_infos)
        # RLlib 2.60 declares a multi-agent episode terminated as soon as every agent it has seen is done,
        # before it looks at new ids in the same step: when every live agent ends in one step, newborn
        # lives would be dropped. End the env episode there instead (RLlib then resets the env).
        forced = reborn is not None and not (lives.alive & ~newborn).any()
        if forced:
            lives.end_episode()
        elif reborn is not None:
            for w, k in zip(*(a.tolist() for a in np.nonzero(newborn))):
                agent = lives.agent_of(w, k)
                obs[agent] = result.obs[w, k, :sizes[k]]
                infos[agent] = info_for(lives, reborn, w, k, record=record, newborn=True, full=self._full_infos)
        over = lives.all_over
        capped = lives.max_world_steps is not None and bool((lives.world_steps >= lives.max_world_steps).any())
        any_term = bool(record.terminated.any())
        truncated_end = capped or (forced and not any_term)
        terms["__all__"] = over and not truncated_end
        truncs["__all__"] = over and truncated_end
        endings = {agent: (terms[agent], truncs[agent]) for agent in record.ended_ids.values()}
        endings["__all__"] = (terms["__all__"], truncs["__all__"])
        self.last_endings = endings
        self.agents = list(lives.agents)
        return obs, rewards, terms, truncs, infos

    # -- snapshot ---------------------------------------------------------------------------------
    def snapshot(self) -> dict:
        """A JSON-safe document of every world, the lives bookkeeping and this env's seed stream;
        ``restore`` brings them back bit-exactly. Before the first reset: PaddockError(not_reset)."""
        return {"lives": self.lives.snapshot(), "seed_root": self._seed_root, "episodes": self._episodes}

    def restore(self, doc: dict):
        """Restore ``snapshot()``'s document (into this env or a fresh one of the same env_config) and
        return the live agents' ``(observations, infos)`` as ``reset`` does; the next ``step`` continues
        exactly as the snapshotted env did. A document that does not fit raises
        PaddockError(snapshot_rejected) and changes nothing."""
        if not isinstance(doc, dict) or set(doc) != {"lives", "seed_root", "episodes"}:
            raise PaddockError(SNAPSHOT_REJECTED, "snapshot: expected the document of "
                               "PaddockMultiAgentEnv.snapshot() (lives, seed_root, episodes)", "snapshot")
        self.lives.restore(doc["lives"])
        self._seed_root, self._episodes = doc["seed_root"], int(doc["episodes"])
        self.last_endings = {}
        return self._start(self.engine.current_result())

    def life_totals(self) -> dict:
        """Totals over every life that ended in this env so far: ``lives_ended``, ``lives_crashed``
        (ended at the barrier), ``legal_meters`` and ``steps`` summed over those lives. A trainer
        reads them from its env runners (``examples/rllib_ppo.py``) for exact per-life rates."""
        return dict(self.lives.life_totals)

    def render(self):
        from ..env.views.render import render_world
        return render_world(self.engine, 0)

    def checksums(self) -> np.ndarray:
        return self.engine.checksums()


def register(name: str = ENV_NAME) -> str:
    """Register the env with Tune under ``name`` (``config.environment(name, env_config={...})``)."""
    from ray.tune.registry import register_env
    register_env(name, PaddockMultiAgentEnv)      # the EnvContext itself: its worker and vector index key the seeds
    return name


def env_key(env_config) -> tuple:
    """``(worker_index, vector_index, n)`` of an env made from ``env_config``: RLlib's ``EnvContext``
    indices (0, 0 for a plain dict) and n, the count of envs made from this context object before
    (RLlib 2.60's MultiAgentEnvRunner makes its ``num_envs_per_env_runner`` sub-envs, in order, from one
    context whose vector_index is 0). A runner that rebuilds its envs makes a new context: n restarts."""
    worker = int(getattr(env_config, "worker_index", 0) or 0)
    vector = int(getattr(env_config, "vector_index", 0) or 0)
    made = 0
    if hasattr(env_config, "worker_index"):          # an EnvContext: count the envs made from it
        made = getattr(env_config, "_paddock_envs_made", 0)
        env_config._paddock_envs_made = made + 1
    return worker, vector, made


def episode_seed(root, key: tuple, n: int, field: str = "seed") -> int:
    """The seed of reset ``n`` of the env with ``key`` (``env_key``), spawned from ``root``:
    ``SeedSequence(root)``'s descendant at ``key + (n,)`` (what ``.spawn`` gives at each level), as a
    63-bit integer; the root itself for reset 0 of env (0, 0, 0). A root that is not an integer in
    [0, 2**63) raises ConfigError naming ``field``."""
    root = check_seed(root, field)
    if n == 0 and not any(key):
        return int(root)
    words = np.random.SeedSequence(int(root), spawn_key=tuple(key) + (n,)).generate_state(2, np.uint32)
    return (int(words[0]) << 31) ^ int(words[1])


def record_env_endings(*, episode, env, env_index, **_) -> None:
    """RLlib ``on_episode_step`` callback: the terminated/truncated flags of the lives that ended in the
    step, and the episode's own, become the ones the env returned (module docstring, "Endings"), where
    RLlib 2.60's ``MultiAgentEpisode`` overwrote them. Envs other than PaddockMultiAgentEnv are left alone."""
    endings = getattr(env.envs[env_index].unwrapped, "last_endings", None)
    if not endings:
        return
    agent_episodes = episode.agent_episodes
    for agent, (terminated, truncated) in endings.items():
        sa = agent_episodes.get(agent)
        if sa is not None:
            sa.is_terminated, sa.is_truncated = terminated, truncated
    terminated, truncated = endings["__all__"]
    if terminated or truncated:
        episode.is_terminated, episode.is_truncated = terminated, truncated


def with_env_endings(config):
    """``config`` (an AlgorithmConfig) with ``record_env_endings`` added to its ``on_episode_step``
    callbacks (those set before are kept)."""
    fns = config.callbacks_on_episode_step
    fns = [] if fns is None else list(fns) if isinstance(fns, (list, tuple)) else [fns]
    if record_env_endings not in fns:
        fns.append(record_env_endings)
    return config.callbacks(on_episode_step=fns)
