"""Tests of the command line (``paddock_ma.cli``)."""
