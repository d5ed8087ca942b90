"""Stepping a case from Python: rodsim.Simulation (docs/python.md).

A Simulation holds the solver that ``rodsim run`` builds for the case (rodsim.solvers.start) and
steps it the same way, so that its frames equal the results file's bit for bit; between
steps, Python reads the state and changes loads and prescribed motions (rodsim.controls, which
write the Inputs), takes the whole state (``state()``, a rodsim.state.State) and starts again
from one (``reset``).
The steps themselves stay in compiled code: ``advance(n)`` runs them in compiled calls of about
0.1 s of wall time (rodsim.solvers.next_chunk, as ``rodsim run`` does), so that Ctrl-C stops a
long advance within a second at a step boundary (rodsim.interrupts.deferred_sigint).
"""

import copy
import dataclasses
import logging
import time as wallclock

import numpy as np

from rodsim import api_checks, controls, interrupts, solvers
from rodsim import run as runner
from rodsim import state as states
from rodsim.api import prepare
from rodsim.errors import ArgumentError, CaseError
from rodsim.integrators import equilibrium
from rodsim.results.arrays import Results, from_frames
from rodsim.results.frame import Frame
from rodsim.solvers.output import dynamic_frame, static_frame
from rodsim.state import Inputs, State

__all__ = ["Inputs", "Simulation", "State", "StateView"]

log = logging.getLogger(__name__)


class StateView:
    """Simulation.state: the current state as read-only views of the solver's own arrays (so
    they change as it steps; copy what you keep): x (N,3) node positions; rot (N,3,3) nodal
    frames Lambda, columns d1 d2 d3; p (N,3) linear momenta; pi (N,3) angular momenta about
    the node; all spatial (global axes). Equilibrium: p and pi are zero. Calling it,
    ``sim.state()``, returns the whole State (rodsim.state.State, copies), which
    Simulation.reset starts again from."""

    __slots__ = ("x", "rot", "p", "pi", "_take")

    def __init__(self, x, rot, p, pi, take):
        self.x, self.rot, self.p, self.pi = x, rot, p, pi
        self._take = take

    def __call__(self) -> State:
        return self._take()

    def __iter__(self):  # x, rot, p, pi = sim.state
        return iter((self.x, self.rot, self.p, self.pi))

    def __repr__(self) -> str:
        return f"<StateView of {len(self.x)} nodes: x, rot, p, pi; call it for a State>"


def _own_model(prep: runner.Prepared) -> runner.Prepared:
    """prep with a copy of its model (a fresh one: its terms' state and inputs too), for a
    prepared case given by the caller: the controls change the inputs in place and the steps
    the terms' state, which must not reach that case (another Simulation, or a run of it)."""
    model = prep.setup.model
    fields = {f.name: copy.deepcopy(getattr(model, f.name)) for f in dataclasses.fields(model)}
    model = dataclasses.replace(model, **fields)
    return dataclasses.replace(prep, setup=dataclasses.replace(prep.setup, model=model))


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


class Simulation:
    """A case ready to step: Simulation(case, overrides) with case a path, a rodsim.Case (see
    rodsim.load_case) or a prepared case (rodsim.prepare); terms: user terms (rodsim.user_term,
    docs/python.md "Your own force terms"). Dynamics: step(), advance(n), advance_to(t);
    equilibrium: solve(). Attributes: kind (explicit | implicit | equilibrium), prepared,
    case, model, mesh, plan; loads and prescribed (rodsim.controls)."""

    def __init__(self, case, overrides=(), *, max_memory: int | None = None, terms=()):
        prep = prepare(case, overrides, max_memory=max_memory, terms=terms)
        if isinstance(case, runner.Prepared):  # the caller's arrays: steps and controls change
            prep = _own_model(prep)  # the model's state and inputs
        self.prepared = prep
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
        self._inputs = states.inputs_of(self.model)
        data, setup = prep.case.settings, prep.setup
        self.loads = controls.load_controls(
            data, setup.load_rows, self._inputs, self._loads_changed
        )
        self.prescribed = controls.motion_controls(
            data, setup.motion_rows, self.model.prescribed, self._inputs
        )
        log.debug("simulation of %s: %s, %d nodes", prep.case.label, self.kind, self.model.n_nodes)

    def _views(self) -> StateView:
        s = self._solver
        if self.kind == "equilibrium":
            zeros = np.zeros_like(s.x)
            arrays = (s.x, s.rot, zeros, zeros)
        else:
            arrays = (s.state.x, s.state.rot, s.state.p, s.state.pi)
        return StateView(*(_read_only(a) for a in arrays), self._take_state)

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
    def state(self) -> StateView:
        """Views x, rot, p, pi of the current state (StateView); ``state()``: a State."""
        return self._state

    def _take_state(self) -> State:
        """The whole current state (rodsim.state.State, copies), with the inputs in force."""
        kind = solvers.SOLVERS[self.kind]
        s = kind.state(self._solver, self._solved)
        return dataclasses.replace(s, inputs=self._inputs.copy())

    @property
    def inputs(self) -> Inputs:
        """The inputs now in force (rodsim.state.Inputs): views of the arrays the compiled
        kernels read, which the controls (loads, prescribed, gravity) write; read them, copy
        them (``inputs.copy()``), give a copy to reset. Write them through the controls."""
        return self._inputs

    def reset(self, state: State, inputs: Inputs | None = None) -> None:
        """Start again from `state` (a State from state(), of this case): the configuration,
        momenta, clock, the terms' state and the solver's own (the forces the explicit step
        starts from, the implicit scheme's first guess, the adaptive controller and its
        Jacobian). With inputs (an Inputs copy), those are set too. Stepping on then takes
        the steps the run that gave `state` took from it, bit for bit, when the inputs are
        those in force when it was taken (state.inputs; else the next step starts from the
        forces of the inputs now in force, as after a control's change). ArgumentError,
        with nothing changed, for a State or Inputs of another case or kind."""
        self._check(state)
        if inputs is not None and not isinstance(inputs, Inputs):
            raise ArgumentError(
                f"expected rodsim.Inputs (Simulation.inputs.copy()), got {type(inputs).__name__}",
                key="inputs",
            )
        kind = solvers.SOLVERS[self.kind]
        try:
            if inputs is not None:
                states.Inputs.assign(self._inputs.copy(), inputs)  # checked before any change
            kind.resume(self._solver, state)
        except ValueError as exc:
            raise ArgumentError(f"this state does not fit the simulation: {exc}",
                                key="state") from None  # fmt: skip
        if inputs is not None:
            self._inputs.assign(inputs)
        self._stale = state.inputs is None or not state.inputs.equals(self._inputs)
        self._solved = state.count if self.kind == "equilibrium" else 0
        self._last = None
        kind.counters(self._solver, True)

    def _check(self, state) -> None:
        """ArgumentError unless state is a State of this simulation's kind whose arrays have
        the names, shapes and types of its own (older restart files may lack the optional
        ones, rodsim.state.OPTIONAL)."""
        if not isinstance(state, State):
            raise ArgumentError(
                f"expected a rodsim.State (Simulation.state()), got {type(state).__name__}",
                key="state",
            )
        if state.kind != self.kind:
            raise ArgumentError(
                f"the state is of a{'n' * (state.kind[:1] in 'aeiou')} {state.kind} solver, "
                f"this simulation's is {self.kind}",
                key="state",
            )
        mine, theirs = self._take_state().arrays(), state.arrays()
        extra = sorted(set(theirs) - set(mine))
        missing = sorted(set(mine) - set(theirs) - set(states.OPTIONAL))
        if extra or missing:
            what = "; ".join(
                f"{how} {', '.join(names)}"
                for how, names in (("it holds", extra), ("it lacks", missing))
                if names
            )
            raise ArgumentError(f"the state is of another model: {what}", key="state")
        for name, a in theirs.items():
            a = np.asarray(a)
            if a.shape != mine[name].shape or a.dtype != mine[name].dtype:
                raise ArgumentError(
                    f"the state's {name} is {a.dtype} {a.shape}, this simulation's "
                    f"{mine[name].dtype} {mine[name].shape}: a state of another model",
                    key="state",
                )

    @property
    def gravity(self) -> np.ndarray:
        """(3,) the acceleration of gravity now in force, before its time function (the
        gravity entries of the case add up to it)."""
        return self._inputs.terms["loads"]["gravity"].copy()

    @gravity.setter
    def gravity(self, value) -> None:
        self._inputs.terms["loads"]["gravity"][:] = api_checks.finite_vector(value, "gravity")
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
        energies, reactions, stress resultants; rodsim.results.frame.Frame). Its solver
        counters cover the steps since the previous frame(), as the file's cover those since
        the previous frame."""
        self._sync()
        s = self._solver
        if self.kind == "equilibrium":
            return static_frame(self.model, s.x, s.rot, s.load, self._last)
        frame = dynamic_frame(s, self.dt)
        solvers.SOLVERS[self.kind].counters(s, True)  # the next frame's cover the steps after
        return frame

    def results(self, frames) -> Results:
        """Results (arrays) of frames taken with frame()."""
        case = self.case
        return from_frames(frames, self.mesh, case.settings.title, case.text, case.overrides)
