"""Layers only look down and the package has no import cycle: an AST scan of every import statement of
``paddock_ma`` (lazy ones inside functions included, since they run too; ``tests/helpers/source_scan.py``).

Each room (a top-level module or folder of ``paddock_ma``) may import its own modules and the rooms
``ALLOWED`` names for it, nothing else; ``LEAVES`` (the source digest, the error codes, the value rules)
import nothing of the package above them and every room may use them, and so may it use the root
package (``paddock_ma.__version__``, its lazy top-level names). Above the contract nothing reads sim
arrays: a room above ``env`` uses ``env``'s public API, never ``paddock_ma.sim``, except the jobs in
``TOOLS`` that drive the bare core on purpose. Inside ``sim`` the rooms are layered too (``SIM_ALLOWED``).
"""

from __future__ import annotations

from tests.helpers.source_scan import modules

LEAVES = {"sources": set(), "errors": set(), "value_rules": {"errors"}}
# The rooms each room may import (besides itself, the leaves and the root package), lowest first.
ALLOWED = {
    "sim": set(),
    "env": {"sim", "paddockjs"},                 # paddockjs.naming: the contract's names on the wire
    "paddockjs": {"env"},                        # the checkpoint reads the observation layout (naming: nothing)
    "catalog": {"env"},
    "rollout": {"env", "catalog"},
    "dataset": {"env"},                          # collected datasets on disk: format, writer, verify, replay
    "adapters": {"env", "catalog", "paddockjs", "rollout"},
    "protocol": {"env", "catalog", "paddockjs"},
    "distributed": {"env", "catalog", "dataset", "adapters", "protocol"},
    "serve": {"env", "catalog", "dataset", "paddockjs", "adapters", "protocol", "rollout"},
    "bench": {"sim", "env", "paddockjs", "catalog", "rollout", "dataset", "adapters", "protocol", "distributed",
              "serve"},
    "warm": {"sim", "env", "paddockjs", "catalog", "rollout", "dataset", "adapters", "protocol", "distributed",
             "serve", "bench"},                   # it compiles the kernels by running the benchmarks' workloads
    "cli": {"sim", "env", "paddockjs", "catalog", "rollout", "dataset", "adapters", "protocol", "distributed",
            "serve", "bench", "warm"},
}
# Jobs that drive the bare core on purpose, below the contract: the demo draws the core's trajectories,
# and `paddock-ma race` races the built-in drivers without any controlled car.
TOOLS = {"paddock_ma.distributed.demo": {"sim", "warm"}, "paddock_ma.rollout.race": {"sim"}}
# Inside sim: core is the floor, track builds on core, vehicle on both, the upper three on those three
# (none imports another), and step.py orders them all.
SIM_ALLOWED = {"core": set(), "track": {"core"}, "vehicle": {"core", "track"},
               "race": {"core", "track", "vehicle"}, "driver": {"core", "track", "vehicle"},
               "sensing": {"core", "track", "vehicle"},
               "step": {"core", "track", "vehicle", "race", "driver", "sensing"}}


def package_graph() -> dict:
    """{module: set of package modules it imports} over ``paddock_ma`` only."""
    return {name: {t for t in m.imports if t.startswith("paddock_ma")}
            for name, m in modules().items() if name.startswith("paddock_ma")}


def room(module: str) -> str | None:
    """The room of ``paddock_ma.<room>...``; None for the root package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_scan_sees_module_level_and_lazy_imports():
    graph = package_graph()
    assert "paddock_ma.sim.step" in graph["paddock_ma.env.batch_env"]                  # at the top of the file
    assert "paddock_ma.env.batch_env" in graph["paddock_ma.catalog"]                   # inside a function
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_package_has_no_import_cycle():
    assert cycles(package_graph()) == []


def test_every_room_has_a_rule():
    rooms = {room(m) for m in package_graph()} - {None}
    assert rooms <= set(ALLOWED) | set(LEAVES), f"add a rule for {sorted(rooms - set(ALLOWED) - set(LEAVES))}"


def test_every_room_imports_only_the_rooms_it_may():
    offenders = []
    for m, targets in package_graph().items():
        here = room(m)
        if here is None:
            continue
        if here in LEAVES:
            allowed = LEAVES[here] | {here}
        else:
            allowed = ALLOWED.get(here, set()) | TOOLS.get(m, set()) | {here} | set(LEAVES)
        offenders += [f"{m} -> {t}" for t in sorted(targets) if room(t) is not None and room(t) not in allowed]
    assert offenders == []


def test_the_naming_rule_imports_nothing_of_the_package():
    assert package_graph()["paddock_ma.paddockjs.naming"] == set()


def test_inside_sim_the_rooms_only_look_down():
    offenders = []
    for m, targets in package_graph().items():
        parts = m.split(".")
        if room(m) != "sim" or len(parts) < 3:
            continue
        here = parts[2]
        for t in sorted(targets):
            there = t.split(".")[2] if room(t) == "sim" and len(t.split(".")) > 2 else None
            if there is not None and there != here and there not in SIM_ALLOWED.get(here, set()):
                offenders.append(f"{m} -> {t}")
    assert offenders == []
