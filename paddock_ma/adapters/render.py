"""Kept for existing imports: the renderer is ``paddock_ma.env.render`` (a view of the contract's state,
like the state and observation views), so that the adapters use the contract layer only."""

from ..env.render import render_world  # noqa: F401

__all__ = ["render_world"]
