"""paddock_ma: multi-agent reinforcement learning on a deterministic numba racing simulator.

Layers (see DESIGN.md): ``paddock_ma.sim`` (numba kernels over structure-of-arrays state),
``paddock_ma.env`` (the PaddockJS 2.0.1 environment contract), ``paddock_ma.adapters`` (PettingZoo and
RLlib), ``paddock_ma.protocol`` (the JSON worker protocol) and ``paddock_ma.distributed`` (Ray shards).
"""

__version__ = "0.1.0"
