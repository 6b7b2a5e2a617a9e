"""The environment catalogue: versioned environment ids defined as data in ``envs/manifests/*.json``.

A manifest is ``{"id": "paddock/<name>-v<N>", "description", "version_history", "config"}``; ``config``
is an ``EnvConfig`` dict. ``make(env_id, **overrides)`` builds a PaddockEnv (or, with ``num_worlds``, a
BatchEnv) from it, with ``overrides`` deep-merged over the manifest's config.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING
from pathlib import Path

from .errors import ConfigError, suggest

if TYPE_CHECKING:
    from .env.config.root import EnvConfig

MANIFEST_DIR = Path(__file__).resolve().parent.parent / "envs" / "manifests"


@lru_cache(maxsize=None)
def _manifests() -> dict:
    out = {}
    for path in sorted(MANIFEST_DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        for key in ("id", "description", "config"):
            if key not in doc:
                raise ConfigError(f"{path.name}.{key}", "missing in the environment manifest")
        out[doc["id"]] = doc
    return out


def list_envs() -> list[dict]:
    """``[{id, description}]`` of every catalogued environment, sorted by id."""
    return [{"id": i, "description": m["description"]} for i, m in sorted(_manifests().items())]


def manifest_config(env_id: str) -> dict:
    """The config dict of ``env_id``'s manifest, as written (ConfigError naming the known ids if unknown)."""
    manifests = _manifests()
    if env_id not in manifests:
        raise ConfigError("env_id", f"unknown environment {env_id!r}{suggest(env_id, manifests)}; "
                          f"known: {', '.join(sorted(manifests))} (`paddock-ma envs` lists them)")
    return manifests[env_id]["config"]


def env_config(env_id: str, **overrides) -> "EnvConfig":
    """The EnvConfig of ``env_id`` with ``overrides`` (config keys) deep-merged over it."""
    return resolve_config(env_id, overrides)


def resolve_config(source, overrides: dict | None = None) -> "EnvConfig":
    """The EnvConfig of ``source`` (a catalogue id, an EnvConfig, a config dict, or None for the defaults)
    with ``overrides`` (config keys) deep-merged over it: the one way every entry point (``make``, the
    adapters, the vector envs, the fleet) turns what a caller names into a config. ConfigError names the
    unknown id or the bad key."""
    from .env.config.root import EnvConfig  # here, not at import: `import paddock_ma` reads only the ids

    if isinstance(source, str):
        return EnvConfig.from_dict(manifest_config(source)).merged(overrides)
    if isinstance(source, EnvConfig):
        return source.merged(overrides)
    if isinstance(source, dict) or source is None:
        return EnvConfig.from_dict(source).merged(overrides)
    raise ConfigError("config", f"got {type(source).__name__}; expected an env id, an EnvConfig or a config dict")


def resolve_config_dict(source, overrides: dict | None = None) -> dict:
    """``resolve_config``'s config as the plain dict it was written as (a catalogue id's manifest config or
    the given dict, ``overrides`` deep-merged over it), after checking it is a valid config: what a fleet
    ships to its shards and a dataset's manifest records and hashes. ``source``: an id or a dict."""
    from .env.config.base import deep_merge
    from .env.config.root import EnvConfig

    if isinstance(source, str):
        base = manifest_config(source)
    elif isinstance(source, dict):
        base = source
    else:
        raise ConfigError("config", f"got {type(source).__name__}; expected an env id or a config dict")
    config = deep_merge(base, dict(overrides or {}))
    EnvConfig.from_dict(config)
    return config


# Engine options make() takes beside config keys: every one goes to a BatchEnv (num_worlds given); a
# PaddockEnv (no num_worlds) takes those of ENGINE_OPTIONS_OF_ONE_WORLD and refuses the others by name.
ENGINE_OPTIONS = ("auto_reset", "reset_placement", "parallel", "reward_fn")
ENGINE_OPTIONS_OF_ONE_WORLD = ("parallel", "reward_fn")


def make(env_id: str, num_worlds: int | None = None, **overrides):
    """A PaddockEnv for ``env_id`` (or a BatchEnv of ``num_worlds`` worlds), config keys overridable.

    Besides config keys: ``parallel`` and ``reward_fn`` (a vectorised reward, see ``env.rewards``) go to
    either engine; ``auto_reset`` and ``reset_placement`` (the engine's auto-reset of ended cars) need
    ``num_worlds``: a PaddockEnv reports every ending and re-places cars only through ``reset_drivers``,
    so they raise ConfigError naming the option without it.
    """
    from .env.batch_env import BatchEnv
    from .env.environment import PaddockEnv

    engine = {k: overrides.pop(k) for k in ENGINE_OPTIONS if k in overrides}
    if num_worlds is None:
        refused = [k for k in engine if k not in ENGINE_OPTIONS_OF_ONE_WORLD]
        if refused:
            raise ConfigError(refused[0], "an option of the batched engine's auto-reset: give num_worlds "
                              f"(make({env_id!r}, num_worlds=1, {refused[0]}=...)) for a BatchEnv; a PaddockEnv "
                              "reports each ending and re-places cars through reset_drivers()")
    config = env_config(env_id, **overrides)
    if num_worlds is None:
        return PaddockEnv(config, **engine)
    return BatchEnv(config, num_worlds, **engine)
