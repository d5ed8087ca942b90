"""Compiling ahead (rodsim.kernel_cache.compile_ahead): a forked process compiles a kernel
into the cache while this one goes on; this one then loads it instead of compiling it, and a
kernel already cached forks nothing."""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from rodsim import kernel_cache
    from rodsim.integrators import banded

    ab, piv = np.ones((3, 3)), np.zeros(3, dtype=np.int64)
    args = (ab, 0, 2, piv)
    types = tuple(banded.factor.typeof_pyval(a) for a in args)
    ahead = kernel_cache.compile_ahead([(banded.factor, types)])
    assert ahead is not None, "a cold cache: the kernel compiles in a second process"
    ahead.wait()
    before = kernel_cache.compiling().kernels
    banded.factor(*args)  # the kernel, loaded
    assert kernel_cache.compiling().kernels == before, "loaded from the cache, not compiled"
    assert sum(banded.factor.stats.cache_hits.values()) == 1
    assert kernel_cache.compile_ahead([(banded.factor, types)]) is None, "in memory: no fork"
    print("ok")
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="compiles ahead on Linux only")
def test_a_kernel_compiled_ahead_is_loaded_not_compiled(tmp_path):
    env = {**os.environ, "RODSIM_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("RODSIM_COMPILE_AHEAD", None)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_switched_off_it_forks_nothing(monkeypatch):
    from rodsim import kernel_cache
    from rodsim.integrators import banded

    monkeypatch.setenv("RODSIM_COMPILE_AHEAD", "0")
    assert kernel_cache.compile_ahead([(banded.factor, ())]) is None
