"""An AST scan of the repository's Python sources for the house-rule tests (``tests/test_layers.py``,
``tests/test_house_rules.py``): every module of ``paddock_ma`` and ``tests`` by dotted name, the
package modules each imports (lazy imports inside functions included, since they run too), and for
each ``from X import name`` where ``name`` came from."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("paddock_ma", "tests")


@dataclass
class Module:
    """One source file: ``name`` dotted (``paddock_ma.env.batch_env``), ``path``, whether it is a
    package's ``__init__``, its parsed ``tree`` and its number of ``lines``."""
    name: str
    path: Path
    is_pkg: bool
    tree: ast.Module
    lines: int
    imports: set = field(default_factory=set)          # dotted names of the scanned modules it imports
    from_imports: list = field(default_factory=list)   # (target module, imported name, line)


@functools.lru_cache(maxsize=1)
def modules() -> dict:
    """{dotted name: Module} of every ``*.py`` under ``paddock_ma/`` and ``tests/`` (no caches, no
    fixture data)."""
    out = {}
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO)
            if "__pycache__" in rel.parts or "fixtures" in rel.parts:
                continue
            parts = list(rel.with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_pkg else parts)
            text = path.read_text()
            out[name] = Module(name, path, is_pkg, ast.parse(text, str(path)), text.count("\n") + 1)
    for mod in out.values():
        _scan_imports(mod, out)
    return out


def resolve_from(mod: Module, node: ast.ImportFrom) -> str:
    """The dotted module a ``from ... import`` statement of ``mod`` names (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    here = mod.name.split(".") if mod.is_pkg else mod.name.split(".")[:-1]
    here = here[:len(here) - node.level + 1]
    return ".".join(here + ([node.module] if node.module else []))


def _scan_imports(mod: Module, known: dict) -> None:
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            mod.imports.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            target = resolve_from(mod, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:
                    mod.imports.add(sub)
                elif target in known:
                    mod.imports.add(target)
                    mod.from_imports.append((target, alias.name, node.lineno))
    mod.imports.discard(mod.name)


def top_level_names(mod: Module) -> tuple[set, set]:
    """(names ``mod`` defines at its top level, names it imports at its top level)."""
    defined, imported = set(), set()
    for node in mod.tree.body:
        for sub in ([node] if not isinstance(node, (ast.If, ast.Try)) else ast.walk(node)):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(sub.name)
            elif isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                for t in targets:
                    defined.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                for alias in sub.names:
                    if alias.name != "*" and not (isinstance(sub, ast.ImportFrom) and sub.module == "__future__"):
                        imported.add(alias.asname or alias.name.split(".")[0])
    return defined, imported - defined


def used_names(mod: Module) -> set:
    """Every name ``mod`` reads (``Name`` loads, the base of attribute chains, and the strings of
    ``__all__``)."""
    used = {n.id for n in ast.walk(mod.tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    for node in mod.tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            used.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant))
    return used
