"""The memory estimate and its limit (rodsim.resources): the per-item tables against the real
arrays, the refusal before allocation (exit code 4), --max-memory, the /proc and cgroup
readers on fake files, a MemoryError as a clean exit 4, and the estimate against the measured
peak of a 1e5-element rod (benchmarks/memory_estimate.py measures more)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rodsim import resources as r
from rodsim import run as runner
from rodsim.case.load import load_case
from rodsim.cli import main
from rodsim.integrators import dynamics, implicit
from rodsim.solvers.output import dynamic_frame

ROOT = Path(__file__).resolve().parents[1]
SPAGHETTI = ROOT / "inputs" / "spaghetti" / "spaghetti.yaml"
FRAME_CASE = ROOT / "inputs" / "frame" / "frame.yaml"  # a Gmsh mesh file
GiB = 1024**3

ROD = """rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: {n}, section: bar}}
sections:
  bar: {{type: rod, material: {{E: 7.0e10, nu: 0.33, rho: 2700}},
         shape: {{rectangle: [0.02, 0.01]}}}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - gravity: [0, 0, -9.81]
solver: {{dt: 1.0e-9, t_end: 3.0e-9}}
output: {{every: 1, vtk: false}}
"""

PLATE = """rodsim: 1
mesh:
  - rectangle: {{name: p, origin: [0, 0, 0], size: [1, 1], elements: [{n1}, {n2}], section: s}}
sections:
  s: {{type: plate, material: {{E: 1.0e6, nu: 0.3, rho: 1.0}}, thickness: 0.001}}
boundary:
  - {{set: p.x0, fix: all}}
loads:
  - gravity: [0, 0, -1.0e-6]
solver: {{dt: 1.0e-9, t_end: 3.0e-9}}
output: {{every: 1, vtk: false}}
"""


def _err(res) -> str:
    return res.stderr if hasattr(res, "stderr") else res.output


def _case(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- the tables are the arrays ----------------------------------------------------------------


def nbytes(*objects) -> int:
    """Bytes of the distinct numpy buffers in objects (NamedTuples, dataclasses, dicts, lists
    searched through; a view counts as its base)."""
    seen, total = set(), 0

    def walk(obj, depth):
        nonlocal total
        if isinstance(obj, np.ndarray):
            base = obj
            while isinstance(base.base, np.ndarray):
                base = base.base
            if id(base) not in seen:
                seen.add(id(base))
                total += base.nbytes
        elif depth > 6:
            return
        elif hasattr(obj, "__dataclass_fields__"):
            for name in obj.__dataclass_fields__:
                walk(getattr(obj, name), depth + 1)
        elif isinstance(obj, dict):
            for value in obj.values():
                walk(value, depth + 1)
        elif isinstance(obj, (list, tuple)):
            for value in obj:
                walk(value, depth + 1)

    for obj in objects:
        walk(obj, 0)
    return total


def _arrays(case: Path) -> tuple[r.Sizes, dict]:
    """Sizes and the bytes of each category's real arrays for a case."""
    prep = runner.prepare(case)
    mesh, model = prep.setup.mesh, prep.setup.model
    run = dynamics.start(model, prep.plan.dt, state=dynamics.initial_state(model))
    imp = implicit.start(model, prep.plan.dt, state=dynamics.initial_state(model))
    s = imp.solver
    out = {
        "mesh": nbytes(
            mesh.points,
            mesh.frames,
            mesh.conn,
            mesh.end_frames,
            mesh.section,
            mesh.part,
            mesh.plates,
            mesh.plate_section,
            mesh.plate_part,
            mesh.plate_frames,
            mesh.plate_thickness,
        ),
        "sets": nbytes(mesh.sets),
        "model": nbytes(mesh, model) - nbytes(mesh),
        "explicit": nbytes(run.state, run.work),
        "frame": nbytes(dynamic_frame(run, prep.plan.dt)),
        "implicit": nbytes(imp.state, imp.quat, imp.xi, s.pattern, s.work, s.data),
        "blocks": len(s.pattern.indices),
    }
    return r.Sizes(model.n_nodes, model.n_elements, model.n_plates), out


def _difference(tmp_path, small: str, large: str):
    s1, a1 = _arrays(_case(tmp_path, small, "small.yaml"))
    s2, a2 = _arrays(_case(tmp_path, large, "large.yaml"))
    sizes = r.Sizes(s2.nodes - s1.nodes, s2.elements - s1.elements, s2.plates - s1.plates)
    return sizes, {k: a2[k] - a1[k] for k in a1}


@pytest.mark.parametrize("kind", ["rod", "plate"])
def test_the_tables_are_the_bytes_of_the_real_arrays(tmp_path, kind):
    # per item: the difference of two sizes leaves the fixed-size arrays out, so every byte
    # per node, element and plate must be in the tables
    if kind == "rod":
        sizes, d = _difference(tmp_path, ROD.format(n=10), ROD.format(n=40))
        assert d["sets"] == 8 * sizes.nodes  # the part's `all` set, counted in MESH
        assert d["mesh"] + d["sets"] == r._bytes(r.MESH, sizes)
    else:  # a strip n x 2: the edge sets grow too, which MESH does not count
        sizes, d = _difference(tmp_path, PLATE.format(n1=4, n2=2), PLATE.format(n1=12, n2=2))
        assert d["mesh"] == r._bytes(r.MESH, sizes) - 8 * sizes.nodes
    assert d["model"] == r._bytes(r.MODEL, sizes)
    assert d["explicit"] == r._bytes(r.EXPLICIT, sizes)
    # the rod's section has a shape: its largest von Mises stress and utilisation per element
    stresses = r.STRESS_BYTES * sizes.elements if kind == "rod" else 0
    assert d["frame"] == r._bytes(r.FRAME, sizes) + stresses
    assert d["implicit"] == r._bytes(r.IMPLICIT, sizes) + r.IMPLICIT_BLOCK * d["blocks"]


def test_point_stresses_are_counted(tmp_path):
    """output.stresses: points keeps the stress (R,3) and von Mises stress (R,) at each of the
    R = 48 recovery points of the rectangle (rodsim.model.shapes) per element."""
    points = ROD.replace("vtk: false", "vtk: false, stresses: points")
    sizes, d = _difference(tmp_path, points.format(n=10), points.format(n=40))
    per_element = r.STRESS_BYTES + r.POINT_STRESS_BYTES * 48
    assert d["frame"] == r._bytes(r.FRAME, sizes) + per_element * sizes.elements
    settings = r.case_settings(load_case(_case(tmp_path, points.format(n=10))).settings)
    assert settings.points == 48
    assert settings.stresses


def test_jacobian_blocks_are_counted(tmp_path):
    _, rod = _arrays(_case(tmp_path, ROD.format(n=30)))
    assert rod["blocks"] == r.jacobian_blocks(r.Sizes(31, 30, 0))
    _, plate = _arrays(_case(tmp_path, PLATE.format(n1=16, n2=16)))
    # 8 per plate counts each edge once for two plates: the boundary's edges add a little
    assert plate["blocks"] == pytest.approx(r.jacobian_blocks(r.Sizes(17**2, 0, 256)), rel=0.1)


def test_sizes_come_from_the_case_before_the_mesh(tmp_path):
    text = ROD.format(n=10).replace(
        "mesh:\n",
        "mesh:\n  - arc: {name: ring, center: [0, 0, 5], "
        "radius: 1, start: [1, 0, 5], normal: [0, 0, 1], angle: 360, "
        "elements: 12, section: bar}\n"
        "  - rectangle: {name: p, origin: [0, 0, 9], size: [1, 2], "
        "elements: [3, 5], section: bar}\n",
    )
    sizes = r.case_sizes(load_case(_case(tmp_path, text)).settings)
    assert sizes == r.Sizes(11 + 12 + 24, 10 + 12, 15, 4, False)
    files = r.case_sizes(load_case(FRAME_CASE).settings)
    assert files.files
    assert files.elements == 0


# --- the refusal --------------------------------------------------------------------------


def test_check_refuses_a_model_beyond_max_memory():
    res = CliRunner().invoke(main, ["check", str(SPAGHETTI), "--max-memory", "10M"])
    assert res.exit_code == 4, _err(res)
    message = _err(res)
    assert "spaghetti.yaml: the model needs about 300 MiB (10 rod elements, 11 nodes" in message
    assert "but 10 MiB are available (--max-memory); reduce the model or raise --max-memory" in (
        message
    )
    assert "Traceback" not in res.output


def test_run_refuses_before_writing_anything(tmp_path):
    out = tmp_path / "r.h5"
    res = CliRunner().invoke(main, ["run", str(SPAGHETTI), "-o", str(out), "--max-memory", "100MB"])
    assert res.exit_code == 4, _err(res)
    assert "95.4 MiB are available (--max-memory)" in _err(res)
    assert not out.exists()


@pytest.mark.parametrize(
    "text, what",
    [
        (ROD.format(n=100_000_000), "(1e8 rod elements, 1e8 nodes, explicit)"),
        (PLATE.format(n1=20_000, n2=20_000), "(4e8 plate elements, 4e8 nodes, explicit)"),
    ],
)
@pytest.mark.parametrize("command", ["check", "run"])
def test_a_huge_model_is_refused_at_once(tmp_path, text, what, command):
    case = _case(tmp_path, text)
    args = [command, str(case)] + (["-o", str(tmp_path / "x.h5")] if command == "run" else [])
    started = time.perf_counter()
    res = CliRunner().invoke(main, args)
    assert time.perf_counter() - started < 1.0
    assert res.exit_code == 4, _err(res)
    assert "the model needs about" in _err(res)
    assert what in _err(res)
    assert "MemoryError" not in res.output
    assert "bug" not in res.output
    assert not (tmp_path / "x.h5").exists()


def test_a_mesh_file_is_checked_once_read():
    # the generated parts count nothing here: the estimate is the baseline alone until the
    # Gmsh mesh is read, which then exceeds the limit
    limit = f"{r.BASELINE + 1000}"
    res = CliRunner().invoke(main, ["check", str(FRAME_CASE), "--max-memory", limit])
    assert res.exit_code == 4, _err(res)
    assert "rod elements" in _err(res)
    assert "(--max-memory)" in _err(res)


def test_check_prints_the_estimate_and_the_limit():
    res = CliRunner().invoke(main, ["check", str(SPAGHETTI), "--max-memory", "2GiB"])
    assert res.exit_code == 0, _err(res)
    assert "\nmemory    about 300 MiB (limit 2 GiB: --max-memory)\n" in res.output


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_bad_max_memory_exits_2_naming_the_option(command):
    res = CliRunner().invoke(main, [command, str(SPAGHETTI), "--max-memory", "10X"])
    assert res.exit_code == 2
    assert "--max-memory" in _err(res)
    assert "'10X'" in _err(res)


def test_a_memory_error_is_exit_code_4(monkeypatch, tmp_path):
    def exhausted(*args, **kwargs):
        raise MemoryError("Unable to allocate 74.5 GiB for an array")

    monkeypatch.setattr(runner, "execute", exhausted)
    res = CliRunner().invoke(main, ["run", str(SPAGHETTI), "-o", str(tmp_path / "m.h5"), "-q"])
    assert res.exit_code == 4
    assert "error: out of memory (Unable to allocate 74.5 GiB for an array)" in _err(res)
    assert "bug" not in _err(res)


# --- sizes as text ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("4G", 4 * GiB),
        ("500M", 500 * 1024**2),
        ("2GiB", 2 * GiB),
        ("1.5GB", 1_500_000_000),
        ("750kB", 750_000),
        ("64k", 65536),
        ("123456", 123456),
        (" 2 g ", 2 * GiB),
        ("1T", 1024**4),
        ("100b", 100),
    ],
)
def test_sizes_parse(text, expected):
    assert r.parse_size(text) == expected


@pytest.mark.parametrize("text", ["10X", "", "G", "-1G", "0", "0.1", "4 GBB", "1e9"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError, match="expected a size"):
        r.parse_size(text)


def test_sizes_print_in_binary_units():
    assert [r.format_size(n) for n in (512, 1536, 23.1 * GiB, 5 * 1024**5)] == [
        "512 B",
        "1.5 KiB",
        "23.1 GiB",
        "5 PiB",
    ]


# --- the limit: readers on fake files -----------------------------------------------------


def test_meminfo_available(tmp_path):
    meminfo = _case(
        tmp_path,
        "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n",
        "meminfo",
    )
    assert r.meminfo_available(meminfo) == 20000000 * 1024
    assert r.meminfo_available(_case(tmp_path, "MemTotal: 5 kB\n", "old")) is None
    assert r.meminfo_available(tmp_path / "absent") is None


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v2_limit_is_the_tightest_of_the_path(tmp_path):
    _write(tmp_path / "self", "0::/user.slice/app.scope\n")
    _write(tmp_path / "cg" / "user.slice" / "app.scope" / "memory.max", "max\n")
    _write(tmp_path / "cg" / "user.slice" / "memory.max", "1073741824\n")
    _write(tmp_path / "cg" / "memory.max", "4294967296\n")
    assert r.cgroup_limit(tmp_path / "cg", tmp_path / "self") == (GiB, "cgroup memory.max")
    (tmp_path / "cg" / "user.slice" / "memory.max").write_text("max\n")
    assert r.cgroup_limit(tmp_path / "cg", tmp_path / "self") == (4 * GiB, "cgroup memory.max")
    (tmp_path / "cg" / "memory.max").write_text("max\n")
    assert r.cgroup_limit(tmp_path / "cg", tmp_path / "self") is None


def test_cgroup_v1_limit_and_its_unlimited_value(tmp_path):
    _write(tmp_path / "self", "12:cpu,cpuacct:/docker/abc\n5:memory:/docker/abc\n")
    v1 = tmp_path / "cg" / "memory"
    _write(v1 / "docker" / "abc" / "memory.limit_in_bytes", "9223372036854771712\n")
    assert r.cgroup_limit(tmp_path / "cg", tmp_path / "self") is None
    # inside the container the mount's root is the container's own cgroup
    _write(v1 / "memory.limit_in_bytes", "536870912\n")
    assert r.cgroup_limit(tmp_path / "cg", tmp_path / "self") == (
        512 * 1024**2,
        "cgroup memory.limit_in_bytes",
    )


def test_no_cgroup_files_no_limit(tmp_path):
    assert r.cgroup_limit(tmp_path / "none", tmp_path / "absent") is None


def test_the_limit_is_the_least_and_named(tmp_path):
    meminfo = _case(tmp_path, "MemAvailable: 8388608 kB\n", "meminfo")  # 8 GiB
    status = _case(tmp_path, "VmSize: 3145728 kB\nVmRSS:  1048576 kB\n", "status")  # 3, 1 GiB
    _write(tmp_path / "self", "0::/\n")
    files = {
        "meminfo": meminfo,
        "status": status,
        "cgroup_root": tmp_path / "cg",
        "membership": tmp_path / "self",
    }
    unlimited = r.resource.RLIM_INFINITY
    # MemAvailable leaves out what the process holds (VmRSS): it is added back
    assert r.machine_limit(address_space=unlimited, **files) == r.Limit(9 * GiB, "MemAvailable")
    # --max-memory replaces MemAvailable, above or below it
    assert r.machine_limit(16 * GiB, address_space=unlimited, **files) == r.Limit(
        16 * GiB, "--max-memory"
    )
    # RLIMIT_AS less what is mapped but not resident (VmSize - VmRSS)
    assert r.machine_limit(address_space=6 * GiB, **files) == r.Limit(4 * GiB, "RLIMIT_AS")
    # the cgroup's limit holds whatever --max-memory says
    _write(tmp_path / "cg" / "memory.max", f"{2 * GiB}\n")
    assert r.machine_limit(16 * GiB, address_space=unlimited, **files) == r.Limit(
        2 * GiB, "cgroup memory.max"
    )
    assert (
        r.machine_limit(
            address_space=unlimited,
            meminfo=tmp_path / "absent",
            status=status,
            cgroup_root=tmp_path / "none",
            membership=tmp_path / "absent",
        ).bytes
        is None
    )


def test_a_hard_limit_advises_raising_it():
    need = r.estimate(r.Sizes(10**6, 10**6, 0), r.Settings("explicit"))
    with pytest.raises(r.ResourceError, match="raise the cgroup memory.max limit"):
        r.check(need, r.Limit(GiB, "cgroup memory.max"))
    assert r.check(need, r.Limit(None, "none known")).estimate is need


# --- the estimate against the measured peak -----------------------------------------------


# The child reports its own VmHWM as it exits. Its ru_maxrss would not do: Linux carries the
# parent's high-water mark across fork and exec into it (a pytest process that has run most
# of the suite holds 1.3 GB, which a child's ru_maxrss then reported).
_REPORT_PEAK = """
import atexit, sys
def report():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            sys.stderr.write("peak-kib " + line.split()[1] + "\\n")
atexit.register(report)
from rodsim.cli import main
sys.argv = ["rodsim", *sys.argv[1:]]
main()
"""


def peak_rss(case: Path) -> int:
    """Peak resident bytes of `rodsim run case` in a fresh process (its VmHWM, in KiB)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _REPORT_PEAK, "run", str(case), "-q", "--no-vtk"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return int(done.stderr.rsplit("peak-kib ", 1)[1].split()[0]) * 1024


def test_the_estimate_is_within_30_percent_of_the_peak_of_a_1e5_element_rod(tmp_path):
    # the estimate is of a run with compiled kernels: compile them first (numba caches them
    # on disk), in another process; a cold first run peaked at 1.3 GB in CI for its compiler
    (tmp_path / "warm").mkdir()
    peak_rss(_case(tmp_path / "warm", ROD.format(n=10)))
    case = _case(tmp_path, ROD.format(n=100_000))
    data = load_case(case).settings
    need = r.estimate(r.case_sizes(data), r.case_settings(data)).bytes
    peak = peak_rss(case)
    assert 0.7 < need / peak < 1.3, (need, peak)
