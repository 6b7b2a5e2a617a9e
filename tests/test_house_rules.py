"""The house rules of ``docs/architecture.md`` ("Conventions"), checked over the sources so that a
change breaking one fails here, naming the place: one import path per name (no re-exports, no unused
imports, room ``__init__`` files included), no reach into another module's underscore names (tests included),
no test module importing another, folders and modules within their size limits, and every module on
the architecture page's map. The import rules between rooms are ``tests/test_layers.py``."""

from __future__ import annotations

import ast
import re

from tests.helpers.source_scan import REPO, modules, top_level_names, used_names

MAX_MODULE_LINES = 450
MAX_FOLDER_MODULES = 12


def _package_modules():
    return {n: m for n, m in modules().items() if n.startswith("paddock_ma")}


def test_a_name_is_imported_from_the_module_that_defines_it():
    """``from X import n`` where X only imported ``n`` itself is a re-export: import it from where it is
    defined. Over the package and the tests."""
    scanned = modules()
    names = {n: top_level_names(m) for n, m in scanned.items()}
    offenders = []
    for name, mod in scanned.items():
        for target, imported, line in mod.from_imports:
            defined, reimported = names[target]
            if imported in reimported and imported not in defined:
                offenders.append(f"{mod.path.relative_to(REPO)}:{line} takes {imported!r} from {target}")
    assert offenders == []


def test_no_module_imports_a_name_it_does_not_use():
    """An import that the module never reads is either dead or a re-export in disguise; a room's
    ``__init__.py`` included (it may run code, as ``sim``'s numba cache policy, but exposes nothing)."""
    offenders = []
    for name, mod in _package_modules().items():
        _defined, imported = top_level_names(mod)
        unused = sorted(imported - used_names(mod))
        offenders += [f"{mod.path.relative_to(REPO)}: {n}" for n in unused]
    assert offenders == []


def test_no_module_reads_another_modules_underscore_names():
    """``from X import _n`` or ``X._n`` for a module X of the package or the tests, other than the
    module itself (dunder names are Python's, not private)."""
    scanned = modules()
    offenders = []
    private = re.compile(r"^_(?!_)")
    for name, mod in scanned.items():
        for target, imported, line in mod.from_imports:
            if private.match(imported) and target != name:
                offenders.append(f"{mod.path.relative_to(REPO)}:{line} imports {imported} from {target}")
        aliases = _module_aliases(mod, scanned)
        for node in ast.walk(mod.tree):
            if (isinstance(node, ast.Attribute) and private.match(node.attr) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases):
                offenders.append(f"{mod.path.relative_to(REPO)}:{node.lineno} reads {aliases[node.value.id]}.{node.attr}")
    assert offenders == []


def _module_aliases(mod, scanned) -> dict:
    """{local name: module} for the scanned modules ``mod`` binds to a name (``import a.b as x``,
    ``from a import b`` where b is a module)."""
    out = {}
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in scanned and a.asname:
                    out[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom):
            from tests.helpers.source_scan import resolve_from
            target = resolve_from(mod, node)
            for a in node.names:
                if f"{target}.{a.name}" in scanned:
                    out[a.asname or a.name] = f"{target}.{a.name}"
    return out


def test_no_test_module_imports_another():
    """Shared test code lives in ``tests/helpers`` (or a conftest), never in another ``test_*`` module."""
    offenders = [f"{m.path.relative_to(REPO)} -> {t}" for n, m in modules().items() if n.startswith("tests")
                 for t in sorted(m.imports) if t.split(".")[-1].startswith("test_") and t != n]
    assert offenders == []


def test_modules_and_folders_stay_within_their_size_limits():
    mods = _package_modules().values()
    long = sorted(f"{m.path.relative_to(REPO)} ({m.lines} lines)" for m in mods if m.lines > MAX_MODULE_LINES)
    folders = {}
    for m in mods:
        if not m.is_pkg:
            folders.setdefault(m.path.parent.relative_to(REPO), []).append(m.path.name)
    crowded = sorted(f"{d} ({len(f)} modules)" for d, f in folders.items() if len(f) > MAX_FOLDER_MODULES)
    assert (long, crowded) == ([], [])


def _map_entries() -> set:
    """The modules the architecture page lists: each table row's first cell, a path relative to the room
    of the section it stands in (the section heading names the room as `paddock_ma/<room>`), and every
    backquoted `paddock_ma/...py` path in the text."""
    text = (REPO / "docs" / "architecture.md").read_text()
    entries, room = set(), None
    for line in text.splitlines():
        heading = re.match(r"^#+ .*`(paddock_ma(?:/[\w/]+)?)`", line)
        if heading:
            room = heading.group(1)
        elif line.startswith("## "):
            room = None
        cell = re.match(r"^\| `([\w/]+\.py)` \|", line)
        if cell and room:
            entries.add(f"{room}/{cell.group(1)}")
        entries.update(re.findall(r"`(paddock_ma/[\w/]+\.py)`", line))
    return entries


def test_every_module_is_on_the_architecture_map():
    listed = _map_entries()
    on_disk = {str(m.path.relative_to(REPO)) for m in _package_modules().values()}
    missing = sorted(p for p in on_disk if p not in listed and not p.endswith("__init__.py"))
    stale = sorted(p for p in listed if p not in on_disk)
    assert (missing, stale) == ([], [])


def test_what_the_code_cites_is_in_the_repository():
    """A doc the sources name (``docs/x.md``, ``BENCHMARKS.md``) exists in the repository; nothing cites
    a design file a clone does not have."""
    cited, offenders = set(), []
    for mod in _package_modules().values():
        text = mod.path.read_text()
        if re.search(r"\bDESIGN(\.md| section)", text):
            offenders.append(f"{mod.path.relative_to(REPO)} cites DESIGN")
        cited.update(re.findall(r"\b(docs/[\w\-/]+\.md|BENCHMARKS\.md|README\.md)\b", text))
    offenders += [f"{c} is cited but missing" for c in sorted(cited) if not (REPO / c).is_file()]
    assert offenders == []
