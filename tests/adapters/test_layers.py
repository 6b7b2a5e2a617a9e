"""Layers only look down and the package has no import cycle: an AST scan of every import statement of
``paddock_ma`` (lazy ones inside functions included, since they run too).

Layers, lowest first; a module may import modules of its own layer or lower ones only:

0. ``sim`` (the numba simulation core)
1. ``env`` (the contract) and ``paddockjs`` (PaddockJS's naming rules, which the config reads)
2. ``catalog`` (env ids) and ``rollout`` (controller loop, recorder, evaluation)
3. ``adapters``, ``protocol``, ``distributed``, ``serve`` (siblings may use each other, without a cycle)
4. the tools at the top: ``bench*``, ``cli``, ``warm``, and the command entry points that live in a
   room's folder (``TOOLS``: the distributed demo, ``collect``'s command, the fleet benchmark)

``sources`` (the source digest), ``errors`` (the closed set of error codes) and ``value_rules`` (integers,
finite numbers, seconds, choices, placement policies) import nothing of the package above them and sit
below everything, and the root
package (``paddock_ma.__version__``, its lazy top-level names) may be imported from anywhere. Above the
contract nothing reads sim arrays: layers 2 and 3 use ``env``'s public API, never ``paddock_ma.sim``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import paddock_ma

PACKAGE = Path(paddock_ma.__file__).resolve().parent
BASE = ("sources", "errors", "value_rules")
LAYERS = {"sim": 0, "env": 1, "paddockjs": 1, "catalog": 2, "rollout": 2, "adapters": 3, "protocol": 3,
          "distributed": 3, "serve": 3, "bench": 4, "cli": 4, "warm": 4}
# Jobs that drive the bare core on purpose, below the contract: the demo draws the core's trajectories, and
# `paddock-ma race` races the built-in drivers without any controlled car (rollout.race).
TOOLS = ("paddock_ma.distributed.demo", "paddock_ma.rollout.race")
CONTRACT_USERS = ("catalog", "rollout", "adapters", "protocol", "distributed", "serve")   # no sim imports


def _modules() -> dict:
    """{dotted module name: (path, is a package's __init__)} of every module of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _imports(name: str, path: Path, is_pkg: bool, modules: dict) -> set:
    """The package's modules ``name`` imports anywhere in its file (``from x import sub`` counts ``x.sub``
    when ``sub`` is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                here = name.split(".") if is_pkg else name.split(".")[:-1]
                here = here[:len(here) - node.level + 1]
                target = ".".join(here + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
    return {m for m in found if m in modules and m != name}


def _graph() -> dict:
    modules = _modules()
    return {name: _imports(name, path, is_pkg, modules) for name, (path, is_pkg) in modules.items()}


def _room(module: str) -> str | None:
    """The top-level room of ``paddock_ma.<room>...`` (``bench_protocol`` is in ``bench``); None for the root."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    room = parts[1]
    return "bench" if room.startswith("bench") else room


def _layer(module: str) -> int:
    if module in TOOLS:
        return LAYERS["cli"]
    room = _room(module)
    if room in BASE:
        return -1
    assert room in LAYERS, f"{module}: room {room!r} has no layer; add it to LAYERS in {__file__}"
    return LAYERS[room]


def _cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
    graph = _graph()
    assert "paddock_ma.sim.step" in graph["paddock_ma.env.batch_env"]                  # at the top of the file
    assert "paddock_ma.protocol.messages" in graph["paddock_ma.distributed.shard"]     # inside a method
    assert "paddock_ma.env.batch_env" in graph["paddock_ma.catalog"]                   # inside a function
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_package_has_no_import_cycle():
    assert _cycles(_graph()) == []


def test_no_layer_imports_a_higher_one():
    upward = sorted(f"{m} -> {t}" for m, targets in _graph().items() for t in targets
                    if _room(m) is not None and _room(t) is not None and _layer(t) > _layer(m))
    assert upward == []


def test_above_the_contract_nothing_imports_the_simulation_core():
    offenders = sorted(f"{m} -> {t}" for m, targets in _graph().items() for t in targets
                       if _room(m) in CONTRACT_USERS and m not in TOOLS and _room(t) == "sim")
    assert offenders == []
