# The README's two commands: `make demo` and `make test`. Everything installs into .venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test test-fast demo bench clean

# After the packages: compile the simulation's numba kernels into the cache every later run loads
# (`paddock-ma warm`: a few minutes the first time; ~0.5 s while the sources are unchanged),
# so a first `make demo` or README snippet starts in seconds instead of compiling for minutes.
install: $(STAMP)
	$(VENV)/bin/paddock-ma warm

# torch first: 2.13.0 is a local CPU build on this machine class (any other torch is a multi-GB CUDA
# download); then the project with every extra, editable so tests run against the checkout.
# Debian's chromium: the viewer's tests drive it headless (playwright with executable_path=/usr/bin/chromium).
$(STAMP): pyproject.toml
	command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[rllib,dev]"
	touch $(STAMP)

# Two workers (pytest-xdist): the tests that start Ray run one after another on one of them (the `ray`
# group, tests/conftest.py) while the rest share both.
test: install
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist loadgroup

test-fast: install
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist loadgroup -m "not slow"

demo: install
	$(VENV)/bin/paddock-ma demo

# The default benchmarks (core, then env); `paddock-ma bench --help` lists the others (threads, protocol,
# sampling, fleet) and BENCHMARKS.md keeps the figures with their commands.
bench: install
	$(VENV)/bin/paddock-ma bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	find . -name __pycache__ -prune -exec rm -rf {} +
