"""A user term from Python functions: checked arguments, the functions compiled for the
signatures the kernels call (rodsim.terms.user; docs/python.md, "Your own force terms").

The kernels call a user's function through numba's first-class function type, so it is
compiled here, once per signature, with rodsim's options (error_model="numpy": a division by
zero gives inf or NaN, which the schemes detect) and kept in the kernel cache where its source
file allows (a function typed at the prompt is compiled in every process).
"""

import sys
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numba import njit, types
from numba.core.dispatcher import Dispatcher
from numba.core.types import WrapperAddressProtocol

from rodsim import kernel_cache
from rodsim.errors import ArgumentError
from rodsim.terms.contract import APPLIED, ROLES

NODES = types.Array(types.int64, 2, "C")
PARAMS = types.Array(types.float64, 2, "C")
KINDS = (("float64", types.float64), ("complex128", types.complex128))


def forces_signature(dtype):
    """dtype(nodes (S,M) int64, params (S,K) float64, x (N,3), rot (N,3,3), quat (N,4),
    t float64, f (N,3), tau (N,3)): the energy. Arrays of any layout (the schemes pass views)."""
    a2, a3 = types.Array(dtype, 2, "A"), types.Array(dtype, 3, "A")
    return dtype(NODES, PARAMS, a2, a3, a2, types.float64, a2, a2)


def damping_signature(dtype):
    """none(nodes, params, x, rot, quat, vel (N,3), omg (N,3), f, tau)."""
    a2, a3 = types.Array(dtype, 2, "A"), types.Array(dtype, 3, "A")
    return types.none(NODES, PARAMS, a2, a3, a2, a2, a2, a2, a2)


class Compiled(WrapperAddressProtocol):
    """A user function compiled for one signature, as the kernels call it: numba types it
    FunctionType(signature) (the wrapper address protocol) and passes the address of its C
    wrapper, so a compiled caller holds no trace of which function it is. term: the UserTerm
    it belongs to. Calling it from Python calls the compiled function."""

    def __init__(self, dispatcher, signature):
        self.dispatcher = dispatcher
        self._signature = signature
        result = dispatcher.get_compile_result(signature)
        name = result.fndesc.llvm_cfunc_wrapper_name
        self._address = result.library.get_pointer_to_function(name)
        self.term = None

    def __wrapper_address__(self) -> int:
        return self._address

    def signature(self):
        return self._signature

    def __call__(self, *args):
        return self.dispatcher(*args)

    def __deepcopy__(self, memo):
        return self  # compiled code: shared, never changed (a Simulation copies its model)

    def __repr__(self) -> str:
        return f"<{self.dispatcher.py_func.__qualname__} compiled for {self._signature}>"


def _dispatcher(fn, cache: bool = True):
    """(dispatcher, whether cached): fn (a Python function or a numba dispatcher) under
    rodsim's options, cached where its source file allows, for a function of a module Python
    can import again (numba's cache entry names the module; one loaded by hand, not in
    sys.modules, would leave an entry that fails to load elsewhere)."""
    py = fn.py_func if isinstance(fn, Dispatcher) else fn
    if cache and getattr(py, "__module__", None) in sys.modules:
        try:
            d = njit(cache=True, error_model="numpy")(py)
        except RuntimeError:  # no file to cache against (the prompt, exec)
            pass
        else:
            kernel_cache.make_safe(d)
            return d, True
    return njit(error_model="numpy")(py), False


def _reason(exc: Exception) -> str:
    """The first lines of a numba error, without its highlighting."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(("During:", "File ", "^"))]
    text = " ".join(lines[:4])
    return text if len(text) < 600 else text[:600] + " ..."


def _compile(fn, hook: str, name: str, signature) -> tuple | None:
    """(float64 variant, complex128 variant) of fn compiled for signature(dtype)."""
    if fn is None:
        return None
    if not callable(fn):
        raise ArgumentError(
            f"user term {name!r}: {hook} must be a function, got {type(fn).__name__}", key=hook
        )
    d, cached = _dispatcher(fn)
    try:
        return _variants(d, signature)
    except _Failed as exc:  # numba's errors: typing, lowering, unsupported
        kind, sig, error = exc.variant
        if cached:
            try:  # a stale or foreign cache entry fails to load: compile here, uncached
                return _variants(_dispatcher(fn, cache=False)[0], signature)
            except _Failed as again:
                kind, sig, error = again.variant
        raise ArgumentError(
            f"user term {name!r}: its {hook} function does not compile for {kind} "
            f"configurations ({hook}{_arguments(sig)}): {_reason(error)}",
            key=hook,
        ) from None


def _variants(d, signature) -> tuple:
    """(float64, complex128) Compiled variants of the dispatcher d; an exception carries
    `variant` (kind, signature, the error) of the one that failed."""
    out = []
    for kind, dtype in KINDS:
        sig = signature(dtype)
        try:
            d.compile(sig)
        except Exception as exc:
            raise _Failed((kind, sig, exc)) from None
        out.append(Compiled(d, sig))
    d.disable_compile()  # Python calls use these two (arrays of other layouts convert)
    return tuple(out)


class _Failed(Exception):
    def __init__(self, variant):
        super().__init__(str(variant[2]))
        self.variant = variant


def _arguments(sig) -> str:
    names = {
        9: "(nodes, params, x, rot, quat, vel, omg, f, tau)",
        8: "(nodes, params, x, rot, quat, t, f, tau) -> energy",
    }
    return names.get(len(sig.args), "")


@dataclass(frozen=True, eq=False)
class UserTerm:
    """A user term (rodsim.user_term): name, role (INTERNAL | APPLIED | GROUND), nodes (S,M)
    int64, params (S,K) float64, forces and damping (float64 and complex128 Compiled, damping
    None without), pairs (P,2) int64 or None (every two nodes of an entry), stiffness and
    rotational_stiffness (S,) bounds or None (the tangent at the reference), conservative."""

    name: str
    role: int
    nodes: np.ndarray
    params: np.ndarray
    forces: tuple
    damping: tuple | None = None
    pairs: np.ndarray | None = None
    stiffness: np.ndarray | None = None
    rotational_stiffness: np.ndarray | None = None
    conservative: bool = True

    def coupled(self) -> np.ndarray:
        """(P,2) int64 the node pairs it couples: its pairs, else every two nodes of an entry."""
        if self.pairs is not None:
            return self.pairs
        m = self.nodes.shape[1]
        two = [self.nodes[:, [i, j]] for i, j in combinations(range(m), 2)]
        return np.concatenate([np.zeros((0, 2), dtype=np.int64), *two]).astype(np.int64)


def _indices(value, what: str, name: str, ndim: int) -> np.ndarray:
    a = np.asarray(value)
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise ArgumentError(
            f"user term {name!r}: {what} must be node indices (integers), got {a.dtype}", key=what
        )
    a = a.astype(np.int64).reshape(-1, 1) if a.ndim == 1 and ndim == 2 and what == "nodes" else a
    if a.ndim != 2 or (what == "pairs" and a.shape[1] != 2) or a.shape[1] < 1:
        shape = "(S,) or (S, M)" if what == "nodes" else "(P, 2)"
        raise ArgumentError(
            f"user term {name!r}: {what} must have the shape {shape}, got {a.shape}", key=what
        )
    if a.size and a.min() < 0:
        raise ArgumentError(f"user term {name!r}: {what} holds a negative index", key=what)
    return np.array(a, dtype=np.int64, order="C")  # its own copy: later changes do not reach it


def _floats(value, what: str, name: str, rows: int, shape2d: bool) -> np.ndarray:
    try:
        a = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentError(
            f"user term {name!r}: {what} must be numbers, got {type(value).__name__}", key=what
        ) from None
    if a.ndim == 0 and not shape2d:
        a = np.full(rows, float(a))
    if shape2d and a.ndim == 1:
        a = a.reshape(rows, -1) if a.size == rows else a
    want = 2 if shape2d else 1
    if a.ndim != want or a.shape[0] != rows:
        shape = "(S, K)" if shape2d else "a number or (S,)"
        raise ArgumentError(
            f"user term {name!r}: {what} must be {shape} with S = {rows} (one per entry of "
            f"nodes), got the shape {a.shape}",
            key=what,
        )
    if not np.all(np.isfinite(a)) or (not shape2d and np.any(a < 0)):
        kind = "finite" if shape2d else "finite and >= 0"
        raise ArgumentError(f"user term {name!r}: {what} must be {kind}", key=what)
    return np.ascontiguousarray(a)


def user_term(
    name: str,
    *,
    forces,
    nodes,
    params=None,
    role: str = "internal",
    pairs=None,
    stiffness=None,
    rotational_stiffness=None,
    damping=None,
    conservative: bool | None = None,
) -> UserTerm:
    """A force term written in Python (docs/python.md, "Your own force terms"), for
    rodsim.Simulation(case, terms=[...]) and rodsim.run_case(..., terms=[...]).

    nodes (S,) or (S,M) ints: the node(s) of each of its S entries; params (S,K) floats
    (or (S,): one each; None: none) their parameters; forces(nodes, params, x, rot, quat, t,
    f, tau) -> energy adds the entries' forces and spatial moments to f, tau (N,3) at the
    positions x (N,3), frames rot (N,3,3) and quaternions quat (N,4) at time t (equilibrium:
    the load multiplier) and returns their energy; role internal (elements: joins the nodes of
    an entry), applied (loads: path following and buckling scale them) or ground (springs to
    the ground: reactions). damping(nodes, params, x, rot, quat, vel, omg, f, tau) adds damping
    forces of the velocities vel and angular velocities omg (N,3). pairs (P,2): the node pairs
    its forces couple (default: every two nodes of an entry). stiffness, rotational_stiffness:
    a number or (S,): bounds on the stiffness an entry adds (force per length, moment per
    radian) for the explicit stable step (default: the tangent at the reference, by complex
    step). conservative: whether the forces are minus the gradient of the energy returned
    (default: yes, but no for applied loads). Both functions are compiled here, for float64
    and complex128 configurations (the implicit Jacobian is by complex step: write them
    analytic, branches on real parts only). ArgumentError for arguments that do not fit or a
    function that does not compile."""
    if not isinstance(name, str) or not name.strip():
        raise ArgumentError(f"a user term's name must be a string, got {name!r}", key="name")
    if role not in ROLES:
        raise ArgumentError(
            f"user term {name!r}: role must be one of {', '.join(ROLES)}, got {role!r}",
            key="role",
        )
    if forces is None:
        raise ArgumentError(f"user term {name!r}: forces is required", key="forces")
    idx = _indices(nodes, "nodes", name, 2)
    rows = idx.shape[0]
    if rows == 0:
        raise ArgumentError(f"user term {name!r}: nodes is empty", key="nodes")
    par = np.zeros((rows, 0)) if params is None else _floats(params, "params", name, rows, True)
    bounds = [
        None if v is None else _floats(v, what, name, rows, False)
        for what, v in (("stiffness", stiffness), ("rotational_stiffness", rotational_stiffness))
    ]
    if bounds[0] is None and bounds[1] is not None:
        bounds[0] = np.zeros(rows)
    if bounds[1] is None and bounds[0] is not None:
        bounds[1] = np.zeros(rows)
    term = UserTerm(
        name,
        ROLES[role],
        idx,
        par,
        _compile(forces, "forces", name, forces_signature),
        _compile(damping, "damping", name, damping_signature),
        None if pairs is None else _indices(pairs, "pairs", name, 2),
        *bounds,
        bool(ROLES[role] != APPLIED if conservative is None else conservative),
    )
    for c in (*term.forces, *(term.damping or ())):
        c.term = term
    return term
