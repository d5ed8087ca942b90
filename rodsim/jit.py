"""The one numba decorator rodsim's kernels use, and compile-time switches.

``error_model="numpy"`` drops the per-division ZeroDivisionError checks of the Python error
model (a division by zero gives inf/NaN, which the integrators detect); fastmath stays off so
NaN checks and the carefully ordered small-angle series keep their meaning. ``cache=True``
compiles once per machine (rodsim.kernel_cache says where).

Compile only what a model uses. Numba types (and so compiles) every call in a kernel, taken
or not, unless the branch is removed before typing. Two ways to remove one:

- an argument that is None: in ``if arg is None: return ...`` the rest of the kernel is not
  typed when the kernel is called with None (numba's dead-branch pruning). Absent force terms
  are None in the kernels' view (rodsim.model.forces.make_terms);
- a choice between two kernels: ``either(off, on)(switch, *args)`` calls off(*args) when
  switch is None and on(*args) otherwise, and types only the one it calls. Switches are
  ``switch(flag)``: True or None.
"""

import inspect
import warnings

from numba import njit, types
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import overload

from rodsim import kernel_cache

# The sums written at typing time (rodsim.model.forces) are inlined: numba's IR check then
# reports a branch's result variable as "not in scope" at the join, though every path assigns
# it before use; printed at each cold compile of an implicit model, it told users nothing.
warnings.filterwarnings("ignore", r"variable .* is not in scope", NumbaIRAssumptionWarning)

_OPTIONS = {"cache": True, "error_model": "numpy"}

kernel_cache.configure()  # before the first kernel is defined: numba reads it then


def kernel(fn=None, **options):
    """njit with rodsim's options; use as @kernel or @kernel(inline="always", parallel=True)."""
    if fn is None:
        return lambda f: kernel(f, **options)
    dispatcher = njit(**{**_OPTIONS, **options})(fn)
    kernel_cache.make_safe(dispatcher)
    return dispatcher


def switch(flag) -> bool | None:
    """A compile-time switch: True when flag holds, else None."""
    return True if flag else None


def either(off, on):
    """A kernel-callable choice(switch, *args) -> off(*args) if switch is None, else on(*args).

    Only the kernel chosen is typed and compiled, once per switch type, and the choice is
    inlined (no call is left at run time); the caller's cache keeps the choice (the switch's
    type is part of the caller's signature). off and on take the same arguments."""
    names = ", ".join(inspect.signature(off.py_func).parameters)
    # numba inlines no *args function: the stub, its typing and its implementation are written
    # out with the targets' arity
    source = f"""
def choice(switch, {names}):
    raise TypeError("either(): call from a kernel")

def typing(switch, {names}):
    target = off if isinstance(switch, (types.NoneType, types.Omitted)) else on
    scope = {{"target": target}}
    exec("def impl(switch, {names}):\\n    return target({names})\\n", scope)
    return scope["impl"]
"""
    scope = {"off": off, "on": on, "types": types}
    exec(source, scope)
    choice = scope["choice"]
    overload(choice, inline="always")(scope["typing"])
    choice.__name__ = f"either_{off.__name__}_{on.__name__}"
    return choice


def written(name: str, params: str, write):
    """A kernel-callable `name(<params>)` whose body is written at typing time: write(types)
    -> (source lines, the names they use), types the arguments' numba types by parameter
    name; inlined into its caller (rodsim.model.forces writes the sums over the terms a model
    holds this way, so an absent term gets no line)."""
    # numba matches the typing function's signature to the stub's: both written out
    names = tuple(p.strip() for p in params.split(","))
    scope = {"write": write, "build": _build_written, "names": names}
    exec(
        f"def {name}({params}):\n    raise TypeError('call from a kernel')\n\n"
        f"def typing({params}):\n    return build(write, {params!r}, names, ({params},))\n",
        scope,
    )
    overload(scope[name], inline="always")(scope["typing"])
    return scope[name]


def _build_written(write, params: str, names: tuple, types: tuple):
    lines, env = write(dict(zip(names, types, strict=True)))
    body = "\n".join("    " + line for line in lines) or "    pass"
    exec(f"def impl({params}):\n{body}\n", env)
    return env["impl"]
