"""The connectors' datasets in the results file (docs/results.md, docs/connectors.md "Output"):
declared by the term (Term.datasets), computed by its fields hook, written, read and chosen by
the generic code. Checked against rodsim.terms.connectors.output() at the state of a frame (bit
for bit), against the connector's own laws frame by frame, against closed forms (a spring
between two cantilevers, the plastic work of displacement cycles), through output.fields and
across a restart; a model without connectors writes none of them."""

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import cli_run
from test_connectors_closed_forms import CYCLES, _model

from rodsim import api
from rodsim.errors import CaseError
from rodsim.integrators import dynamics, implicit
from rodsim.mesh.assemble import Mesh
from rodsim.model import connectors as mc
from rodsim.model import forces
from rodsim.model.prescribed import Prescribed
from rodsim.results import read_results
from rodsim.results.frame import Unwritten
from rodsim.results.layout import (
    FIELD_NAMES,
    LAYOUT_MINOR,
    TERM_DATASETS,
    TERM_FRAME_DATASETS,
    chosen_datasets,
    markdown_table,
)
from rodsim.results.writer import ResultsWriter
from rodsim.solvers.output import dynamic_frame
from rodsim.terms import connectors as term

ROOT = Path(__file__).resolve().parents[1]
INPUTS = ROOT / "inputs" / "connectors"
NAMES = ("force", "moment", "elongation", "rotation", "slip", "work")
SLIP = INPUTS / "slip_joint.yaml"
# slip_joint.yaml: k, F_y, k_r of its plastic joint in global axes
K, FY, KR = 1.0e4, 20.0, 10.0
SHORT = ("solver.t_end=0.3", "output.interval=0.02")  # past the first slip (t ~ 0.1)


def _quat(rot):
    quat = np.empty((len(rot), 4))
    forces.quaternions(rot, quat, 0, len(rot))
    return quat


def _datasets(f) -> dict:
    return {k: f[f"connectors/{k}"][()] for k in NAMES if f"connectors/{k}" in f}


def _check_slots(f, cn):
    """At each restart slot's frame (its raw x, rot and connector state) the file's datasets
    are output() there, bit for bit; returns the frames checked."""
    checked = []
    for slot in f["restart"].values():
        g, k = slot["terms/connectors"], int(slot.attrs["frame"])
        state = mc.ConnectorState(g["slip"][()], g["alpha"][()], g["work"][()])
        x, rot = slot["x"][()], slot["rot"][()]
        out = term.output(cn, state, x, rot, _quat(rot))
        for name in NAMES:
            np.testing.assert_array_equal(f[f"connectors/{name}"][k], out[name], err_msg=name)
        checked.append(k)
    return checked


def test_the_term_declares_its_datasets_and_the_docs_list_them():
    """Term.datasets reaches the table, the names output.fields takes and both docs pages."""
    paths = [d.path for d in TERM_DATASETS]
    assert paths == ["mesh/connectors"] + [f"connectors/{k}" for k in NAMES]
    assert {d.since for d in TERM_DATASETS} == {9} and LAYOUT_MINOR >= 9  # 1.9 added them
    assert "connectors/*" in FIELD_NAMES and all(p in FIELD_NAMES for p in paths[1:])
    assert chosen_datasets(["connectors/*"]) == frozenset(paths[1:])
    results_md = (ROOT / "docs" / "results.md").read_text()
    assert markdown_table() in results_md  # the generated table holds the term's rows
    connectors_md = (ROOT / "docs" / "connectors.md").read_text()
    for p in paths:
        assert f"`{p}`" in connectors_md, p


def test_slip_joint_datasets_are_output_at_each_frame(tmp_path):
    """inputs/connectors/slip_joint.yaml (explicit): shapes and node pairs; at the restart
    slots' frames output() at the raw state, bit for bit; at every frame the joint's laws
    (global axes, plastic, H = 0): u = (x_b - x_a) - d0, n = k (u - s) with |n_j| <= F_y,
    m = k_r psi, the work never decreasing and what the energy ledger counts for the
    connectors (no dashpots: its column is the plastic work alone); rodsim.Results reads
    the same arrays."""
    result, out = cli_run(SLIP, tmp_path, *SHORT)
    assert result.exit_code == 0, result.output
    cn = api.prepare(api.load_case(SLIP)).setup.model.terms.connectors
    with h5py.File(out) as f:
        a, b = f["mesh/sets/first.end"][0], f["mesh/sets/second.end"][0]
        np.testing.assert_array_equal(f["mesh/connectors"][()], [[a, b]])
        assert f["mesh/connectors"].dtype == np.int64
        v = _datasets(f)
        n = f["time"].shape[0]
        assert n == 16 and v["work"].shape == (n, 1)
        assert all(v[k].shape == (n, 1, 3) for k in NAMES if k != "work")
        assert len(_check_slots(f, cn)) == 2
        x = f["nodes/position"][()]
        d0 = f["mesh/points"][b] - f["mesh/points"][a]
        by_term = f["energy/dissipated_by_term"][()]
        column = f["energy/dissipated_by_term"].attrs["description"]
    u = (x[:, b] - x[:, a] - d0)[:, None]
    np.testing.assert_allclose(v["elongation"], u, rtol=0, atol=1e-15)  # coordinates ~1
    np.testing.assert_allclose(v["force"], K * (v["elongation"] - v["slip"]), rtol=1e-12)
    assert np.abs(v["force"]).max() <= FY * (1 + 1e-12)
    np.testing.assert_allclose(v["moment"], KR * v["rotation"], rtol=1e-15)
    assert np.all(np.diff(v["work"][:, 0]) >= 0.0) and v["work"][-1, 0] > 0.1  # it slipped
    assert np.abs(v["slip"][-1]).max() > 1e-3
    np.testing.assert_allclose(by_term[:, _column(column)], v["work"][:, 0], rtol=1e-12)
    r = read_results(out)
    assert set(r.terms) == {f"connectors/{k}" for k in NAMES}
    for k in NAMES:
        np.testing.assert_array_equal(r.terms[f"connectors/{k}"], v[k])
    np.testing.assert_array_equal(r.mesh.terms["mesh/connectors"], [[a, b]])
    fr = r.frame(7)
    np.testing.assert_array_equal(fr.terms["connectors/slip"], v["slip"][7])
    np.testing.assert_array_equal(fr.terms["mesh/connectors"], [[a, b]])


def _column(description: str) -> int:
    """The connectors' column of energy/dissipated_by_term, from its description."""
    names = description.split("columns ")[1].split(" (")[0].split(", ")
    return names.index("connectors")


def test_coupled_cantilevers_against_the_hand_solution(tmp_path):
    """inputs/connectors/coupled_cantilevers.yaml (equilibrium): the spring [0, 0, k] in
    global axes carries n_z = k (w2 - w1) = k P / (kc + 2k) (the tip deflections of
    test_connectors_closed_forms, kc = 3 EI / L^3 / (1 - 1/(4 n^2))) within 1e-4 (the
    geometric nonlinearity, ~ (w/L)^2); no slip, no work; output() at the restart slots;
    the in-memory Results (rodsim.run_in_memory, from the frames) equal the file's."""
    result, out = cli_run(INPUTS / "coupled_cantilevers.yaml", tmp_path)
    assert result.exit_code == 0, result.output
    case = INPUTS / "coupled_cantilevers.yaml"
    cn = api.prepare(api.load_case(case)).setup.model.terms.connectors
    with h5py.File(out) as f:
        v = _datasets(f)
        pairs = f["mesh/connectors"][()]
        assert _check_slots(f, cn)
    p, k, n = 30.0, 6000.0, 10
    kc = 3 * 1.0e3 / (1 - 1 / (4 * n * n))
    assert v["force"][-1, 0, 2] == pytest.approx(k * p / (kc + 2 * k), rel=1e-4)
    assert v["force"][-1, 0, :2].tolist() == [0.0, 0.0]  # no stiffness there
    assert not v["slip"].any() and not v["work"].any()
    assert v["force"][0].tolist() == [[0.0, 0.0, 0.0]]  # the reference, unloaded
    memory, file = api.run_in_memory(case), read_results(out)
    assert memory.terms.keys() == file.terms.keys()
    for key in file.terms:
        np.testing.assert_array_equal(memory.terms[key], file.terms[key], err_msg=key)
    np.testing.assert_array_equal(memory.mesh.terms["mesh/connectors"], pairs)


@pytest.mark.parametrize("scheme", ["explicit", "implicit"])
def test_plastic_work_in_the_file_is_the_closed_form(tmp_path, scheme):
    """The displacement cycles of test_connectors_closed_forms (k, F_y, u_max, node a fixed,
    node b driven), frames written through output.dynamic_frame and ResultsWriter and read
    back: connectors/work is F_y (4 u_max - 5 F_y / k) after the first cycle and grows by
    4 F_y (u_max - F_y / k) in the second, within 1e-3 (as there); each cycle ends with the
    slip at -F_y / k (from -u_max back to 0 the link yields again once n reaches F_y: u_max >
    2 F_y / k), within 1e-3."""
    k, fy, u_max = 100.0, 1.0, 0.05
    x0, rot0 = np.array([[0.0, 0, 0], [1.0, 0, 0], [0.0, 1.0, 0]]), np.stack([np.eye(3)] * 3)
    fixed = np.zeros((3, 6), dtype=bool)
    fixed[0] = True
    link = mc.Connector(
        np.array([0]),
        np.array([1]),
        "plastic",
        stiffness=(k, 0, 0),
        yield_force=(fy, np.inf, np.inf),
    )
    drive = Prescribed(np.array([1]), (u_max, 0.0, 0.0), time=CYCLES)
    model = _model(x0, rot0, [link], [1.0, 1.0, 1.0], fixed=fixed, prescribed=[drive])
    glide = dynamics.initial_state(model, velocity=[[0, 0, 0], [0, 0, 0], [0, 0, 1.0]], rigid=False)
    dt = 0.01
    if scheme == "explicit":
        run, advance = dynamics.start(model, dt, state=glide), dynamics.advance
    else:
        run, advance = implicit.start(model, dt, state=glide, tol=1e-13), implicit.advance
    empty = np.zeros((0, 2), dtype=np.int64)
    mesh = Mesh(
        points=x0,
        frames=rot0,
        conn=empty,
        end_frames=np.zeros((0, 2, 3, 3)),
        section=np.zeros(0, np.int64),
        section_names=(),
        part=np.zeros(0, np.int64),
        part_names=(),
        sets={},
    )
    path = tmp_path / "cycles.h5"
    with ResultsWriter(path, mesh, "", "cycles") as w:
        w.write(dynamic_frame(run, dt))
        for _ in range(2):
            advance(run, 400)
            w.write(dynamic_frame(run, dt))
    r = read_results(path)
    work = r.terms["connectors/work"][:, 0]
    assert work[0] == 0.0
    assert work[1] == pytest.approx(fy * (4 * u_max - 5 * fy / k), rel=1e-3)
    assert work[2] - work[1] == pytest.approx(4 * fy * (u_max - fy / k), rel=1e-3)
    slip = r.terms["connectors/slip"][:, 0, 0]
    np.testing.assert_allclose(slip[1:], -fy / k, rtol=1e-3)
    np.testing.assert_array_equal(r.mesh.terms["mesh/connectors"], [[0, 1]])
    # the last frame is the run's state as it stands
    assert r.terms["connectors/work"][-1].tolist() == model.terms.connectors_state.work.tolist()


def test_output_fields_chooses_the_connectors_datasets(tmp_path):
    """output.fields: [connectors/work] writes that one and the node pairs; the others read
    as not written (CaseError naming the dataset) where the model has connectors; a
    restart continues the datasets it has bit for bit (run to 0.3 and continued to 0.5
    against a run to 0.5)."""
    only = ("output.fields=[connectors/work]",)
    part, full = tmp_path / "part.h5", tmp_path / "full.h5"
    api.run_case(SLIP, part, vtk=False, overrides=(*SHORT, *only))
    with h5py.File(part) as f:
        assert sorted(f["connectors"]) == ["work"] and "mesh/connectors" in f
        assert "connectors/work" in list(f.attrs["fields"])
        assert "rods/force" not in f
    r = read_results(part)
    assert isinstance(r.terms["connectors/force"], Unwritten)
    with pytest.raises(CaseError, match="connectors/force not written"):
        r.terms["connectors/force"][0]
    longer = ("solver.t_end=0.5", "output.interval=0.02", *only)
    api.run_case(SLIP, vtk=False, overrides=longer, restart=part)
    api.run_case(SLIP, full, vtk=False, overrides=longer)
    with h5py.File(part) as a, h5py.File(full) as b:
        assert a["connectors/work"].shape == (26, 1)
        np.testing.assert_array_equal(a["connectors/work"][()], b["connectors/work"][()])
        assert a["connectors/work"][-1, 0] > a["connectors/work"][15, 0]  # it slipped on


def test_a_restart_continues_the_datasets(tmp_path):
    """slip_joint.yaml run to 0.3 and continued to 0.5 equals the run to 0.5 in every
    connectors dataset, bit for bit (the slip moves on across the restart). A file of layout
    1.8 (no connectors datasets, its fields attribute without them) continues without them
    and without an output.fields error; its other datasets as the run to 0.5."""
    part, full, old = tmp_path / "part.h5", tmp_path / "full.h5", tmp_path / "old.h5"
    longer = ("solver.t_end=0.5", "output.interval=0.02")
    api.run_case(SLIP, part, vtk=False, overrides=SHORT)
    shutil.copyfile(part, old)
    with h5py.File(old, "a") as f:
        del f["connectors"], f["mesh/connectors"]
        f.attrs["fields"] = [p for p in f.attrs["fields"] if not p.startswith("connectors/")]
        f.attrs["layout_minor"] = 8
    api.run_case(SLIP, vtk=False, overrides=longer, restart=part)
    api.run_case(SLIP, vtk=False, overrides=longer, restart=old)
    api.run_case(SLIP, full, vtk=False, overrides=longer)
    with h5py.File(part) as a, h5py.File(full) as b, h5py.File(old) as c:
        assert a["time"].shape == (26,)
        for name in ("mesh/connectors", *(f"connectors/{k}" for k in NAMES)):
            np.testing.assert_array_equal(a[name][()], b[name][()], err_msg=name)
        assert a["connectors/work"][-1, 0] > a["connectors/work"][15, 0]  # it slipped on
        assert "connectors" not in c and "mesh/connectors" not in c
        np.testing.assert_array_equal(c["nodes/position"][()], b["nodes/position"][()])
    assert read_results(old).terms == {}


def test_a_model_without_connectors_writes_no_term_dataset(tmp_path):
    """No connectors/ group, no mesh/connectors, empty terms in Results and frames."""
    result, out = cli_run(
        ROOT / "inputs" / "cantilever" / "cantilever.yaml",
        tmp_path,
        "solver.t_end=0.002",
        "output.interval=0.001",
    )
    assert result.exit_code == 0, result.output
    with h5py.File(out) as f:
        assert "connectors" not in f and "mesh/connectors" not in f
        assert f.attrs["layout_minor"] == LAYOUT_MINOR
    r = read_results(out)
    assert r.terms == {} and r.mesh.terms == {} and r.frame(0).terms == {}
    assert all(d.term == "connectors" for d in TERM_FRAME_DATASETS)


def test_the_paraview_series_has_a_line_cell_per_connector(tmp_path):
    """slip_joint.yaml with --vtk (docs/results.md "The ParaView series"): after the rods'
    line cells, one line cell per connector from node a to node b, in the order of
    mesh/connectors; cell data connectors_<field> on it equal to the file's datasets, zero on
    the rods' cells; the rods' arrays zero on the connector's cell. `rodsim export` of the
    file writes the same frames; output.fields keeping only connectors/work leaves the other
    connector arrays out. A model without connectors keeps one line block (the files as
    before)."""
    import meshio

    from rodsim.post.export import export_vtk
    from rodsim.results.vtk import read_pvd

    out = tmp_path / "out.h5"
    api.run_case(SLIP, out, vtk=True, overrides=SHORT)
    with h5py.File(out) as f:
        pairs, rods = f["mesh/connectors"][()], f["mesh/rods"][()]
        v = _datasets(f)
        force = f["rods/force"][()]
    series = read_pvd(out.with_suffix(".pvd"))
    assert len(series) == 16
    pvd, n = export_vtk(out, tmp_path / "exported")
    exported = read_pvd(pvd)
    assert n == 16 and len(exported) == 16
    for k in (0, 7, 15):
        for path in (series[k][1], exported[k][1]):
            mesh = meshio.read(path)  # meshio reads consecutive line blocks as one
            cells = np.concatenate([c.data for c in mesh.cells])
            np.testing.assert_array_equal(cells, np.concatenate([rods, pairs]))
            data = {k: np.concatenate(v) for k, v in mesh.cell_data.items()}
            r = len(rods)
            for name in NAMES:
                want = v[name][k].reshape(len(pairs), -1)
                got = data[f"connectors_{name}"].reshape(len(cells), -1)
                np.testing.assert_array_equal(got[r:], want)
                assert not got[:r].any()
            np.testing.assert_array_equal(data["force"][:r], force[k])
            assert not data["force"][r:].any()
    only = tmp_path / "only.h5"
    api.run_case(SLIP, only, vtk=True, overrides=(*SHORT, "output.fields=[connectors/work]"))
    mesh = meshio.read(read_pvd(only.with_suffix(".pvd"))[-1][1])
    assert {k for k in mesh.cell_data if k.startswith("connectors_")} == {"connectors_work"}
    plain = tmp_path / "plain.h5"
    api.run_case(ROOT / "inputs" / "cantilever" / "cantilever.yaml", plain, vtk=True,
                 overrides=("solver.t_end=0.002",))  # fmt: skip
    mesh = meshio.read(read_pvd(plain.with_suffix(".pvd"))[-1][1])
    assert len(np.concatenate([c.data for c in mesh.cells])) == len(read_results(plain).mesh.conn)
    assert not any(k.startswith("connectors_") for k in mesh.cell_data)
