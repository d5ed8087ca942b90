"""The implicit scheme's energy ledger (rodsim.integrators.ledger; docs/results.md, "Energy
ledger"): after each accepted step, each share's forces of the step times the step's
increments d = (x_k+1 - x_k, Lambda_k h xi_rot), the work that the scheme's momentum balance
pairs with the kinetic energy (exact for the discrete Lagrange-d'Alembert principle): the
loads at the midpoint g_bar (plus V's change), each term's discrete damping forces
(Term.step_damping), the supports' reactions (minus the residual's forces on supported
components)."""

import numpy as np

from rodsim.integrators import vi_residual as vr
from rodsim.integrators.ledger import (
    COLUMN,
    SUPPORT,
    WORK,
    Ledger,
    hook_args,
    make,
    written,
)
from rodsim.jit import kernel, switch
from rodsim.model import forces
from rodsim.terms import APPLIED


def start(model, x, rot, t: float) -> Ledger:
    """The implicit scheme's ledger of a model starting at (x, rot) at time t."""
    ld = make(model, [], False, vr.make_work(model.terms, model.n_nodes, np.float64))
    ld.potential[0] = forces.external_potential(model.terms, x, rot, t)
    return ld


def _write_step_damping(terms):
    lines = []
    env = {"pairing": _pairing, "zero": _zero, "sn": vr.step_nodes, "wn": vr.work_nodes}
    for i, t in forces.present(terms, "step_damping"):
        env[f"k{i}"] = t.step_damping
        lines += [
            "zero(w.fe, w.te)",
            f"k{i}({hook_args(t)}, sd.strains[{i}], w.end[{i}], w.res[{i}], w.x1, w.r1, w.q1, "
            "w.xb, w.rb, w.qb, xi, sd.h, sd.se3 == 1, w.fe, w.te)",
            f"ld.sums[{COLUMN[i]}] -= pairing(sn(sd), xi, wn(w), w.fe, w.te)",
        ]
    return lines, env


_step_dissipation = written("step_dissipation", "sd, xi, w", _write_step_damping)


@kernel
def _zero(f, tau):
    for a in range(f.shape[0]):
        for k in range(3):
            f[a, k] = 0.0
            tau[a, k] = 0.0


@kernel
def _pairing(sd, xi, w, f, tau):
    """sum f . (x_k+1 - x_k) + tau . Lambda_k h xi_rot over every component (w.x1: the end)."""
    total = 0.0
    for a in range(xi.shape[0]):
        c = vr.spatial_increment(sd, xi, a)
        for k in range(3):
            total += f[a, k] * (w.x1[a, k] - sd.x[a, k]) + tau[a, k] * c[k]
    return total


@kernel
def _support_work(nodes, sd, xi, w, f, tau):
    """The supports' reactions, minus the forces f, tau (N,3) (the residual's at the converged
    step, real or complex) on supported components, times the step's increments."""
    total = 0.0
    for a in range(xi.shape[0]):
        c = vr.spatial_increment(sd, xi, a)
        for k in range(3):
            if nodes.fixed[a, k]:
                total -= f[a, k].real * (w.x1[a, k] - sd.x[a, k])
            if nodes.fixed[a, 3 + k]:
                total -= tau[a, k].real * c[k]
    return total


@kernel
def _dissipation(damped, ld, terms, sd, xi, w):
    if damped is None:
        return
    _step_dissipation(ld, terms, sd, xi, w)


@kernel
def implicit_step(ld, damped, nodes, terms, sd, xi, f, tau, t_end):
    """The implicit scheme's ledger over an accepted step from sd (vi_residual.StepData) with
    the converged step velocity xi (N,6); f, tau: the forces of the step's residual there (for
    the reactions); t_end the step's end time."""
    w = ld.work
    sn, wn = vr.step_nodes(sd), vr.work_nodes(w)
    vr.configurations(sn, xi, wn)
    forces.forces(terms, w.xb, w.rb, w.qb, sd.t, w.f, w.tau, APPLIED)
    ld.sums[WORK] += _pairing(sn, xi, wn, w.f, w.tau)
    v = forces.forces(terms, w.x1, w.r1, w.q1, t_end, w.f2, w.t2, APPLIED)[1]
    ld.sums[WORK] += v - ld.potential[0]
    ld.potential[0] = v
    ld.sums[SUPPORT] += _support_work(nodes, sn, xi, wn, f, tau)
    _dissipation(damped, ld, terms, sd, xi, w)


def accept(run, sd, xi, f, tau, t_end: float) -> None:
    """implicit_step for a running implicit.Implicit (fixed or adaptive steps) after an
    accepted step, before the run's state moves on."""
    m = run.model
    implicit_step(run.ledger, switch(m.terms.damped), m.nodes, m.terms, sd, xi, f, tau, t_end)
