"""Tests of the benchmarks (``paddock_ma.bench``) and of ``paddock-ma bench``."""
