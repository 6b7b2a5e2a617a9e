"""The environment's config: the root ``EnvConfig`` (``root``), the section machinery every section
shares (``base``), participants (``participants``) and sensing (``sensing``).
"""
