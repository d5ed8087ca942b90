"""rodsim from Python: load, change, check and run cases, and read results (docs/python.md).

The functions the ``rodsim`` command runs (rodsim.cli is a thin layer over them), for scripts:
every one takes a case as a path, a rodsim.Case or, where it says so, a prepared case, and
goes through rodsim.run, the one place that wires case -> model -> solver -> writers; a run
here gives the results ``rodsim run`` gives, bit for bit. Stepping a case with loads set from
Python: rodsim.Simulation.
"""

from collections.abc import Callable
from pathlib import Path

from rodsim import run as runner
from rodsim import solvers
from rodsim.case import load
from rodsim.case.load import Case
from rodsim.case_summary import summary
from rodsim.errors import CaseError
from rodsim.integrators import modal
from rodsim.results.arrays import Results, from_frames, read_results
from rodsim.run import Prepared, Result
from rodsim.sequence import EigenResult
from rodsim.terms.user import user_term

__all__ = [
    "buckling",
    "case_from_dict",
    "case_from_yaml",
    "check",
    "load_case",
    "modes",
    "prepare",
    "read_results",
    "run_case",
    "run_in_memory",
    "summary",
    "user_term",
]

Progress = Callable[[float, int, int], None]  # (time, steps done, steps in all)


def load_case(path, overrides=()) -> Case:
    """Read and validate a case file, with ``KEY=VALUE`` overrides as ``--set`` gives them.
    CaseError names the file and the key."""
    return load.load_case(path, overrides)


def case_from_yaml(text: str, overrides=(), *, folder=None, name: str = "case") -> Case:
    """A case from YAML text, as if read from the file <folder>/<name>.yaml (folder: the
    current one by default): relative mesh files are read from folder, and results go to
    <name>.h5 there unless told otherwise. CaseError names it ``<string>``."""
    return load.case_from_text(text, _virtual(folder, name), overrides, name="<string>")


def case_from_dict(data: dict, overrides=(), *, folder=None, name: str = "case") -> Case:
    """A case from a dict of the keys a case file holds (numbers, strings, lists, mappings;
    numpy arrays and tuples are taken as lists), validated as a file would be: the model
    equals that of the same case read from a file. Folder and name as case_from_yaml;
    CaseError names it ``<dict>``. Case.to_dict() gives a case's dict to edit."""
    try:
        text = load.dump_case(data)
    except CaseError as exc:
        raise CaseError(exc.reason, file="<dict>", key=exc.key) from None
    return load.case_from_text(text, _virtual(folder, name), overrides, name="<dict>")


def _virtual(folder, name: str) -> Path:
    return Path.cwd() / f"{name}.yaml" if folder is None else Path(folder) / f"{name}.yaml"


def prepare(case, overrides=(), *, max_memory: int | None = None, terms=()) -> Prepared:
    """Validate a case and build its model and plan (rodsim.run.Prepared: case, setup with the
    model and mesh, plan with dt and the step counts, memory estimate). case: a path or a
    Case; overrides are added. ResourceError if the estimated memory exceeds max_memory
    (bytes; default what the machine has available). terms: user terms (rodsim.user_term,
    docs/python.md "Your own force terms") added to the model, also to a prepared case."""
    if isinstance(case, Prepared):
        if overrides:
            raise CaseError(
                "a prepared case takes no more overrides; give them to rodsim.prepare",
                key="--set",
            )
        return runner.with_terms(case, terms)
    return runner.prepare(case, overrides, max_memory, terms)


def check(case, overrides=(), *, max_memory: int | None = None, terms=()) -> str:
    """What ``rodsim check`` prints before "ok": the model summary (nodes, elements, loads,
    masses, solver, time step, frames, memory) and the node sets. Raises as prepare."""
    prep = prepare(case, overrides, max_memory=max_memory, terms=terms)
    return summary(prep) + f"\nsets      {', '.join(sorted(prep.setup.mesh.sets))}"


def run_case(
    case,
    output=None,
    *,
    overrides=(),
    vtk: bool | None = None,
    progress: Progress | None = None,
    max_memory: int | None = None,
    handle_signals: bool = True,
    restart=None,
    terms=(),
) -> Result:
    """Run a case as ``rodsim run`` does, writing the results file (output; default
    <case stem>.h5 next to the case) and, with vtk (default: the case's output.vtk), the
    ParaView series; progress(time, step, n_steps) is called about every 0.1 s; restart: a
    results file of the case to continue (as ``rodsim run --restart``, docs/restart.md). Returns
    rodsim.run.Result (path, frames, steps, wall time, last frame); read the file with
    read_results. Errors as docs/running.md describes: CaseError, NumericalError,
    ResourceError, Interrupted (a signal, with handle_signals in the main thread). terms: user
    terms (rodsim.user_term) added to the model."""
    prep = prepare(case, overrides, max_memory=max_memory, terms=terms)
    return runner.execute(prep, output, vtk, progress, handle_signals, restart)


def run_in_memory(
    case,
    *,
    overrides=(),
    progress: Progress | None = None,
    max_memory: int | None = None,
    terms=(),
) -> Results:
    """Run a case as ``rodsim run`` does, keeping its frames in memory instead of writing
    files: the Results equal those read_results reads from the file the run would write.
    NumericalError loses the frames (run_case keeps them in its file). terms: user terms."""
    prep = prepare(case, overrides, max_memory=max_memory, terms=terms)
    frames, eigen = [], None
    for f in runner.frames(prep, progress):
        if isinstance(f, EigenResult):  # the result, after the frames
            eigen = f.result
        else:
            frames.append(f)
    c = prep.case
    units = runner.units_attribute(c)
    return from_frames(frames, prep.setup.mesh, c.settings.title, c.text, c.overrides, units, eigen)


def modes(
    case, overrides=(), *, count: int = 10, about: str | None = None, max_memory=None, terms=()
):
    """The `count` lowest natural modes of a case (docs/modal.md): about its equilibrium at
    the full load (an equilibrium case, after its load steps; the default for one) or about
    the reference ("reference"; the default for a dynamic case, its loads at t = 0 in the
    tangent). At most as many modes as free degrees of freedom less one. Returns
    rodsim.integrators.modal.Modes. terms: user terms."""
    prep = prepare(case, overrides, max_memory=max_memory, terms=terms)
    s = prep.case.settings.solver
    about = about or ("equilibrium" if s.static else "reference")
    if about not in ("reference", "equilibrium"):
        raise CaseError(f"expected reference or equilibrium, got {about!r}", key="about")
    if about == "equilibrium" and not s.static:
        raise CaseError(
            "modes about an equilibrium need analysis: equilibrium (the loads then ramp with "
            "the load multiplier)",
            file=prep.case.label,
            key="solver.analysis",
        )
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise CaseError(f"expected a positive integer, got {count!r}", key="count")
    x, rot, quat, load = solvers.modal_state(prep, about)
    free = prep.setup.unheld or prep.setup.model  # the free structure's, rigid modes too
    return modal.modes(free, s.group, x, rot, quat, count, load)


def buckling(
    case, overrides=(), *, count: int = 5, about: str = "reference", max_memory=None, terms=()
):
    """Linear buckling load factors and modes of a case's loads (docs/modal.md, "Buckling")
    about its reference ("reference") or about its equilibrium at load multiplier 1 (a
    preload, "equilibrium", after its load steps); the factors multiply the case's loads.
    Returns rodsim.integrators.modal.Buckling. terms: user terms."""
    prep = prepare(case, overrides, max_memory=max_memory, terms=terms)
    s = prep.case.settings.solver
    if not s.static:
        raise CaseError(
            "linear buckling scales the loads by a load multiplier: set analysis: equilibrium "
            "or buckling",
            file=prep.case.label,
            key="solver.analysis",
        )
    if about not in ("reference", "equilibrium"):
        raise CaseError(f"expected reference or equilibrium, got {about!r}", key="about")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise CaseError(f"expected a positive integer, got {count!r}", key="count")
    if prep.setup.unheld is not None:  # as `analysis: buckling` refuses it
        raise CaseError(
            "linear buckling needs the structure held: the automatic holds of its free rigid "
            "motions would change its stability (docs/mechanisms.md); hold it with boundary "
            "fix entries or supports",
            file=prep.case.label,
            key="boundary",
        )
    eq = solvers.preloaded(prep) if about == "equilibrium" else None
    return solvers.linear_buckling(prep, count, eq)
