"""Read-only views of a running environment: the state snapshot (``state_view``), events
(``events``) and pictures (``render``).
"""
