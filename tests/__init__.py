"""The test suite: one folder per room of the package (sim, env, protocol, adapters, distributed), shared
helpers in ``tests.helpers``, PaddockJS fixtures in ``tests/fixtures``."""
