"""Tools that run an environment: the controller loop (``controller``), the recorder (``recorder``)
and policy evaluation (``evaluation``).
"""
