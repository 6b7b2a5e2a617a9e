"""``python -m paddock_ma.cli``: the same command line as ``paddock-ma`` (what worker clients spawn)."""

import sys

from .main import main

sys.exit(main())
