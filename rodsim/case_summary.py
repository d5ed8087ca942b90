"""The model summary that ``rodsim run`` and ``rodsim check`` print (docs/running.md): the
model, its loads (per entry, with groups and factors), masses, the solver and each analysis
step's plan, stresses, units and the estimates; and the reaction totals after a run."""

import numpy as np

from rodsim import estimates, resources, solvers
from rodsim.case.settings import GravityLoad
from rodsim.integrators.planning import split_steps
from rodsim.model import variants
from rodsim.model.forces import load_totals
from rodsim.model.mechanism import vector_text
from rodsim.results.frame import Frame, written
from rodsim.terms import GROUND, INTERNAL, TERMS


def _bound(value, auto: str) -> str:
    return auto if value == "auto" else f"{value:.6g}"


def _split_note(prep) -> str:
    """', 2 split at load kinks' when steps hold kinks (docs/explicit_scheme.md)."""
    n = split_steps(prep.setup.model.kinks, prep.plan.dt, prep.plan.n_steps)
    return f", {n} split at load kinks" if n else ""


def summary(prep) -> str:
    """The one-screen model summary printed by ``rodsim run`` and ``rodsim check``."""
    d, m = prep.case.settings, prep.setup.model
    mesh = prep.setup.mesh
    lines = [
        f"case      {prep.case.path}" + (f"  ({d.title})" if d.title else ""),
        f"model     {m.n_nodes} nodes, "
        + "".join(f"{c}, " for c in counts(m, INTERNAL))
        + f"{len(mesh.part_names)} parts, {len(set(mesh.section_names))} sections, "
        f"mass {m.mass.sum():.6g}",
        f"supports  {int(m.fixed.any(axis=1).sum())} nodes with fixed dofs"
        + "".join(f", {c}" for c in counts(m, GROUND)),
        _loads_line(prep),
        _masses_line(prep),
    ]
    if prep.steps:
        for k, (name, sp) in enumerate(prep.steps):
            lines.append(f"step {k + 1:<4} {name}: {_combination(sp, k)}")
            lines += ["  " + line for line in _solver_lines(sp, k)]
    else:
        lines += _solver_lines(prep, 0)
    lines += _stress_line(prep)
    if d.units is not None:
        lines.append(f"units     {d.units.as_attribute()}")
    lines += [f"note      {note}" for note in mesh.notes]
    if prep.memory:
        lines.append(resources.summary_line(prep.memory))
    lines += estimates.summary_lines(prep)
    if prep.overrides:
        lines.append("overrides " + ", ".join(prep.overrides))
    return "\n".join(lines)


def counts(model, role: int) -> list[str]:
    """The summary's counts of the terms of `role` ("4 rod elements", "2 on elastic
    supports"): each term's `count`, in TERMS order, those with nothing to say left out."""
    out = []
    for term in TERMS:
        if term.count is not None and term.role & role:
            text = term.count(term.arrays(model))
            if text:
                out.append(text)
    return out


def _stress_line(prep) -> list[str]:
    """What the run says of stresses (docs/stresses.md): which rod sections have none, said
    once here rather than as made-up numbers in the file."""
    bare = sorted(name for name, sec in prep.setup.sections.items() if sec.geometry is None)
    shaped = len(prep.setup.sections) - len(bare)
    out = []
    if shaped:
        what = prep.case.settings.output.stresses
        out.append(
            f"stresses  rods: von Mises at {prep.setup.model.stress.n_points} recovery points "
            f"per section (output.stresses: {what})"
        )
    if bare:
        out.append(
            f"stresses  none for rod sections {', '.join(bare)}: given by stiffnesses, they "
            "have no shape to recover stresses on (give material and shape)"
        )
    return out


def _loads_line(prep) -> str:
    """The summary's loads: the count of `loads:` entries, the resultant force and moment
    about the origin of all but gravity, and gravity's force, in the reference configuration
    at t = 0 (equilibrium: at the full load, multiplier 1), time functions included; then,
    with more than one entry, each entry's own (its set's nodes and elements)."""
    d, m = prep.case.settings, prep.setup.model
    t = 1.0 if d.solver.static else 0.0
    force, moment, weight = load_totals(m.terms, m.x0, m.rot0, t)
    line = (
        f"loads     {_count(len(d.loads))}; at {'load 1' if t else 't = 0'}: "
        f"force {vector_text(force)}, moment about the origin {vector_text(moment)}, "
        f"gravity {vector_text(weight)}"
    )
    if len(d.loads) < 2:
        return line
    for i, (spec, rows) in enumerate(zip(d.loads, prep.setup.load_rows, strict=True)):
        if isinstance(spec, GravityLoad):
            continue
        f, mo, _ = load_totals(variants.entry_loads(m, rows).terms, m.x0, m.rot0, t)
        group = f" ({spec.group} x {rows.factor:g})" if spec.group is not None else ""
        line += (
            f"\n  loads[{i}] on {spec.set}{group}: force {vector_text(f)}, moment {vector_text(mo)}"
        )
    return line


def _masses_line(prep) -> str:
    """The summary's masses: the model's total (what the nodes carry), the point masses' share
    (each `masses:` entry at every node of its set) and the rest, the structure's."""
    d, m, sets = prep.case.settings, prep.setup.model, prep.setup.mesh.sets
    point = sum(pm.mass * len(sets[pm.set]) for pm in d.masses)
    total = float(m.mass.sum())
    return (
        f"masses    total {total:.6g}: structure {total - point:.6g}, point masses "
        f"{point:.6g} ({_count(len(d.masses))})"
    )


def _count(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def reaction_totals(frame: Frame):
    """(force, moment about the origin) (3,) each that the supports exert at a frame (its
    nodes' reactions summed), or None where it has none (or output.fields left them out)."""
    written_both = written(frame.reaction_force) and written(frame.reaction_moment)
    if not written_both or not np.any(frame.reaction_force):
        return None
    force = frame.reaction_force.sum(axis=0)
    moment = (np.cross(frame.position, frame.reaction_force) + frame.reaction_moment).sum(axis=0)
    return force, moment


def _combination(prep, k: int) -> str:
    """A step's load-group factors, or what its loads are."""
    if k and prep.case.settings.solver.analysis == "modal":
        return "the loads acting at the end of the step before"
    if prep.factors:
        return "combination " + ", ".join(f"{g} {v:g}" for g, v in prep.factors.items())
    return "the case's loads"


def _solver_lines(prep, k: int) -> list[str]:
    """The summary's solver, seed, damping and time or load stepping lines of one analysis
    (step k of a case with steps, docs/steps.md)."""
    d, p = prep.case.settings, prep.plan
    s = d.solver
    label = (
        f"the {s.modal.modes} lowest modes" if k and s.eigen else solvers.SOLVERS[p.kind].label(s)
    )
    lines = [
        f"solver    {s.analysis}, {label}, group {s.group}" + (", parallel" if p.parallel else "")
    ]
    if d.imperfection is not None:
        imp = d.imperfection
        lines.append(
            f"seed      mode {imp.mode} of {imp.from_}, amplitude {imp.amplitude:g}, as "
            + (
                "a stress-free imperfect reference"
                if imp.kind == "geometry"
                else "an initial displacement"
            )
        )
    beta, alpha = s.damping.coefficients
    if beta or alpha:
        fitted = ", ".join(f"{z:g} at {f:g}" for f, z in s.damping.ratios or ())
        lines.append(
            f"damping   strain_rate {beta:.6g}, mass {alpha:.6g}"
            + (f" (fitted to the ratios {fitted})" if fitted else "")
        )
    if s.eigen is not None:
        what = "modes" if p.kind == "modal" else "buckling factors"
        about = f"the state step {k} left" if k else f"the {s.eigen.about}"
        lines.append(f"{p.kind:<9} the {s.eigen.modes} lowest {what} about {about} (docs/modal.md)")
    if k and s.eigen is not None:
        lines.append("output    no frame, the modes")
    elif s.equilibrium.path is not None:
        pa = s.equilibrium.path
        first = "auto" if pa.length == "auto" else f"{pa.length:g}"
        lines += [
            f"path      {pa.method}: the factor of the loads at multiplier 1 follows "
            f"{pa.component} of {pa.set} to {pa.to:g}, at most {pa.steps} steps"
            + (f", first length {first}" if pa.method == "arc_length" else "")
            + f", tolerance {s.equilibrium.tol:.3g} (docs/path_following.md)",
            "output    one frame per path step, time the arc length, load_factor the factor",
        ]
    elif s.load_steps:
        eq = s.equilibrium
        lines += [
            f"load      {p.n_steps} load steps to multiplier 1, tolerance {eq.tol:.3g}, "
            f"pseudo-time from h {p.dt:.3g} ({p.dt / p.stable_dt:.3g} x stable-step "
            f"estimate {p.stable_dt:.6g}), at most {eq.max_steps} per load step",
            f"output    {p.n_frames} frames, one per load step",
        ]
    elif s.eigen is not None:
        what = "modes" if p.kind == "modal" else "buckling modes"
        lines.append(f"output    1 frame (the reference), then the {what}")
    elif s.adaptive is not None:
        a = s.adaptive
        lines += [
            f"time      t_end {s.t_end:.6g}, adaptive steps from {p.first:.6g} "
            f"({p.first / p.stable_dt:.3g} x stable-step estimate {p.stable_dt:.6g}), "
            f"tol {a.tol:.3g}, steps "
            f"{_bound(a.dt_min, '1e-6 x the first')} to {_bound(a.dt_max, 'the interval')}"
            + (
                f", energy-conserving, energy_tol {a.energy_tol:.3g}"
                if s.conserving
                else ", not energy-conserving"
            ),
            f"output    {p.n_frames} frames, every {p.dt:.6g}",
        ]
    else:
        lines += [
            f"time      t_end {s.t_end:.6g}, dt {p.dt:.6g} "
            f"({p.dt / p.stable_dt:.3g} x stable-step estimate {p.stable_dt:.6g}), "
            f"{p.n_steps} steps"
            + (", energy-conserving" if s.scheme == "implicit" and s.conserving else "")
            + _split_note(prep),
            f"output    {p.n_frames} frames, every {p.steps_per_frame} steps",
        ]
        if p.collapse:  # the explicit step collapsed (rodsim.integrators.planning)
            lines.append(f"warning   {p.collapse}")
    return lines
