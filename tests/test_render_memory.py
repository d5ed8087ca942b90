"""rodsim render estimates the memory of its pictures before drawing (docs/render.md,
"Memory"): a picture the machine cannot hold is exit 4 with the estimate, not an abort."""

import resource
import subprocess
import sys

import pytest
from conftest import small_cantilever, tree_bytes

from rodsim.errors import ResourceError
from rodsim.post import render_memory
from rodsim.resources import Limit

LIMIT = 3 * 10**9  # bytes of address space: the campaign's limit, below an 8192x8192 picture


def test_the_estimate_grows_with_the_pixels_and_a_gifs_frames():
    small = render_memory.need((1024, 768), 1, gif=False)
    large = render_memory.need((8192, 8192), 1, gif=False)
    # the slope is bytes a pixel: the difference is exactly PER_PIXEL times the pixels added
    assert large - small == render_memory.PER_PIXEL * (8192**2 - 1024 * 768)
    gif = render_memory.need((640, 480), 300, gif=True)
    assert gif - render_memory.need((640, 480), 300, gif=False) == 4 * 640 * 480 * 300


def test_a_picture_above_the_limit_is_refused_with_its_estimate():
    with pytest.raises(ResourceError, match=r"8192x8192 pixels.*RLIMIT_AS.*smaller --size"):
        render_memory.check((8192, 8192), 1, False, Limit(2 * 1024**3, "RLIMIT_AS"))
    assert render_memory.check((1024, 768), 1, False, Limit(2 * 1024**3, "RLIMIT_AS")) > 0


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    pytest.importorskip("pyvista", reason="rodsim render needs rodsim[render]")
    folder = tmp_path_factory.mktemp("render_memory")
    case = folder / "case.yaml"
    case.write_text(small_cantilever())
    done = subprocess.run(
        [sys.executable, "-m", "rodsim.cli", "run", str(case), "-o", str(folder / "r.h5"), "-q"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return folder / "r.h5"


def _render(results, out, size):
    args = ["render", str(results), "-o", str(out), "--size", size]
    return subprocess.run(
        [sys.executable, "-m", "rodsim.cli", *args],
        capture_output=True, text=True, preexec_fn=_limited, timeout=300,
    )  # fmt: skip


def test_the_largest_picture_under_3_gb_is_exit_4_and_writes_nothing(results, tmp_path):
    """Was: std::bad_alloc, the process aborted (SIGABRT)."""
    (tmp_path / "mine.png").write_bytes(b"not rodsim's")
    before, source = tree_bytes(tmp_path), results.read_bytes()
    done = _render(results, tmp_path / "big.png", "8192x8192")
    assert done.returncode == 4, done.stderr
    assert "8192x8192 pixels" in done.stderr and "GiB" in done.stderr
    assert "Traceback" not in done.stderr and "bad_alloc" not in done.stderr
    assert tree_bytes(tmp_path) == before and results.read_bytes() == source


def test_an_ordinary_picture_still_draws_under_the_same_limit(results, tmp_path):
    """The estimate is not so cautious that the default picture is refused under 3 GB."""
    pytest.importorskip("pyvista")
    done = _render(results, tmp_path / "a.png", "1024x768")
    if done.returncode != 0 and "cannot render" in done.stderr.lower():
        pytest.skip("VTK cannot render off-screen here")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.png").stat().st_size > 0
