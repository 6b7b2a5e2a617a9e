"""How the simulation's kernels are compiled: ``@kernel`` and ``@allocating_kernel``.

Both are ``numba.njit(cache=True)``. They differ in numba's reference counting (NRT) of arrays:

* ``kernel``: compiled without it (``_nrt=False``). Every array a kernel sees is owned by a caller
  that outlives the call (the state, the track, scratch buffers), so counting references to it is
  pure overhead, and it is not small: with counting on, each call or inlined body that takes arrays
  increments and decrements an atomic counter per array, and in the per-car stages of a tick that
  is over a quarter of the core's time (the step kernel runs at ~1.45M car-ticks/s with it,
  ~2.4M without it; see BENCHMARKS.md). A kernel cannot create arrays (``np.empty``, ``.copy()``,
  ``.min()`` of an array, ...): numba rejects that at compile time.
* ``allocating_kernel``: reference counting on, for the few kernels that create arrays (the entry
  points that allocate per-step scratch, builders of track tables, the Python-facing helpers).
  They pass what they allocate down to ``kernel`` functions. They must not take arrays back from a
  ``kernel`` (e.g. ``pit_view``'s views of the track): the allocating caller would count the returned
  arrays as references it owns and release them, freeing memory it never owned.

Every jitted function of the package states one of the two explicitly: a function without the
setting would inherit it from whichever caller compiled it first (numba's flag inheritance), so its
compiled form would depend on call order.

Importing this module installs ``compile_status``: a status line on stderr while numba compiles a
kernel of the package (nothing when the kernels load from the cache).
"""

from numba import njit

from . import compile_status

compile_status.install()


def _decorate(func, nrt, options):
    opts = {"cache": True, "_nrt": nrt}
    opts.update(options)
    if func is None:
        return njit(**opts)
    return njit(**opts)(func)


def kernel(func=None, **options):
    """``njit(cache=True)`` without reference counting; ``options`` go to ``njit`` (``inline``,
    ``error_model``, ``parallel``)."""
    return _decorate(func, False, options)


def allocating_kernel(func=None, **options):
    """``njit(cache=True)`` with reference counting, for kernels that create arrays."""
    return _decorate(func, True, options)
