"""Settings of the whole test session, before any test module is imported.

numba fixes its thread count when its threads first launch and refuses any later compile if
``NUMBA_NUM_THREADS`` then reads otherwise; Ray shards (and ``ShardCore`` run in process) pin it to 1.
Setting it here, first, keeps it one value for the whole session whatever order the tests run in.
Tests that need several threads start a child process with their own value (tests/env/test_threads.py).
"""

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
