"""paddock_ma: multi-agent reinforcement learning on a deterministic numba racing simulator.

Layers (docs/design.md section 1; every module on docs/architecture.md's map): ``paddock_ma.sim``
(numba kernels over structure-of-arrays state), ``paddock_ma.env`` (the PaddockJS 2.0.1 environment
contract), ``paddock_ma.adapters`` (PettingZoo, RLlib, gymnasium vector envs), ``paddock_ma.protocol``
(the JSON worker protocol), ``paddock_ma.distributed`` (Ray shards) and ``paddock_ma.serve`` (servers).

The top-level names import lazily so ``import paddock_ma`` stays cheap (no numba compile).
"""

__version__ = "0.1.0"

_EXPORTS = {
    "PaddockEnv": ("paddock_ma.env.environment", "PaddockEnv"),
    "BatchEnv": ("paddock_ma.env.batch_env", "BatchEnv"),
    "EnvConfig": ("paddock_ma.env.config.root", "EnvConfig"),
    "PaddockError": ("paddock_ma.errors", "PaddockError"),
    "make": ("paddock_ma.catalog", "make"),
    "list_envs": ("paddock_ma.catalog", "list_envs"),
    "parallel_env": ("paddock_ma.adapters.pettingzoo_env", "parallel_env"),
    "CarVectorEnv": ("paddock_ma.adapters.vector_env", "CarVectorEnv"),
    "make_vec": ("paddock_ma.distributed.vector", "make_vector_env"),
}
__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        module, attr = _EXPORTS[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'paddock_ma' has no attribute {name!r}")


def _register_with_gymnasium():
    """``gymnasium.make_vec("paddock/<name>-v<N>", num_envs=N)`` (``num_shards=S``: over a Ray fleet) for every
    catalogued env (the catalogue is JSON; nothing heavy is imported until an env is made)."""
    try:
        import gymnasium
    except ImportError:      # pragma: no cover - gymnasium is a dependency
        return
    from .catalog import list_envs
    for env in list_envs():
        if env["id"] not in gymnasium.registry:
            gymnasium.register(id=env["id"], vector_entry_point="paddock_ma.distributed.vector:make_vector_env",
                               kwargs={"env_id": env["id"]})


_register_with_gymnasium()
