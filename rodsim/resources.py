"""Memory: what a case will need, what the machine allows, and the refusal in between.

A case whose estimate exceeds the limit is refused with ResourceError (exit code 4) before
its large arrays are allocated: generated parts are counted from the case data, before the
mesh is generated; mesh files once they are read (their size bounds what reading takes).

The estimate (``estimate``) is the peak resident memory of the whole process, in bytes:

    BASELINE + n_nodes b_node + n_elements b_element + n_plates b_plate (+ sparse terms),

where each b sums the per-item tables below: the mesh, the model, the scheme's work arrays
and two output frames (the last one is held while the next is computed). The tables are the
bytes of the arrays rodsim keeps per node, rod element and plate, read off their shapes and
dtypes (float64 8 bytes, int64 8, bool 1, complex128 16); tests/test_memory_estimate.py builds
small models and checks every table against the nbytes of the real arrays, so they cannot
drift silently. Arrays made by np.zeros take no resident memory until written: those a run
leaves unwritten are subtracted (EXPLICIT_SE3_ONLY, IMPLICIT_DAMPING_ONLY). The implicit
scheme and equilibrium add the sparse Jacobian (per 6x6 block, one block per coupled node
pair) and SuperLU's factorisation; equilibrium with conservative loads also the banded
Cholesky of its stability check. Not counted: loads, supports and prescribed motions on node
sets (tens of bytes per node of the set) and the temporaries of building the model, which
peak below the run. benchmarks/memory_estimate.py compares the estimate with the measured
peak RSS: 0.98 and 1.01 of it for 1e5- and 1e6-element rods, 0.97 to 1.24 for the implicit
scheme and plates (figures in its docstring).

The limit (``machine_limit``) is the least of: MemAvailable (/proc/meminfo) plus what this
process already holds, or instead ``--max-memory`` when given (it may lower or raise that
advisory limit); the cgroup's memory limit (v2 memory.max, v1 memory.limit_in_bytes); and
RLIMIT_AS less the address space mapped but not resident. The last two are hard limits that
--max-memory cannot exceed. Sizes are shown in binary units (1 GiB = 1024^3 bytes).
"""

import math
import re
import resource
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from rodsim.case import parts
from rodsim.case.settings import CaseSettings, NodeLoad
from rodsim.errors import ResourceError
from rodsim.model.shapes import recovery_points

MiB = 1024**2


class Items(NamedTuple):
    """Bytes per node, per rod element and per plate element."""

    node: int
    element: int
    plate: int


# Interpreter, numpy, scipy, numba, h5py and meshio, the compiled kernels loaded from numba's
# cache, numba's thread pool and the stable step's chunked temporaries: a 10-element run peaks
# at 225 MB, and the intercept of the peaks of 1e5 to 1e6-element rods is 300 MB. The first
# run on a machine also compiles the kernels (a few hundred MB more, once); not counted.
BASELINE = 300 * MiB

# rodsim.mesh.assemble.Mesh: points (N,3) 24 + frames (N,3,3) 72 + the parts' `all` node sets
# 8 per node; conn (E,2) 16 + end_frames (E,2,3,3) 144 + section 8 + part 8 per element;
# plates (P,4) 32 + plate_frames (P,4,3,3) 288 + plate_section 8 + plate_part 8 +
# plate_thickness 8 per plate.
MESH = Items(24 + 72 + 8, 16 + 144 + 8 + 8, 32 + 288 + 8 + 8 + 8)

# rodsim.model.assembly.Model (x0, rot0 and the connectivities are the mesh's arrays):
# mass 8 + inertia (N,3,3) 72 + fixed (N,6) bool 6 + rods.node_ptr 8 per node; per element
# RodElements length 8, c1, c2, gamma0, omega0 (E,3) 96, node_slots (2E,) 16, offset
# (E,2,3,3) 144, offset_q (E,2,4) 64, has_offset 8, and rho_a 8 + rho_i (E,3) 24; per plate
# the PlateElements fields (rodsim.model.plate_kernels): n_nodes_el 8, basis 48, xref 64,
# dn 320, shape 160, weight 32, dnn 256, shear_map 320, eps0 120, kappa0 120, g0 32, w0 32,
# a_mat 72, d_mat 72, s_mat 32, kd 32, k_drill, thickness, area, rho 8 each.
# The stress tables (rodsim.model.stress): the section of each element 8, the thickness and
# allowable stress of each plate 16.
MODEL = Items(8 + 72 + 6 + 8, 8 + 96 + 16 + 144 + 64 + 8 + 8 + 24 + 8, 1752 + 16)

# Explicit scheme (rodsim.integrators.dynamics): StateArrays x 24, rot 72, p, pi, f, tau 96
# per node; Workspace iters 8, lin (N,6,7) 336, quat 32, vel, omg 48 per node and elem
# (E,2,6) 96 per element.
EXPLICIT = Items(192 + 8 + 336 + 32 + 48, 96, 0)
# Arrays allocated with np.zeros take no resident memory until written, and some are written
# only by some runs: the explicit Workspace.lin only on group SE3.
EXPLICIT_SE3_ONLY = Items(336, 0, 0)

# Implicit scheme and equilibrium (rodsim.integrators.implicit): the state 192 (equilibrium:
# x, rot 96 and the residual rows), quat 32, xi 48; the complex128 Work xb, x1, f, tau, and
# the energy correction's fe, te, f2, t2 48 each, rb, r1 144 each, qb, q1 64 each, reaction
# 96; Pattern indptr, col_ptr, color_nodes 24 per node. Per element its complex strains and
# viscous resultants (E,3) x 4, 192; per plate (P,4,3) x 4, (P,4,2) x 2, (P,4) x 2 complex,
# 1152.
IMPLICIT = Items(
    192 + 32 + 48 + 8 * 48 + 2 * 144 + 2 * 64 + 96 + 24, 4 * 48, 4 * 192 + 2 * 128 + 2 * 64
)
# Per 6x6 Jacobian block: data 288 + Pattern indices, col_rows, col_blocks 24.
IMPLICIT_BLOCK = 288 + 24
# Steps and Newton iterations (implicit.take_step, Solver.residual): copies of the
# configuration 128, momenta 48, two step_data's targets 2 x 56, complex residual, post and
# xi 288, their real copies and the reference forces 144 per node; two step_data's strains
# (E,3) x 2 96 per element, (P,4,3) x 2 + (P,4,2) + (P,4) x 2 = 288 per plate.
IMPLICIT_STEP = Items(128 + 48 + 112 + 288 + 144, 96, 2 * 288)
# The strain and resultant arrays above, written only with strain-rate damping (beta > 0).
IMPLICIT_DAMPING_ONLY = Items(0, 4 * 48 + 96, 4 * 192 + 2 * 128 + 2 * 64 + 2 * 288)
# The sparse solve of each Newton iteration, per Jacobian block: the CSC matrix (36 values of
# 8 bytes, 36 row indices of 4) and SuperLU's own memory, which grows with the entries of the
# matrix it factors: 1298 bytes per block (36 entries) on a 2e5-element rod, whose LU factors
# have fewer entries than the matrix. (Turning the blocks into the CSC matrix peaks lower,
# at 860 bytes per block.)
JACOBIAN_CSC = 36 * 12
SUPERLU = 36 * 36
# The LU factors of plates fill in far beyond the matrix's entries: 12 bytes per entry of
# LU_PLATE x dofs^LU_EXPONENT entries, the fit of the peaks of square plates of 100^2 and
# 200^2 quads (60606 and 242406 dofs) with SuperLU's default ordering.
LU_ENTRY = 12
LU_PLATE = 7.0
LU_EXPONENT = 1.43

# One output Frame (rodsim.solvers.output): position, velocity, angular_velocity, linear and angular
# momentum, reaction force and moment (N,3) 168, rotation (N,4) 32, directors (N,3,3) 72 per
# node; force, moment, strain, curvature (E,3) 96 per element; plate membrane, bending (P,3)
# and shear (P,2) 64 + their stresses (P,3,5), von Mises (P,3), largest and utilisation 160
# per plate. While the next frame is computed the last one is still held.
FRAME = Items(168 + 32 + 72, 96, 64 + 160)
# Rod stresses (rodsim.model.stress), with sections that have a shape: the largest von Mises
# stress and the utilisation 16 per element; with output.stresses: points, the stress (R,3)
# and von Mises stress (R,) at each of the R recovery points, 32 R per element.
STRESS_BYTES = 16
POINT_STRESS_BYTES = 32
# Computing a frame: the reactions' forces, moments and quaternions 80 per node, the element
# fields' strains and curvatures 48 per element.
FRAME_WORK = Items(80, 48, 0)

# Equilibrium's stability check (implicit.Solver.positive_definite, conservative loads only):
# a banded Cholesky of the 6N free dofs with the band of the reverse Cuthill-McKee ordering,
# measured 12 (n + 1) dofs for a plate n quads wide (20 x 20, 40 x 40, 40 x 10); the band
# matrix and LAPACK's copy of it, 8 bytes an entry.
BAND_PER_WIDTH = 12
ROD_BAND = 24

MAX_COUNT = 10**15  # counts beyond this are estimated as this (see estimate)


@dataclass(frozen=True)
class Sizes:
    """What the memory depends on: nodes, rod elements, plates (before merging: upper
    bounds), the width of the widest plate part in nodes (the Cholesky band), and whether
    mesh files are still to be read (then the counts leave their parts out)."""

    nodes: int
    elements: int
    plates: int
    width: int = 0
    files: bool = False


@dataclass(frozen=True)
class Settings:
    """kind: explicit | implicit | equilibrium; group: SO3xR3 | SE3; damped: strain-rate
    damping (beta > 0); stability: equilibrium checks the stability of each solution
    (conservative loads) with a banded Cholesky; stresses: rod sections have shapes (their
    stresses are recovered); points: the recovery points kept per element (0: only the
    largest stress)."""

    kind: str
    group: str = "SO3xR3"
    damped: bool = False
    stability: bool = False
    stresses: bool = False
    points: int = 0


@dataclass(frozen=True)
class Estimate:
    """Peak bytes of a run and the sizes they are for."""

    bytes: int
    sizes: Sizes
    settings: Settings


@dataclass(frozen=True)
class Limit:
    """The memory the run may use (bytes; None: no limit known) and where it comes from."""

    bytes: int | None
    source: str


@dataclass(frozen=True)
class Memory:
    """An estimate and the limit it was checked against, for the summary."""

    estimate: Estimate
    limit: Limit


# --- sizes and settings from case data ----------------------------------------------------


def case_sizes(case: CaseSettings) -> Sizes:
    """Sizes of the generated parts of a case (each part kind's sizes in rodsim.case.parts:
    a rod of n elements has n + 1 nodes, an arc n (closed) or n + 1, a rectangle n1 x n2
    plates and (n1 + 1)(n2 + 1) nodes). Mesh files count nothing here (files=True)."""
    nodes = elements = plates = width = 0
    files = False
    for part in case.mesh:
        sizes = parts.kind_of(part)[1].sizes(part)
        if sizes is None:
            files = True
            continue
        nodes += sizes.nodes
        elements += sizes.elements
        plates += sizes.plates
        width = max(width, sizes.width)
    return Sizes(nodes, elements, plates, width, files)


def mesh_sizes(mesh, before: Sizes) -> Sizes:
    """Sizes of a built mesh (rodsim.mesh.assemble.Mesh); the plate width of the generated
    parts, or for plates from files that of a square of as many plates."""
    width = before.width
    if mesh.n_plates and not width:
        width = math.isqrt(mesh.n_plates) + 1
    return Sizes(mesh.n_nodes, mesh.n_elements, mesh.n_plates, width, False)


def case_settings(data: CaseSettings) -> Settings:
    """The solver settings the memory depends on. Equilibrium checks the stability of each
    solution when the loads are conservative (rodsim.integrators.equilibrium.conservative):
    no follower load, moment or pressure."""
    s = data.solver
    kind = s.kind
    shapes = [
        {sec.shape.kind: sec.shape.size}
        for sec in data.sections.values()
        if sec.type == "rod" and sec.shape is not None
    ]
    points = max((len(recovery_points(shape).x) for shape in shapes), default=0)
    return Settings(
        kind,
        s.group,
        s.damping.coefficients[0] > 0.0,
        kind == "equilibrium" and _conservative(data.loads),
        bool(shapes),
        points if data.output.stresses == "points" else 0,
    )


def _conservative(loads) -> bool:
    for spec in loads:
        if not isinstance(spec, NodeLoad):
            continue
        if spec.follower or spec.pressure or any(spec.moment or ()):
            return False
    return True


# --- the estimate -------------------------------------------------------------------------


def _bytes(table: Items, s: Sizes) -> int:
    return table.node * s.nodes + table.element * s.elements + table.plate * s.plates


def jacobian_blocks(s: Sizes) -> int:
    """6x6 blocks of the implicit Jacobian: one per node and per coupled pair both ways: an
    element's two ends, a quad's 6 corner pairs, 2 of them edges shared with a neighbour."""
    return s.nodes + 2 * s.elements + 8 * s.plates


def lu_fill(s: Sizes) -> int:
    """Bytes of the fill of the plates' LU factors (see LU_PLATE)."""
    return int(LU_ENTRY * LU_PLATE * (6.0 * s.plates) ** LU_EXPONENT) if s.plates else 0


def _sparse(s: Sizes, settings: Settings) -> int:
    """Bytes of the implicit scheme and equilibrium: solver, steps and the sparse solve."""
    blocks = jacobian_blocks(s)
    total = _bytes(IMPLICIT, s) + _bytes(IMPLICIT_STEP, s) + IMPLICIT_BLOCK * blocks
    if not settings.damped:
        total -= _bytes(IMPLICIT_DAMPING_ONLY, s)
    solve = (JACOBIAN_CSC + SUPERLU) * blocks + lu_fill(s)
    if settings.stability:
        band = BAND_PER_WIDTH * s.width if s.plates else ROD_BAND
        solve = max(solve, 2 * 8 * 6 * s.nodes * (band + 1))
    return total + solve


def estimate(sizes: Sizes, settings: Settings) -> Estimate:
    """Peak resident bytes of a run (see the module docstring)."""
    # the schema leaves element counts to this estimate: keep absurd ones (1e300 x 1e300
    # plates) in the range of floats; they are refused all the same
    s = Sizes(
        *(min(n, MAX_COUNT) for n in (sizes.nodes, sizes.elements, sizes.plates, sizes.width))
    )
    if settings.kind == "explicit":
        scheme = _bytes(EXPLICIT, s)
        if settings.group != "SE3":
            scheme -= _bytes(EXPLICIT_SE3_ONLY, s)
    else:
        scheme = _sparse(s, settings)
    frame = _bytes(FRAME, s)
    if settings.stresses:
        frame += (STRESS_BYTES + POINT_STRESS_BYTES * settings.points) * s.elements
    frames = 2 * frame + _bytes(FRAME_WORK, s)
    total = BASELINE + _bytes(MESH, s) + _bytes(MODEL, s) + scheme + frames
    return Estimate(int(total), sizes, settings)


# --- the machine's limit ------------------------------------------------------------------


def most(sizes: Sizes, every: list[Settings]) -> Estimate:
    """The largest estimate over the settings of a case's analysis steps (docs/steps.md): an
    implicit step after an explicit one needs the Jacobian's memory, checked before anything
    is written, not when that step starts."""
    return max((estimate(sizes, settings) for settings in every), key=lambda e: e.bytes)


def _read(path: Path) -> str | None:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def meminfo_available(path=Path("/proc/meminfo")) -> int | None:
    """MemAvailable of a /proc/meminfo file, in bytes (the file says kB, meaning KiB)."""
    text = _read(path)
    found = re.search(r"^MemAvailable:\s*(\d+)\s*kB", text or "", re.M)
    return int(found.group(1)) * 1024 if found else None


def process_memory(path=Path("/proc/self/status")) -> tuple[int, int] | None:
    """(VmSize, VmRSS) of a /proc/<pid>/status file, in bytes."""
    text = _read(path) or ""
    size = re.search(r"^VmSize:\s*(\d+)\s*kB", text, re.M)
    rss = re.search(r"^VmRSS:\s*(\d+)\s*kB", text, re.M)
    return (int(size.group(1)) * 1024, int(rss.group(1)) * 1024) if size and rss else None


def _limit_value(text: str | None) -> int | None:
    """A cgroup limit file's value: bytes, or None for 'max' (v2), v1's 'unlimited' (a page
    count near 2^63) or an unreadable file."""
    value = (text or "").strip()
    if not value.isdigit():
        return None
    return int(value) if int(value) < 2**60 else None


def cgroup_limit(
    root=Path("/sys/fs/cgroup"), membership=Path("/proc/self/cgroup")
) -> tuple[int, str] | None:
    """The tightest memory limit of the process's cgroup and its ancestors, and the file name:
    cgroup v2 (membership line ``0::/path``, ``root/path/memory.max``) or v1 (line
    ``n:...memory...:/path``, ``root/memory/path/memory.limit_in_bytes``). Inside a container
    the process's path is often not under the mounted root, whose own files then apply."""
    found = []
    for line in (_read(membership) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            base, name = Path(root), "memory.max"
        elif "memory" in parts[1].split(","):
            base, name = Path(root) / "memory", "memory.limit_in_bytes"
        else:
            continue
        here = Path(parts[2].strip() or "/")
        for folder in (here, *here.parents):
            value = _limit_value(_read(base / str(folder).lstrip("/") / name))
            if value is not None:
                found.append((value, f"cgroup {name}"))
    return min(found) if found else None


def machine_limit(
    max_memory: int | None = None,
    *,
    meminfo=Path("/proc/meminfo"),
    cgroup_root=Path("/sys/fs/cgroup"),
    membership=Path("/proc/self/cgroup"),
    status=Path("/proc/self/status"),
    address_space: int | None = None,
) -> Limit:
    """The memory a run may use (see the module docstring). MemAvailable leaves out what this
    process already holds, which the estimate counts: it is added back (VmRSS). RLIMIT_AS
    bounds the address space, of which VmSize - VmRSS is mapped but not resident (numba, thread
    stacks, libraries): that part is taken off. address_space: RLIMIT_AS (None: the
    process's own soft limit)."""
    vm = process_memory(status)
    size, rss = vm if vm else (0, 0)
    found = []
    if max_memory is not None:
        found.append((int(max_memory), "--max-memory"))
    else:
        available = meminfo_available(meminfo)
        if available is not None:
            found.append((available + rss, "MemAvailable"))
    group = cgroup_limit(cgroup_root, membership)
    if group:
        found.append(group)
    if address_space is None:
        address_space = resource.getrlimit(resource.RLIMIT_AS)[0]
    if address_space != resource.RLIM_INFINITY and address_space >= 0:
        found.append((max(0, address_space - (size - rss)), "RLIMIT_AS"))
    if not found:
        return Limit(None, "none known")
    value, source = min(found)
    return Limit(value, source)


# --- sizes as text ------------------------------------------------------------------------

_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:([kmgtp])(i?b)?|(b))?\s*$", re.I)


def parse_size(text: str) -> int:
    """Bytes of a size: a number of bytes (``1000000``), or with a unit: K, M, G, T, P and
    KiB ... PiB are powers of 1024, kB ... PB powers of 1000 (``4G``, ``500M``, ``2GiB``,
    ``1.5GB``); case does not matter. ValueError unless positive."""
    found = _SIZE.match(str(text))
    if not found:
        raise ValueError(
            f"expected a size such as 4G, 500M, 2GiB or a number of bytes, got {text!r}"
        )
    number, prefix, suffix, _ = found.groups()
    power = "kmgtp".index(prefix.lower()) + 1 if prefix else 0
    base = 1000 if suffix and suffix.lower() == "b" else 1024
    value = int(float(number) * base**power)
    if value <= 0:
        raise ValueError(f"expected a size above 0 bytes, got {text!r}")
    return value


def format_size(n: float) -> str:
    """Bytes in binary units with 3 significant digits: 512 B, 1.5 KiB, 23.1 GiB."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n < 999.5 or unit == "EiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _count(n: int) -> str:
    """1234 -> '1234', 100000000 -> '1e8', 123456789 -> '1.23e8' (3 digits, cut, not rounded:
    from the digits, since the count may be beyond floats)."""
    digits = str(int(n))
    if len(digits) <= 6:
        return digits
    return f"{float(digits[0] + '.' + digits[1:3]):g}e{len(digits) - 1}"


def describe(s: Sizes) -> str:
    """The items of the model that take the memory: '1e8 rod elements, 1e8 nodes'."""
    parts = [
        f"{_count(s.elements)} rod elements" if s.elements else "",
        f"{_count(s.plates)} plate elements" if s.plates else "",
        f"{_count(s.nodes)} nodes",
    ]
    return ", ".join(p for p in parts if p)


def summary_line(memory: Memory) -> str:
    """The summary's memory line: 'memory    about 1.2 GiB (limit 20.5 GiB: MemAvailable)'."""
    limit = memory.limit
    shown = (
        f"limit {format_size(limit.bytes)}: {limit.source}"
        if limit.bytes is not None
        else "no limit known"
    )
    return f"memory    about {format_size(memory.estimate.bytes)} ({shown})"


# --- the check ----------------------------------------------------------------------------

_ADVICE = {
    "--max-memory": "reduce the model or raise --max-memory",
    "MemAvailable": "reduce the model, free memory, or give --max-memory to allow more (with "
    "swap, say)",
}


def check(need: Estimate, limit: Limit, file: str | None = None) -> Memory:
    """Memory(need, limit), or ResourceError if the estimate exceeds the limit."""
    if limit.bytes is not None and need.bytes > limit.bytes:
        advice = _ADVICE.get(
            limit.source,
            f"reduce the model or raise the {limit.source} limit (--max-memory cannot exceed it)",
        )
        raise ResourceError(
            f"the model needs about {format_size(need.bytes)} "
            f"({describe(need.sizes)}, {need.settings.kind}) but "
            f"{format_size(limit.bytes)} are available ({limit.source}); "
            f"{advice}",
            file=file,
        )
    return Memory(need, limit)
