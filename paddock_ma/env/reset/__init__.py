"""Putting cars on the track: the start of a BatchEnv's worlds (``start``), placements
(``placements``), scenarios (``scenarios``) and participant interaction profiles (``interactions``).
"""
