"""The kernel cache (rodsim.kernel_cache) and compile-time switches (rodsim.jit)."""

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest
from conftest import spaghetti

from rodsim import kernel_cache
from rodsim.jit import kernel
from rodsim.model.supports import Support, pack_supports


def test_cache_dir_precedence(tmp_path):
    env = {"HOME": "/home/u"}
    assert kernel_cache.cache_dir(env) == Path("/home/u/.cache/rodsim")
    env["XDG_CACHE_HOME"] = "/xdg"
    assert kernel_cache.cache_dir(env) == Path("/xdg/rodsim")
    env["NUMBA_CACHE_DIR"] = "/numba"
    assert kernel_cache.cache_dir(env) == Path("/numba")
    env["RODSIM_CACHE_DIR"] = str(tmp_path)
    assert kernel_cache.cache_dir(env) == tmp_path


def _saver(args):
    folder, worker, n = args
    index = kernel_cache.LockedCacheFile(folder, "k.f-1.py311", ("stamp", 1))
    for i in range(n):
        index.save((worker, i), f"data {worker} {i}".encode() * 50)


def test_locked_index_keeps_every_entry_of_concurrent_writers(tmp_path):
    """Four processes save 40 entries each into one index at once. numba's own index is a
    read-modify-write: without the lock entries are lost and data files are shared by
    different keys (entry numbers collide); with it, every key loads its own data."""
    from multiprocessing import get_context

    n = 40
    with get_context("spawn").Pool(4) as pool:
        pool.map(_saver, [(str(tmp_path), w, n) for w in range(4)])
    index = kernel_cache.LockedCacheFile(str(tmp_path), "k.f-1.py311", ("stamp", 1))
    for w in range(4):
        for i in range(n):
            assert index.load((w, i)) == f"data {w} {i}".encode() * 50


MODULE = """
from rodsim.jit import either, kernel

@kernel
def off(x):
    return x + 1.0

@kernel
def on(x):
    return x * 10.0

choose = either(off, on)

@kernel
def top(flag, x):
    return choose(flag, x)

@kernel
def optional(term, x):
    if term is None:
        return x
    return on(x) + term
"""

SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import mod
which = sys.argv[2]
if which == "off":
    print(mod.top(None, 1.0), mod.optional(None, 1.0))
else:
    print(mod.top(True, 1.0), mod.optional(2.0, 1.0))
print(len(mod.off.signatures), len(mod.on.signatures))
print(sum(mod.top.stats.cache_hits.values()))
"""


def _python(tmp, cache, *args):
    env = {**os.environ, "RODSIM_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split("\n")


def test_switches_compile_only_the_branch_taken(tmp_path):
    """either(off, on) with a None switch types off and never on (and the reverse); a kernel
    branch on `term is None` is removed before typing. The choice survives the cache."""
    (tmp_path / "mod.py").write_text(textwrap.dedent(MODULE))
    cache = tmp_path / "cache"
    values, counts, hits = _python(tmp_path, cache, "off")[:3]
    assert values == "2.0 1.0"
    assert counts == "1 0"  # `on` was never compiled
    assert hits == "0"
    values, counts, hits = _python(tmp_path, cache, "on")[:3]
    assert values == "10.0 12.0"
    assert counts == "0 1"
    values, counts, hits = _python(tmp_path, cache, "off")[:3]
    assert (values, counts, hits) == ("2.0 1.0", "0 0", "1")  # loaded: nothing compiled


def test_concurrent_compiles_into_one_cache(tmp_path):
    """Processes compiling the same kernels into one empty cache at once all get the right
    answers, and a later process loads them."""
    (tmp_path / "mod.py").write_text(textwrap.dedent(MODULE))
    cache = tmp_path / "cache"
    env = {**os.environ, "RODSIM_CACHE_DIR": str(cache)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(tmp_path), which],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for which in ("off", "on", "off", "on")
    ]
    outs = [p.communicate()[0].split("\n")[0] for p in procs]
    assert outs == ["2.0 1.0", "10.0 12.0", "2.0 1.0", "10.0 12.0"]
    assert _python(tmp_path, cache, "on")[:3] == ["10.0 12.0", "0 0", "1"]


@kernel
def _absent(terms):
    return terms.rods is None, terms.plates is None, terms.supports is None, terms.damped is None


def test_absent_terms_are_none_to_the_kernels():
    """The kernels' view of a rod-only, undamped model has no plates, supports or damping, so
    their kernels are not compiled; Python still reads empty arrays and False. A damped model
    on elastic supports has them; a model without rod elements has no rods."""
    model = spaghetti(4)
    terms = model.terms
    assert terms.plates.conn.shape[0] == 0
    assert terms.beta == 0.0
    assert not terms.damped
    assert _absent(terms) == (False, True, True, True)
    springs = pack_supports([Support(np.array([0]), spring=(1.0, 1.0, 1.0))], model.x0, model.rot0)
    damped = dataclasses.replace(model, beta=0.1, supports=springs)
    assert _absent(damped.terms) == (False, True, False, False)
    no_rods = dataclasses.replace(model, rods=model.rods._replace(conn=model.rods.conn[:0]))
    assert _absent(no_rods.terms)[0]
    assert no_rods.terms.rods.conn.shape[0] == 0


@pytest.mark.parametrize("flag", [True, False])
def test_switch(flag):
    from rodsim.jit import switch

    assert switch(flag) is (True if flag else None)


def test_an_index_naming_a_removed_type_counts_as_stale(tmp_path):
    """numba unpickles an index's signatures before comparing the source stamp: an index written
    by an older rodsim whose signatures name a class since removed (rodsim.model.forces.Strains
    went with issue 34) must read as empty, not stop the run with an AttributeError."""
    import types

    gone = types.ModuleType("rodsim_gone_module")
    gone.Strains = type("Strains", (), {"__module__": "rodsim_gone_module"})
    sys.modules["rodsim_gone_module"] = gone
    try:
        index = kernel_cache.LockedCacheFile(str(tmp_path), "k.f-1.py311", ("stamp", 1))
        index.save((gone.Strains, 1), b"data")
    finally:
        del sys.modules["rodsim_gone_module"]
    # numba's own reader raises on this index; rodsim's reads it as stale
    with pytest.raises((AttributeError, ImportError)):
        kernel_cache.caching.IndexDataCacheFile._load_index(index)
    assert index._load_index() == {}
    index.save(("fresh", 2), b"new")  # a save rewrites the stale index
    assert index.load(("fresh", 2)) == b"new"


@kernel
def _twice(x):
    return 2.0 * x


def test_a_change_to_any_source_is_a_new_cache_key(monkeypatch):
    """A cached kernel holds the code of the kernels it calls, from other modules: its cache
    key holds the fingerprint of all of rodsim's sources, so that after a change to any of
    them (an upgrade) the kernel compiles again instead of running a callee's old code."""
    _twice(1.0)
    cache, codegen = _twice._cache, _twice.targetctx.codegen()
    types = (numba.float64,)
    index = cache._cache_file._load_index()
    assert cache._index_key(types, codegen) in index
    assert kernel_cache.source_fingerprint() in cache._index_key(types, codegen)
    monkeypatch.setattr(kernel_cache, "_FINGERPRINT", ["another source"])
    assert cache._index_key(types, codegen) not in index
