"""PaddockJS's grid: how its drivers and championship entries resolve (``buildChampionshipDriverGrid``).

Each driver's entry is PaddockJS's demo blueprint for its id (``paddockjs/demo_blueprints.json``: the
demo drivers ``budget``, ``noir``, ... have one) with the config's own entry for it laid over it, key by
key (an entry's ``driver`` or ``vehicle`` replaces the blueprint's whole). From that entry and the driver:

* the timing code (``code``, ``timingCode``, ``raceName``): three letters of the entry's timing name (else
  the driver's timing name, name or code), unique over the grid in driver order (PaddockJS's candidates:
  the first three letters, each later run of three, first-second-last; then the first two and A..Z);
* the number: the entry's, else the driver's ``driverNumber``, else its place in the list (from 1);
* the team: the entry's ``team`` (else none), with PaddockJS's defaults for its id, name, colour and icon;
* the ratings (``EntryConfig.ratings``) and the car's id and name.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from pathlib import Path

from ...paddockjs.naming import from_wire

BLUEPRINTS_FILE = Path(__file__).resolve().parents[2] / "paddockjs" / "demo_blueprints.json"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@functools.lru_cache(maxsize=1)
def demo_blueprints() -> dict:
    """{driver id: entry dict in Python names} of PaddockJS's CHAMPIONSHIP_ENTRY_BLUEPRINTS."""
    doc = json.loads(BLUEPRINTS_FILE.read_text(encoding="utf-8"))
    return {e["driverId"]: from_wire(e) for e in doc["entries"]}


def normalize_letters(value) -> str:
    """PaddockJS's normalizeLetters: the ASCII letters of ``value`` (accents dropped), upper case."""
    text = unicodedata.normalize("NFKD", "" if value is None else str(value))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return "".join(ch for ch in text if ch.isascii() and ch.isalpha()).upper()


def _candidates(source) -> list:
    letters = normalize_letters(source)
    if not letters:
        return ["XXX"]
    if len(letters) <= 3:
        return [letters.ljust(3, "X")]
    out = [letters[:3]] + [letters[i:i + 3] for i in range(1, len(letters) - 2)]
    out.append(letters[0] + letters[1] + letters[-1])
    return list(dict.fromkeys(out))


def unique_timing_code(source, used: set) -> str:
    """PaddockJS's pickUniqueTimingCode: the first free candidate of ``source``, recorded in ``used``."""
    for candidate in _candidates(source):
        if candidate not in used:
            used.add(candidate)
            return candidate
    letters = normalize_letters(source).ljust(2, "X")
    for suffix in LETTERS:
        candidate = letters[0] + letters[1] + suffix
        if candidate not in used:
            used.add(candidate)
            return candidate
    raise ValueError(f"no unique three-letter timing code for {source!r}")


def _team(team, driver, timing_code: str) -> dict | None:
    """PaddockJS's normalizeTeam of an entry's team dict (Python names)."""
    if not team:
        return None
    name = team.get("name") or team.get("id") or f"{driver.name or timing_code} Team"
    team_id = team.get("id") or normalize_letters(name).lower() or f"{driver.id}-team"
    icon = team.get("icon") or normalize_letters(team.get("name") or team.get("id") or timing_code
                                                 or driver.name)[:2].ljust(2, "X")
    return {**team, "id": team_id, "name": name, "color": team.get("color") or driver.color, "icon": icon}


def resolved_entry(config, driver_id: str):
    """The ``EntryConfig`` that applies to ``driver_id`` (blueprint under the config's entry), or None."""
    from .participants import EntryConfig

    blueprint = demo_blueprints().get(driver_id)
    own = next((e for e in config.entries if e.driver_id == driver_id), None)
    if blueprint is None:
        return own
    if own is None:
        return EntryConfig.from_dict(blueprint)
    # the config's entry over the blueprint: its fields that differ from an entry's defaults (an entry
    # giving exactly the neutral ratings keeps the blueprint's: one case where PaddockJS differs)
    default = EntryConfig(driver_id=driver_id).to_dict()
    given = {k: v for k, v in own.to_dict().items() if v != default.get(k)}
    return EntryConfig.from_dict({**blueprint, **given})


def resolved_grid(config) -> tuple:
    """Per driver (config order): {code, driver_number, team, vehicle_id, vehicle_name} as PaddockJS's grid
    resolves them (module docstring)."""
    used: set = set()
    out = []
    for index, driver in enumerate(config.drivers):
        entry = resolved_entry(config, driver.id)
        source = (entry.timing_name if entry and entry.timing_name else None) or driver.timing_name \
            or driver.name or driver.code
        code = unique_timing_code(source, used)
        number = (entry.driver_number if entry and entry.driver_number is not None else None)
        number = number if number is not None else (driver.driver_number if driver.driver_number is not None
                                                    else index + 1)
        team = entry.team.to_dict() if entry is not None and entry.team is not None else None
        out.append({"code": code, "driver_number": number, "team": _team(team, driver, code),
                    "vehicle_id": entry.vehicle.id if entry else None,
                    "vehicle_name": entry.vehicle.name if entry else None})
    return tuple(out)
