#!/usr/bin/env python3
"""The NDJSON stdio worker: ``python workers/stdio_worker.py --env paddock/gp-v0`` (same as ``paddock-ma serve``).

Options: ``--env ENV_ID`` or ``--config FILE``, ``--worlds W``, ``--max-line-bytes N``. One JSON request
per stdin line, one reply line per request on stdout; logs on stderr; exits 0 when stdin closes.
"""

import sys
from pathlib import Path

try:
    from paddock_ma.cli.main import main
except ImportError:                      # run from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from paddock_ma.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
