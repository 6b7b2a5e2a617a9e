"""Kept for existing imports: the renderer is ``paddock_ma.env.views.render`` (a view of the contract's state,
like the state and observation views), so that the adapters use the contract layer only."""

from ..env.views.render import render_world  # noqa: F401

__all__ = ["render_world"]
