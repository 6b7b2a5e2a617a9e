"""Tools that run an environment: the controller loop (``controller``), the recorder (``recorder``)
and policy evaluation (``evaluation``); and a race of built-in drivers on the core (``race``).
"""
