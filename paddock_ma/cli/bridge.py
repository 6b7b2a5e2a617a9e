"""``paddock-ma export-paddockjs | export-minari | policy-server | view | record | replay``: the bridge to PaddockJS and the
viewer. Each command's module owns its options (``paddock-ma COMMAND --help``); this module only routes:

* ``export-paddockjs``  a trained actor as PaddockJS's ``paddockjs-distilled-actor-v1`` JSON
  (``paddock_ma.paddockjs.checkpoint``)
* ``export-minari``     a collected dataset as a Minari dataset in Minari's local store
  (``paddock_ma.dataset.minari_export``)
* ``policy-server``     PaddockJS's Policy Runner HTTP contract for a policy trained here
  (``paddock_ma.serve.policy_server``)
* ``view``              the web viewer of a live run, a recording, a trace or a dataset (``paddock_ma.serve.viewer``)
* ``record`` / ``replay`` checksummed traces of a run and their bit-exact re-run (``paddock_ma.serve.trace``)
"""

from __future__ import annotations

import argparse
import importlib

# command -> (module, entry function, one-line help)
COMMANDS = {
    "export-paddockjs": ("paddock_ma.paddockjs.checkpoint", "main",
                         "write a trained actor as PaddockJS's checkpoint JSON (paddockjs-distilled-actor-v1)"),
    "export-minari": ("paddock_ma.dataset.minari_export", "main",
                      "write a collected dataset (a directory or s3:// URI) as a Minari dataset for minari.load_dataset"),
    "policy-server": ("paddock_ma.serve.policy_server", "main",
                      "serve a policy on PaddockJS's Policy Runner HTTP contract (127.0.0.1:8787)"),
    "view": ("paddock_ma.serve.viewer", "main",
             "the web viewer: a live preview stream, a recording, a trace or a dataset"),
    "record": ("paddock_ma.serve.trace", "record_main",
               "record a trace: config, seed, every action, checksummed snapshots"),
    "replay": ("paddock_ma.serve.trace", "replay_main",
               "re-run a trace and stop at the first divergence (step, world, car, field)"),
}


def add_parsers(sub) -> None:
    for name, (_, _, help_text) in COMMANDS.items():
        cmd = sub.add_parser(name, add_help=False, help=f"{help_text} ({name} --help)")
        cmd.add_argument("rest", nargs=argparse.REMAINDER)
        cmd.set_defaults(func=lambda args, name=name: run(name, args.rest))


def run(name: str, argv: list[str]) -> int:
    """Call command ``name``'s own entry point with its arguments; returns its exit code."""
    module, func, _ = COMMANDS[name]
    return getattr(importlib.import_module(module), func)(argv) or 0
