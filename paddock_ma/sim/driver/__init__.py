"""The built-in driver of cars no policy controls (``builtin``) and the traffic it sees (``traffic``).
"""
