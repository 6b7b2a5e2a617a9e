"""What a collection is (``CollectConfig``: hashed into its manifest, so a resume must match it) and how
one run of it goes (``CollectOptions``: where Ray is, deadlines, the progress line, hooks and the live
preview; none of it changes a byte of the data). Both are checked before any work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ...catalog import resolve_config_dict
from ...dataset.format import CollectError
from ...env.seeding import check_seed
from ...errors import ConfigError
from ...value_rules import check_choice, check_integer, check_placement, is_finite_number, seconds_problem
from ..policies import PolicyError, resolve_policy
from ..shard import ShardCore


@dataclass
class CollectConfig:
    """What defines a dataset (hashed into the manifest; a resume must match it exactly)."""
    env: str
    num_shards: int
    worlds_per_shard: int
    steps: int
    seed: int = 0
    policy: str = "builtin"
    fragment_steps: int = 64
    snapshot_every: int = 16
    env_overrides: dict = field(default_factory=dict)
    reset_placement: str = "random"
    start_placement: str | None = "random"
    file_worlds: int = 64

    @property
    def total_worlds(self) -> int:
        return self.num_shards * self.worlds_per_shard

    def identity(self) -> dict:
        """What the dataset's bytes depend on: every field but how the worlds are spread over shards and
        how often shards snapshot (``layout()``)."""
        doc = {k: getattr(self, k) for k in self.__dataclass_fields__
               if k not in ("num_shards", "worlds_per_shard", "snapshot_every")}
        return dict(doc, total_worlds=self.total_worlds)

    def layout(self) -> dict:
        """How this run spreads the worlds (a resume must use the same)."""
        return {"num_shards": self.num_shards, "worlds_per_shard": self.worlds_per_shard,
                "snapshot_every": self.snapshot_every}

    def validate(self) -> None:
        """CollectError naming the first field that is wrong (the env and the policy are ``env_config``'s
        and ``check_policy``'s)."""
        for name in ("num_shards", "worlds_per_shard", "steps", "fragment_steps", "snapshot_every", "file_worlds"):
            check_integer(getattr(self, name), name, low=1, error=CollectError)
        check_seed(self.seed, error=CollectError)
        if self.steps >= 2**31 or self.num_shards * self.worlds_per_shard >= 2**31:
            raise CollectError(f"steps / num_shards x worlds_per_shard: got {self.steps} / "
                               f"{self.num_shards * self.worlds_per_shard}; each must be below 2**31")
        if self.fragment_steps % self.snapshot_every:
            raise CollectError(f"fragment_steps: got {self.fragment_steps}; it must be a multiple of snapshot_every "
                               f"({self.snapshot_every}) so every fragment ends on a snapshot")
        check_placement(self.reset_placement, "reset_placement", error=CollectError)
        check_placement(self.start_placement, "start_placement", none_ok=True, error=CollectError)

    def env_config(self) -> dict:
        """The EnvConfig dict of ``env`` with ``env_overrides`` merged; CollectError naming an unknown env id
        or a bad key of the merged config."""
        try:
            return resolve_config_dict(self.env, self.env_overrides)
        except ConfigError as exc:
            raise CollectError(f"env: {exc.message.removeprefix('env_id: ')}" if exc.field == "env_id"
                               else f"env_overrides: {exc.message}") from None

    def check_policy(self) -> None:
        """CollectError unless ``policy`` resolves (``policies.resolve_policy``)."""
        try:
            resolve_policy(self.policy)
        except PolicyError as exc:
            raise CollectError(str(exc)) from None

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class CollectOptions:
    """How one run of a collection goes; ``collect(cfg, out, **fields)`` builds one from its keywords.

    address: ``local`` (a private Ray instance), ``auto`` or ``HOST:PORT``; when Ray is already
    initialised in the process it is used as is (``ray_init_kwargs``: more ``ray.init`` keywords).
    deadline_s, start_timeout_s, capacity_wait_s: the fleet's (``fleet_types.FleetOptions``).
    shard_cls: the fleet's shard class (ShardCore or a subclass; tests pass fault doubles).
    progress: show the progress line on ``console`` (a rich Console; also where notes are printed).
    on_step: test hook ``fn(fleet, ShardStep)`` called after each step is handed out (kill a shard,
    remove a node...). on_event: ``fn(event)`` for each of the fleet's events, in this thread.
    preview: an unstarted live preview server (the command line's ``PreviewProcess(host, port)``, or
    anything whose ``start()`` returns a hub, see ``preview_feed``): the run starts it and publishes
    global world ``preview_world`` to it at most ``preview_fps`` frames a second, then stops it.
    writes: who writes the dataset's files: ``auto`` (the shards when every world block lies inside one
    shard, else the driver), ``shards`` (refused, naming a layout that works, when a block spans shards)
    or ``driver`` (every row travels to the driver, which writes it). The files' bytes are the same.
    """
    address: str = "local"
    deadline_s: float = 30.0
    start_timeout_s: float = 300.0
    capacity_wait_s: float = 600.0
    shard_cls: type = ShardCore
    progress: bool = True
    console: object = None
    on_step: Callable | None = None
    on_event: Callable | None = None
    ray_init_kwargs: dict | None = None
    preview: object = None
    preview_world: int = 0
    preview_fps: float = 10.0
    writes: str = "auto"

    def validate(self, total_worlds: int) -> None:
        """CollectError naming the first option that is wrong (a run of ``total_worlds`` worlds)."""
        if self.preview is not None:
            check_integer(self.preview_world, "preview_world", low=0, high=total_worlds, error=CollectError)
            if not is_finite_number(self.preview_fps) or not self.preview_fps > 0:
                raise CollectError(f"preview_fps: got {self.preview_fps!r}; expected frames a second > 0 (e.g. 10)")
        check_choice(self.writes, "writes", ("auto", "shards", "driver"), error=CollectError)
        for name in ("deadline_s", "start_timeout_s", "capacity_wait_s"):
            value = getattr(self, name)
            if seconds_problem(value) is not None:
                raise CollectError(f"{name}: got {value!r}; expected a finite number of seconds > 0 (more than a "
                                   "shard's start-up plus a step)")
