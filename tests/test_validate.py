"""The validation suite: spec loading, comparison arithmetic, the reference theory, and
``rodsim validate`` end to end (exit codes 0, 1, 2)."""

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.validate import compare, spec_reference, theory
from rodsim.validate.loading import load_benchmark
from rodsim.validate.runner import run_benchmark
from rodsim.validate.suite import default_root, select

ROOT = Path(__file__).resolve().parents[1]
SYNTHETIC = ROOT / "tests" / "data" / "validation"


def _err(res) -> str:
    return res.stderr if hasattr(res, "stderr") else res.output


# --- spec loading ---------------------------------------------------------------------------


@pytest.fixture
def bench_copy(tmp_path):
    """A writable copy of the synthetic benchmark and a helper to edit its spec text."""
    folder = tmp_path / "failing"
    shutil.copytree(SYNTHETIC / "failing", folder)

    def edit(old: str, new: str) -> Path:
        spec = folder / "benchmark.yaml"
        text = spec.read_text()
        assert old in text, old
        spec.write_text(text.replace(old, new))
        return folder

    return folder, edit


def test_every_benchmark_of_the_suite_loads():
    benches = select(default_root())
    assert [b.number for b in benches] == list(range(1, 18))  # 1-12 rods, 13-15 plates, 16-17 modes
    for b in benches:
        assert b.citation
        assert b.quantities
        for q in b.quantities:
            assert q.reason
            assert q.tolerance > 0
            assert q.reference.source


Q1 = "quantities[1]"  # the synthetic spec's second quantity, the one the edits break


@pytest.mark.parametrize(
    "old, new, key, message",
    [
        (", reason: must fail}", "}", f"{Q1}.reason", "missing required key 'reason'"),
        (
            "reduce: final, reference: L_wrong",
            "reduce: largest, reference: L_wrong",
            f"{Q1}.reduce",
            "expected one of final, at, max,",
        ),
        (
            "reference: L_wrong",
            "reference: L_typo",
            f"{Q1}.reference",
            "'L_typo' is not a value of reference.json (it has: L_true, L_wrong)",
        ),
        (
            "reference: L_wrong",
            "reference: L_wromg",
            f"{Q1}.reference",
            "'L_wromg' is not a value of reference.json (did you mean 'L_wrong'?)",
        ),
        ("tolerance: 1.0e-3", "tolerance: -1", f"{Q1}.tolerance", "expected a number > 0, got -1"),
        (
            "tolerance: 1.0e-3",
            "tolerence: 1.0e-3",
            f"{Q1}.tolerence",
            "unknown key 'tolerence' (did you mean 'tolerance'?)",
        ),
        ("title: Synthetic", "colour: red\ntitle: Synthetic", "colour", "unknown key 'colour'"),
        ("number: 99", "number: 9.5", "number", "expected an integer >= 1, got 9.5"),
        ("case: case.yaml", "case: nowhere.yaml", "case", "no such case file"),
        (
            "reduce: final, reference: L_wrong",
            "reduce: final, run: other, reference: L_wrong",
            f"{Q1}.run",
            "no run 'other' (runs: main)",
        ),
        (
            "quantities:",
            "tiers: {quick: {runs: [mian]}}\nquantities:",
            "tiers.quick.runs[0]",
            "no run 'mian' (did you mean 'main'?)",
        ),
        (
            "quantities:",
            "runs: {main: [solver.t_end]}\nquantities:",
            "runs.main[0]",
            "expected a KEY=VALUE override, got 'solver.t_end'",
        ),
        (
            "reduce: final, reference: L_wrong",
            "reduce: at, reference: L_wrong",
            f"{Q1}.at",
            "missing key 'at': reduce: at needs the time",
        ),
        (
            "reduce: final, reference: L_wrong",
            "reduce: max, window: [5.0, 1.0], reference: L_wrong",
            f"{Q1}.window",
            "the window must end after it starts, got [5, 1]",
        ),
        (
            "reduce: final, reference: L_wrong",
            "reduce: final, h: {main: 0.1}, reference: L_wrong",
            f"{Q1}.h",
            "only reduce: order takes h",
        ),
        (
            "reduce: final, reference: L_wrong",
            "reduce: order, h: {main: 0.1}, exact: L_true, reference: L_wrong",
            f"{Q1}.h",
            "reduce: order needs h of at least two runs",
        ),
        (
            "figure:",
            "figure:\n  kind: convergence",
            "figure.kind",
            "kind: convergence needs a quantity with reduce: order",
        ),
        (
            "figure:",
            "figure:\n  curve: nothing",
            "figure.curve",
            "is not a curve of reference.json (it has: none)",
        ),
    ],
)
def test_spec_loader_rejects_bad_specs(bench_copy, old, new, key, message):
    """Each broken spec is one CaseError naming the file and the key path."""
    folder, edit = bench_copy
    with pytest.raises(CaseError) as info:
        load_benchmark(edit(old, new))
    assert str(info.value).startswith(f"{folder / 'benchmark.yaml'}: {key}: ")
    assert message in info.value.reason


def test_a_zero_reference_needs_a_scale(bench_copy):
    folder, edit = bench_copy
    ref = json.loads((folder / "reference.json").read_text())
    ref["values"]["nothing"] = {"value": 0.0, "source": "test"}
    (folder / "reference.json").write_text(json.dumps(ref))
    with pytest.raises(CaseError, match="the reference is 0: give scale") as info:
        load_benchmark(edit("reference: L_wrong", "reference: nothing"))
    assert info.value.key == f"{Q1}.scale"


@pytest.mark.parametrize(
    "edit, key, message",
    [
        (
            lambda r: r["values"]["L_true"].pop("source"),
            "values.L_true.source",
            "missing required key 'source'",
        ),
        (
            lambda r: r["values"]["L_true"].update(value="0.15"),
            "values.L_true.value",
            "expected a number, got '0.15'",
        ),
        (lambda r: r.update(citation=[]), "citation", "expected a non-empty list"),
        (
            lambda r: r.update(citaton=["x"]),
            "citaton",
            "unknown key 'citaton' (did you mean 'citation'?)",
        ),
        (
            lambda r: r.update(curves={"c": {"file": "no.csv", "source": "s", "uncertainty": "u"}}),
            "curves.c.file",
            "no such curve file",
        ),
    ],
)
def test_reference_loader_rejects_bad_references(bench_copy, edit, key, message):
    folder, _ = bench_copy
    ref = json.loads((folder / "reference.json").read_text())
    edit(ref)
    (folder / "reference.json").write_text(json.dumps(ref))
    with pytest.raises(CaseError) as info:
        load_benchmark(folder)
    assert str(info.value).startswith(f"{folder / 'reference.json'}: {key}: ")
    assert message in info.value.reason


def test_a_broken_spec_is_exit_code_2_naming_file_and_key(bench_copy):
    folder, edit = bench_copy
    edit("tolerance: 1.0e-3", "tolerance: 0")
    res = CliRunner().invoke(main, ["validate", "--suite", str(folder.parent)])
    assert res.exit_code == 2
    assert f"{folder / 'benchmark.yaml'}: {Q1}.tolerance: expected a number > 0" in _err(res)


def test_the_spec_reference_example_runs_and_passes(tmp_path):
    """The example of docs/validation/spec_reference.md, with the case of masses_pulse."""
    folder = tmp_path / "example"
    folder.mkdir()
    shutil.copy(default_root() / "masses_pulse" / "case.yaml", folder / "case.yaml")
    (folder / "benchmark.yaml").write_text(spec_reference.EXAMPLE_SPEC)
    (folder / "reference.json").write_text(spec_reference.EXAMPLE_REFERENCE)
    outcome = run_benchmark(load_benchmark(folder), "quick", tmp_path / "work")
    assert [row.status for row in outcome.rows] == [compare.PASS]


def test_spec_reference_is_generated_from_the_schema():
    committed = (ROOT / "docs" / "validation" / "spec_reference.md").read_text()
    assert committed == spec_reference.reference(), (
        "docs/validation/spec_reference.md is stale: "
        "python -m rodsim.validate.spec_reference > docs/validation/spec_reference.md"
    )


# --- comparison arithmetic -------------------------------------------------------------------


def test_relative_error_and_verdict():
    assert compare.relative_error(10.5, 10.0) == pytest.approx(0.05)
    assert compare.relative_error(-9.0, -10.0) == pytest.approx(0.1)
    assert compare.relative_error(1e-3, 0.0, scale=10.0) == pytest.approx(1e-4)
    with pytest.raises(ValueError):
        compare.relative_error(1.0, 0.0)
    assert compare.verdict(0.05, 0.05) == compare.PASS
    assert compare.verdict(0.0500001, 0.05) == compare.FAIL
    assert compare.verdict(math.nan, 1.0) == compare.FAIL  # nothing computed never passes


def test_reducers_on_a_known_series():
    t = np.linspace(0.0, 10.0, 1001)
    v = np.sin(t) + 0.1 * t
    assert compare.reduce(t, v, "final") == pytest.approx(v[-1])
    assert compare.reduce(t, v, "at", at=2.5) == pytest.approx(np.sin(2.5) + 0.25, abs=1e-4)
    assert compare.reduce(t, v, "max", window=(0.0, 3.0)) == pytest.approx(v[t <= 3.0].max())
    assert compare.reduce(t, -np.abs(v), "absmax") == pytest.approx(np.abs(v).max())
    assert compare.reduce(t, np.full_like(t, 3.0), "drift", window=(5.0, math.inf)) == 0.0
    assert compare.reduce(t, 2.0 + 0.01 * np.sin(t), "relband") == pytest.approx(0.01, rel=1e-3)
    assert compare.reduce(t, t, "crossing", at=4.25) == pytest.approx(4.25)
    assert math.isnan(compare.reduce(t, t * np.nan, "final"))
    with pytest.raises(ValueError, match="no frame in the window"):
        compare.reduce(t, v, "max", window=(20.0, 30.0))


def test_dominant_frequency_is_far_finer_than_the_fft_bin():
    t = np.linspace(0.0, 20.0, 801)
    v = 1.0 + np.cos(3.3 * t + 0.4) + 0.02 * np.sin(21.0 * t)
    assert compare.dominant_frequency(t, v) == pytest.approx(3.3, rel=1e-4)
    assert 2 * math.pi / 20.0 > 0.3  # the bin is ~10% of the frequency


def test_convergence_order_of_a_known_sequence():
    h = np.array([0.25, 0.125, 0.0625])
    assert compare.convergence_order(h, 2.0 + 0.3 * h**2, 2.0) == pytest.approx(2.0)
    assert compare.convergence_order(h, 2.0 - 0.3 * h, 2.0) == pytest.approx(1.0)
    assert math.isnan(compare.convergence_order(h, [2.0, 2.0, 2.0], 2.0))


def test_curve_rms_against_a_reference_curve():
    t = np.linspace(0.0, 10.0, 101)
    assert compare.curve_rms(t, 2 * t, [1.0, 5.0, 9.0], [2.0, 10.0, 18.0], (0.0, 10.0)) == 0.0
    rms = compare.curve_rms(t, 2 * t + 0.18, [1.0, 5.0, 9.0], [2.0, 10.0, 18.0], (0.0, 10.0))
    assert rms == pytest.approx(0.01)


# --- reference theory ------------------------------------------------------------------------


def test_timoshenko_frequency_stored_in_the_benchmark():
    stored = json.loads((default_root() / "timoshenko" / "reference.json").read_text())
    w = theory.timoshenko_cantilever(L=1.0, EI=1.0, kGA=1.0e3, rhoA=1.0, rhoI=1.0e-3)
    assert stored["values"]["omega_timoshenko"]["value"] == pytest.approx(w, rel=1e-10)


def test_timoshenko_tends_to_euler_bernoulli_for_a_slender_beam():
    eb = theory.euler_bernoulli_cantilever(1.0, 1.0, 1.0)
    assert eb == pytest.approx(3.5160152685)
    shear_only = [theory.timoshenko_cantilever(1.0, 1.0, k, 1.0, 1e-9) / eb - 1 for k in (1e3, 1e4)]
    assert -3e-3 < shear_only[0] < 0  # shear softens...
    assert shear_only[1] == pytest.approx(shear_only[0] / 10, rel=0.05)  # ...as EI/(kGA L^2)


# --- the command -----------------------------------------------------------------------------


def test_unknown_benchmark_is_an_input_error_listing_the_valid_names():
    res = CliRunner().invoke(main, ["validate", "no_such_benchmark"])
    assert res.exit_code == 2
    assert "unknown benchmark no_such_benchmark" in _err(res)
    assert "spaghetti3d" in _err(res)
    assert "timoshenko" in _err(res)


def test_a_failing_comparison_exits_1(tmp_path):
    res = CliRunner().invoke(
        main, ["validate", "--suite", str(SYNTHETIC), "--report", str(tmp_path / "rep")]
    )
    assert res.exit_code == 1, _err(res)
    assert "linear momentum x (wrong reference)" in res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("failing")]
    assert lines[0].split()[-1] == "pass"
    assert lines[1].split()[-1] == "FAIL"
    report = (tmp_path / "rep" / "README.md").read_text()
    assert "| failing | linear momentum x (wrong reference) | 0.3 | 0.15 | 0.5 |" in report
    assert (tmp_path / "rep" / "failing.png").stat().st_size > 1000


def test_quick_tier_end_to_end(tmp_path):
    res = CliRunner().invoke(
        main, ["validate", "--quick", "spaghetti3d", "masses_pulse", "--report", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output + _err(res)
    assert "2 benchmarks: 2 passed, 0 failed (" in res.output
    report = (tmp_path / "README.md").read_text()
    assert "Tier: **quick**" in report
    assert "rodsim validate --quick --report" in report
    assert (tmp_path / "spaghetti3d.png").exists()
    assert (tmp_path / "masses_pulse.png").exists()
    assert not list(tmp_path.glob("**/*.h5"))  # results files are scratch


def test_whole_quick_tier_passes():
    """`rodsim validate --quick`, every benchmark: CI keeps the suite passing (about 30 s)."""
    res = CliRunner().invoke(main, ["validate", "--quick"])
    assert res.exit_code == 0, res.output + _err(res)
    assert "17 benchmarks: 17 passed, 0 failed (" in res.output
