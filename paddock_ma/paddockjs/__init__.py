"""PaddockJS's conventions, in one place: its wire naming rule and exceptions (``naming``).
"""
