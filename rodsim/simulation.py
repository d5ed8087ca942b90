"""Stepping a case from Python: rodsim.Simulation (docs/python.md).

A Simulation holds the solver that ``rodsim run`` builds for the case (rodsim.solvers.start) and
steps it the same way, so that its frames equal the results file's bit for bit; between
steps, Python reads the state and changes loads and prescribed motions (rodsim.controls).
The steps themselves stay in compiled code: ``advance(n)`` runs them in compiled calls of about
0.1 s of wall time (rodsim.solvers.next_chunk, as ``rodsim run`` does), so that Ctrl-C stops a
long advance within a second at a step boundary (rodsim.interrupts.deferred_sigint).
"""

import dataclasses
import logging
import time as wallclock
from typing import NamedTuple

import numpy as np

from rodsim import api_checks, controls, interrupts, solvers
from rodsim import run as runner
from rodsim.api import prepare
from rodsim.errors import CaseError
from rodsim.integrators import equilibrium
from rodsim.output import dynamic_frame, static_frame
from rodsim.results import Results, from_frames
from rodsim.writers.frame import Frame

log = logging.getLogger(__name__)


class State(NamedTuple):
    """The current state, read-only views of the solver's own arrays (so they change as it
    steps; copy what you keep): x (N,3) node positions; rot (N,3,3) nodal frames Lambda,
    columns d1 d2 d3; p (N,3) linear momenta; pi (N,3) angular momenta about the node; all
    spatial (global axes). Equilibrium: p and pi are zero."""

    x: np.ndarray
    rot: np.ndarray
    p: np.ndarray
    pi: np.ndarray


def _own_controls(prep: runner.Prepared) -> runner.Prepared:
    """prep with a model whose packed loads and prescribed motions are copies: the controls
    change them in place, which must not reach the prepared case (another Simulation, or a
    run of it) that the model came from."""
    model = prep.setup.model
    model = dataclasses.replace(
        model,
        loads=type(model.loads)(*(a.copy() for a in model.loads)),
        prescribed=type(model.prescribed)(*(a.copy() for a in model.prescribed)),
    )
    return dataclasses.replace(prep, setup=dataclasses.replace(prep.setup, model=model))


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


class Simulation:
    """A case ready to step: Simulation(case, overrides) with case a path, a rodsim.Case (see
    rodsim.load_case) or a prepared case (rodsim.prepare). Dynamics: step(), advance(n),
    advance_to(t); equilibrium: solve(). Attributes: kind (explicit | implicit | equilibrium),
    prepared, case, model, mesh, plan; loads and prescribed (rodsim.controls)."""

    def __init__(self, case, overrides=(), *, max_memory: int | None = None):
        prep = prepare(case, overrides, max_memory=max_memory)
        self.prepared = prep = _own_controls(prep)
        self.kind = prep.plan.kind
        if self.kind in ("modal", "buckling"):
            call = {"modal": "rodsim.modes", "buckling": "rodsim.buckling"}[self.kind]
            raise CaseError(
                f"a {self.kind} analysis has no steps to take: use {call} (docs/modal.md)",
                key="solver.analysis",
            )
        if prep.steps:
            raise CaseError(
                "rodsim.Simulation steps one analysis, and this case has analysis steps: run "
                "it with rodsim.run_case or run_in_memory, or give overrides=('steps=null',) "
                "for its case-level settings (docs/steps.md)",
                key="steps",
            )
        self._solver = solvers.start(prep)
        self._stale = False  # loads changed since the forces were computed
        self._last = None  # equilibrium: the LoadStep that reached the state
        self._solved = 0  # equilibrium: load steps solved
        self._state = self._views()
        data, setup = prep.case.settings, prep.setup
        self.loads = controls.load_controls(
            data, setup.load_rows, self.model.loads, self._loads_changed
        )
        self.prescribed = controls.motion_controls(data, setup.motion_rows, self.model.prescribed)
        log.debug("simulation of %s: %s, %d nodes", prep.case.label, self.kind, self.model.n_nodes)

    def _views(self) -> State:
        s = self._solver
        if self.kind == "equilibrium":
            zeros = np.zeros_like(s.x)
            return State(_read_only(s.x), _read_only(s.rot), _read_only(zeros), _read_only(zeros))
        st = s.state
        return State(*(_read_only(a) for a in (st.x, st.rot, st.p, st.pi)))

    # --- what it is --------------------------------------------------------------------------

    @property
    def case(self):
        return self.prepared.case

    @property
    def model(self):
        return self.prepared.setup.model

    @property
    def mesh(self):
        return self.prepared.setup.mesh

    @property
    def plan(self):
        return self.prepared.plan

    @property
    def sets(self) -> dict:
        """Node set name -> sorted node indices (K,)."""
        return self.mesh.sets

    @property
    def dt(self) -> float:
        """The time step (equilibrium: the first pseudo-time step)."""
        return self.plan.dt

    @property
    def n_steps(self) -> int:
        """Steps (equilibrium: load steps) of the case's run to its end, t_end (load 1)."""
        return self.plan.n_steps

    # --- where it is -------------------------------------------------------------------------

    @property
    def time(self) -> float:
        """The current time (equilibrium: the load multiplier of the last solve)."""
        return self._solver.load if self.kind == "equilibrium" else self._solver.time

    @property
    def steps(self) -> int:
        """Steps taken (equilibrium: load steps solved)."""
        return self._solved if self.kind == "equilibrium" else self._solver.step

    @property
    def state(self) -> State:
        return self._state

    @property
    def gravity(self) -> np.ndarray:
        """(3,) the acceleration of gravity now in force, before its time function (the
        gravity entries of the case add up to it)."""
        return self.model.loads.gravity.copy()

    @gravity.setter
    def gravity(self, value) -> None:
        self.model.loads.gravity[:] = api_checks.finite_vector(value, "gravity")
        self._loads_changed()

    def _loads_changed(self) -> None:
        self._stale = True

    def _sync(self) -> None:
        """Bring what depends on the loads up to date after a change: the forces a step
        starts from (explicit), the energies, the stability test (equilibrium)."""
        if not self._stale:
            return
        solvers.SOLVERS[self.kind].refresh(self._solver, self.model)
        self._stale = False

    # --- stepping ----------------------------------------------------------------------------

    def step(self) -> None:
        """One time step."""
        self.advance(1)

    def advance(self, n: int) -> None:
        """n time steps, in compiled calls of about 0.1 s of wall time (one for n = 1).
        NumericalError if the solution fails (the state is then that of the failed step).
        Ctrl-C (SIGINT) raises KeyboardInterrupt at the end of the current call, within about
        a second: the state is then that of the last step taken (``steps``, ``time``), as
        consistent as between two calls, and a further advance goes on from it; a second
        Ctrl-C also waits for the end of the current call (a fraction of a second)."""
        if self.kind == "equilibrium":
            raise CaseError(
                "an equilibrium analysis has no time steps: use solve()", key="solver.analysis"
            )
        n = api_checks.count(n, "n", done=self.steps)
        self._sync()
        step = solvers.SOLVERS[self.kind].advance
        if n <= 1:  # one step: one call, without the signal handler's cost (step())
            step(self._solver, n)
            return
        with interrupts.deferred_sigint() as watch:
            done, chunk = 0, 1
            while done < n:
                k = min(chunk, n - done)
                started = wallclock.perf_counter()
                # Python acts on a signal at the first bytecode after the compiled call returns,
                # which may be inside the solver's bookkeeping (its step and time counters): a
                # second Ctrl-C raising there would leave the state a chunk ahead of them. The
                # deferral records it and raises after the chunk is whole.
                with watch.deferred():
                    step(self._solver, k)
                done += k
                chunk = solvers.next_chunk(k, wallclock.perf_counter() - started)
                if watch.requested():  # at a step boundary: the state is whole
                    raise KeyboardInterrupt

    def advance_to(self, t: float) -> int:
        """Advance to the step nearest time t (not before now); returns the steps taken.
        Interrupted (KeyboardInterrupt) as advance: ``time`` is then the time reached."""
        if self.kind == "equilibrium":
            self.advance(0)  # the equilibrium's CaseError
        n = api_checks.steps_to(t, self.time, self.dt, self.steps)
        self.advance(n)
        return n

    def solve(self, load: float | None = None) -> equilibrium.LoadStep:
        """Equilibrium at load multiplier `load` from the current state (default: the case's
        next load step, (k + 1) / load_steps after k solves); returns its LoadStep (Newton
        iterations, pseudo steps, residual). NumericalError if it is not reached."""
        if self.kind != "equilibrium":
            raise CaseError(
                "solve() finds static equilibrium: set solver.analysis: equilibrium",
                key="solver.analysis",
            )
        if load is None:
            load = (self._solved + 1) / self.plan.n_steps
        load = api_checks.finite(load, "load")
        self._sync()
        self._last = equilibrium.solve_load_step(self._solver, load)
        self._solved += 1
        return self._last

    # --- output ------------------------------------------------------------------------------

    def frame(self) -> Frame:
        """The output record of the current state, as a results file holds it (velocities,
        energies, reactions, stress resultants; rodsim.writers.frame.Frame). Its solver
        counters cover the steps since the previous frame(), as the file's cover those since
        the previous frame."""
        self._sync()
        s = self._solver
        if self.kind == "equilibrium":
            return static_frame(self.model, s.x, s.rot, s.load, self._last)
        frame = dynamic_frame(s, self.dt)
        s.max_iterations = 0
        if self.kind == "implicit":
            s.residual = 0.0
        return frame

    def results(self, frames) -> Results:
        """Results (arrays) of frames taken with frame()."""
        case = self.case
        return from_frames(frames, self.mesh, case.settings.title, case.text, case.overrides)
