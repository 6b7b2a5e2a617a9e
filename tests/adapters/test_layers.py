"""The adapters use the contract layer (paddock_ma.env) only, never the simulation core directly."""

import re
from pathlib import Path

import paddock_ma.adapters as adapters


def test_adapters_import_the_contract_not_the_sim():
    here = Path(adapters.__file__).resolve().parent
    offenders = {p.name: m for p in sorted(here.glob("*.py"))
                 for m in re.findall(r"^\s*(?:from|import)\s+(\.\.sim\b[\w.]*|paddock_ma\.sim\b[\w.]*)",
                                     p.read_text(), re.M)}
    assert offenders == {}
