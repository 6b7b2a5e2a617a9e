"""The car: dynamics per physics mode (``dynamics``: arcade and the dispatch; ``simulator``), tyres
(``tyres``), the surface table (``surface_table``) and which surface each wheel is on (``wheels``).
"""
