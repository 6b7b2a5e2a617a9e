"""No hidden shared state: cached tracks are read-only, the numba cache policy is explicit (importing
the package deletes nothing), caches are keyed by content, not by id()."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import paddock_ma.sim as sim
from paddock_ma.sim.track.load import load_track, oval_track, procedural_track


@pytest.mark.parametrize("get", [oval_track, lambda: load_track("grand-prix"), lambda: procedural_track(3)])
def test_cached_track_arrays_are_read_only(get):
    track = get()
    assert get() is track                          # cached, so shared by every world and env
    arrays = {name: v for name, v in zip(track._fields, track) if isinstance(v, np.ndarray)}
    # every array the kernels read: centreline, cell grids, pit path and boxes, the AI's preview
    assert {"cx", "cy", "cs", "grid_seg", "grid_surf", "grid_edge", "px", "py", "box_x", "ai_preview"} <= arrays.keys()
    for name, a in arrays.items():
        assert not a.flags.writeable, name
    with pytest.raises(ValueError):
        track.cx[0] = 1.0
    with pytest.raises(ValueError):
        track.grid_surf[0, 0] = 0


def test_the_numba_cache_directory_is_keyed_by_the_sources_and_import_deletes_nothing(tmp_path):
    here = Path(sim.__file__).resolve().parent
    current = sim.numba_cache_dir()
    if current is None:                           # NUMBA_CACHE_DIR was given before the import: numba's rules
        return
    assert current.parent == here / "__pycache__" and current.name.startswith("numba-")
    import numba
    assert Path(numba.config.CACHE_DIR) == current and os.environ["NUMBA_CACHE_DIR"] == str(current)
    # numba re-reads its settings when any NUMBA_* variable changes (its compiler does, at every
    # compile): the directory must survive that
    os.environ["NUMBA_PADDOCK_TEST_MARKER"] = "1"
    try:
        numba.config.reload_config()
        assert Path(numba.config.CACHE_DIR) == current
    finally:
        del os.environ["NUMBA_PADDOCK_TEST_MARKER"]
        numba.config.reload_config()
    # an older cache of other sources survives a fresh import of the package
    decoy = here / "__pycache__" / "numba-0000000000000000-test-decoy"
    decoy.mkdir(parents=True, exist_ok=True)
    try:
        os.utime(decoy, (0, 0))                   # the oldest of all: the first a prune would remove
        subprocess.run([sys.executable, "-c", "import paddock_ma.sim"], check=True,
                       env={k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"})
        assert decoy.is_dir()
    finally:
        if decoy.is_dir():
            decoy.rmdir()


def test_render_background_cache_is_keyed_by_content():
    from paddock_ma.env.views import render
    oval, gp = oval_track(), load_track("grand-prix")
    bg1, _ = render.track_background(oval, 64)
    bg2, _ = render.track_background(gp, 64)
    assert bg1.shape != bg2.shape or not np.array_equal(bg1, bg2)
    assert render.track_background(oval, 64)[0] is bg1     # a hit for the same track
    assert not bg1.flags.writeable
    # a track object rebuilt with another raster (what a reused id() could point to) gets its own
    other = oval._replace(grid_surf=np.full_like(oval.grid_surf, 4))
    assert not np.array_equal(render.track_background(other, 64)[0], bg1)


def test_no_two_sim_modules_define_a_kernel_of_the_same_name():
    """One kernel per rule: a name defined in two modules of the simulation is a twin (two formulas of
    one rule drift apart, and a simulator that promises bit-identical runs cannot afford that)."""
    import re
    from collections import defaultdict

    here = Path(sim.__file__).resolve().parent
    defined = defaultdict(list)
    for path in sorted(here.rglob("*.py")):
        # jitted kernels only (plain Python helpers of the track builders are not kernels)
        for name in re.findall(r"^@(?:kernel|allocating_kernel)\b[^\n]*\n(?:@[^\n]*\n)*def (\w+)\(",
                               path.read_text(), re.M):
            defined[name].append(path.name)
    twins = {n: m for n, m in defined.items() if len(m) > 1}
    assert twins == {}


def test_the_cache_key_covers_every_module_of_every_subpackage(tmp_path):
    """A kernel moved into a subpackage, renamed, or edited there must start a fresh numba cache."""
    root = tmp_path / "pkg"
    (root / "room").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "room" / "b.py").write_text("y = 2\n")
    first = sim.source_digest(root)
    (root / "room" / "b.py").write_text("y = 3\n")            # edited inside a subpackage
    edited = sim.source_digest(root)
    (root / "room" / "b.py").rename(root / "room" / "c.py")    # moved to another name
    moved = sim.source_digest(root)
    (root / "room" / "__pycache__").mkdir()
    (root / "room" / "__pycache__" / "junk.py").write_text("z = 0\n")   # caches are not sources
    assert len({first, edited, moved}) == 3
    assert sim.source_digest(root) == moved
    assert sim.numba_cache_dir() is None or sim.numba_cache_dir().name == f"numba-{sim.source_digest(Path(sim.__file__).parent)[:16]}"
