"""The numba simulation core: pure @njit kernels over structure-of-arrays state, no Python objects."""
