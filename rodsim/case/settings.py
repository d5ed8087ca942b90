"""The typed, frozen settings of a case file: what the validator (rodsim.case.v1) gives.

Each dataclass mirrors one record of the case file key for key (a key that is a Python keyword
gets a trailing underscore: a rod's ``from`` is ``from_``); rodsim.case.schema.Record checks the
match when the schema is built, so the two cannot drift apart. Values are already checked and
converted to the case's unit system; optional keys that are absent are None. Time functions
arrive as rodsim.model.timefunc.TimeFunction. Everything after the case boundary reads these,
never the raw YAML.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from rodsim.case.units import UnitSystem
from rodsim.model.rayleigh import rayleigh
from rodsim.model.shapes import SHAPES
from rodsim.model.timefunc import TimeFunction

Vec3 = tuple[float, float, float]
Pair = tuple[float, float]

# --- mesh parts and node sets ---------------------------------------------------------------


@dataclass(frozen=True)
class RodPart:
    # KEY: the part kind's name in `mesh:`; NESTED: written as {KEY: {...}}, else KEY is a
    # key of the part's own mapping (file: ...)
    KEY: ClassVar[str] = "rod"
    NESTED: ClassVar[bool] = True
    name: str
    from_: Vec3
    to: Vec3
    elements: int
    section: str
    up: Vec3 | None


@dataclass(frozen=True)
class ArcPart:
    KEY: ClassVar[str] = "arc"
    NESTED: ClassVar[bool] = True
    name: str
    center: Vec3
    radius: float
    start: Vec3
    normal: Vec3
    angle: float  # degrees
    elements: int
    section: str
    up: Vec3 | None

    @property
    def closed(self) -> bool:
        return abs(abs(self.angle) - 360.0) < 1e-9


@dataclass(frozen=True)
class RectanglePart:
    KEY: ClassVar[str] = "rectangle"
    NESTED: ClassVar[bool] = True
    name: str
    origin: Vec3
    size: Pair
    elements: tuple[int, int]
    section: str
    e1: Vec3
    e2: Vec3


@dataclass(frozen=True)
class FilePart:
    KEY: ClassVar[str] = "file"
    NESTED: ClassVar[bool] = False
    file: str
    name: str
    sections: Mapping[str, str]  # cell set -> section name
    section: str | None
    up: Vec3 | None


Part = RodPart | ArcPart | RectanglePart | FilePart


def part_path(i: int, part: Part) -> tuple:
    """The key path of mesh[i]: mesh[i].rod for a nested kind, mesh[i] for a file."""
    return ("mesh", i, part.KEY) if part.NESTED else ("mesh", i)


@dataclass(frozen=True)
class NodeSet:
    """A `sets:` entry: kind near, box, nodes or union, with its value."""

    kind: str
    value: object


# --- sections ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Material:
    E: float
    nu: float
    rho: float
    allowable: float | None


@dataclass(frozen=True)
class Shape:
    """A cross-section shape of rodsim.model.shapes.SHAPES and its dimensions (docs/
    stresses.md): rectangle [width, height], circle radius, tube [outer, inner] radius,
    i_section and channel [h, b, tw, tf], box and angle [h, b, t]."""

    kind: str
    size: float | tuple[float, ...]

    def __post_init__(self):
        if self.kind == "tube" and not self.size[1] < self.size[0]:
            raise ValueError(
                f"expected an inner radius below the outer one, got [{self.size[0]:g}, "
                f"{self.size[1]:g}]"
            )
        SHAPES[self.kind].properties(self.size)  # a profile's walls must fit (ValueError)


@dataclass(frozen=True)
class RodSectionSettings:
    """Either the resultant form (EA ... rhoI, optional rhoJ) or the material form (material,
    shape, optional shear_factor); the validator checks that exactly one is complete."""

    type: Literal["rod"]
    EA: float | None
    GA: Pair | None
    GJ: float | None
    EI: Pair | None
    rhoA: float | None
    rhoI: Pair | None
    rhoJ: float | None
    material: Material | None
    shape: Shape | None
    shear_factor: float | None


@dataclass(frozen=True)
class PlateSectionSettings:
    type: Literal["plate"]
    material: Material
    thickness: float
    shear_factor: float


# --- boundary conditions, loads, supports, masses, initial state -------------------------------


@dataclass(frozen=True)
class Prescribe:
    displacement: tuple[float | None, float | None, float | None] | None
    rotation: Vec3 | None
    time: TimeFunction | None


@dataclass(frozen=True)
class Boundary:
    set: str
    fix: Literal["all"] | tuple[str, ...] | None
    prescribe: Prescribe | None

    def held_dofs(self, dofs: tuple[str, ...]) -> list[int]:
        """Indices into dofs (ux ... rz) that this entry holds."""
        if self.fix is not None:
            return list(range(6)) if self.fix == "all" else [dofs.index(d) for d in self.fix]
        p = self.prescribe
        held = [k for k, c in enumerate(p.displacement or ()) if c is not None]
        return held + ([3, 4, 5] if p.rotation is not None else [])


@dataclass(frozen=True)
class NodeLoad:
    set: str
    force: Vec3 | None
    moment: Vec3 | None
    follower: bool
    pressure: float | None
    edge_force: Vec3 | None
    line_force: Vec3 | None
    line_moment: Vec3 | None
    surface_force: Vec3 | None
    body_force: Vec3 | None
    frame: Literal["global", "section"]
    time: TimeFunction | None
    group: str | None = None


@dataclass(frozen=True)
class GravityLoad:
    gravity: Vec3
    time: TimeFunction | None
    group: str | None = None


Load = NodeLoad | GravityLoad


@dataclass(frozen=True)
class Spring:
    set: str
    spring: Vec3 | None
    rotational_spring: Vec3 | None
    dashpot: Vec3 | None
    rotational_dashpot: Vec3 | None
    frame: Literal["global", "section"]


@dataclass(frozen=True)
class Foundation:
    foundation: str
    modulus: Vec3
    damping: Vec3 | None
    frame: Literal["global", "section"]


@dataclass(frozen=True)
class Mass:
    set: str
    mass: float
    inertia: Vec3 | tuple[Vec3, Vec3, Vec3] | None


@dataclass(frozen=True)
class InitialField:
    set: str
    velocity: Vec3 | None
    angular_velocity: Vec3 | None
    along: str | None
    profile: TimeFunction | None


@dataclass(frozen=True)
class ShapeFile:
    """initial.shape entry `{file: ...}`: every node's position (and rotation, where the file
    has d1 d2 d3) from a mesh file of the case's nodes (rodsim.case.initial_shape)."""

    file: str


@dataclass(frozen=True)
class ShapeArc:
    center: Vec3
    radius: float
    start: Vec3
    normal: Vec3
    angle: float  # degrees


@dataclass(frozen=True)
class ShapeHelix:
    center: Vec3
    axis: Vec3
    start: Vec3
    pitch: float
    turns: float


@dataclass(frozen=True)
class Formulas:
    """Three formulas of the arc length s (rodsim.case.expression), as written."""

    x: str | float
    y: str | float
    z: str | float


@dataclass(frozen=True)
class ShapePart:
    """initial.shape entry `{part: ...}`: a rod part started on a curve, formulas of s, or
    its reference stretched; twisted about its tangent (rodsim.case.initial_shape)."""

    part: str
    arc: ShapeArc | None
    helix: ShapeHelix | None
    points: tuple[Vec3, ...] | None
    position: Formulas | None
    displacement: Formulas | None
    stretch: float
    twist: float


@dataclass(frozen=True)
class Initial:
    velocity: Vec3
    angular_velocity: Vec3
    center: Vec3
    fields: tuple[InitialField, ...] = ()
    from_: str | None = None
    frame: int = -1
    shape: tuple[ShapeFile | ShapePart, ...] = ()


@dataclass(frozen=True)
class Imperfection:
    from_: str
    mode: int
    amplitude: float
    kind: Literal["geometry", "displacement"]


# --- solver and output -------------------------------------------------------------------------


@dataclass(frozen=True)
class Damping:
    """solver.damping: the coefficients as given, or fitted to target ratios."""

    strain_rate: float
    mass: float
    ratios: tuple[tuple[float, float], ...] | None = None

    @property
    def coefficients(self) -> tuple[float, float]:
        """(beta, alpha): strain-rate and mass damping, fitted to the target ratios if given
        (rodsim.model.rayleigh)."""
        if self.ratios:
            return rayleigh(self.ratios)
        return self.strain_rate, self.mass


@dataclass(frozen=True)
class Newton:
    tol: float
    max_iter: int


@dataclass(frozen=True)
class AdaptiveSettings:
    """solver.adaptive (docs/implicit_scheme.md, "Adaptive steps")."""

    tol: float
    energy_tol: float
    dt_min: float | Literal["auto"]
    dt_max: float | Literal["auto"]
    grow: float


@dataclass(frozen=True)
class PathSettings:
    """solver.equilibrium.path (docs/path_following.md): the method, the node set and
    translation component whose displacement ends (arc_length) or controls (displacement) the
    path, its end value, the most steps, the first arc length."""

    method: Literal["arc_length", "displacement"]
    set: str
    component: Literal["ux", "uy", "uz"]
    to: float
    steps: int
    length: float | Literal["auto"]


@dataclass(frozen=True)
class EquilibriumSettings:
    tol: float
    load_steps: int
    max_steps: int
    eigenvalue: bool
    path: PathSettings | None = None


@dataclass(frozen=True)
class ModalSettings:
    """solver.modal and solver.buckling: how many modes, about which state."""

    modes: int
    about: Literal["reference", "equilibrium"]


@dataclass(frozen=True)
class Solver:
    analysis: str
    scheme: str
    group: str
    order: int
    dt: float | Literal["auto"]
    safety: float
    t_end: float | None
    damping: Damping
    newton: Newton
    equilibrium: EquilibriumSettings
    parallel: bool | Literal["auto"]
    rotation_tol: float
    modal: ModalSettings
    buckling: ModalSettings
    adaptive: AdaptiveSettings | None = None
    conserve_energy: bool | Literal["auto"] = "auto"

    @property
    def conserving(self) -> bool:
        """The implicit scheme's steps are energy-consistent: conserve_energy, or auto with
        adaptive steps."""
        if self.conserve_energy == "auto":
            return self.adaptive is not None
        return bool(self.conserve_energy)

    @property
    def eigen(self) -> ModalSettings | None:
        """The settings of a modal or buckling analysis (None for the others)."""
        return {"modal": self.modal, "buckling": self.buckling}.get(self.analysis)

    @property
    def static(self) -> bool:
        """Loads follow the load multiplier (equilibrium, buckling, and the equilibrium a
        modal analysis is about)."""
        return self.analysis in ("equilibrium", "buckling") or (
            self.analysis == "modal" and self.modal.about == "equilibrium"
        )

    @property
    def load_steps(self) -> bool:
        """The equilibrium's load steps are run (equilibrium, and a modal or buckling analysis
        about the equilibrium)."""
        eigen = self.eigen
        return self.analysis == "equilibrium" or (eigen is not None and eigen.about != "reference")

    @property
    def kind(self) -> str:
        """The solver that runs the case (rodsim.solvers.SOLVERS): the scheme of a dynamic
        analysis, equilibrium, modal or buckling."""
        if self.eigen is not None:
            return self.analysis
        return "equilibrium" if self.static else self.scheme


@dataclass(frozen=True)
class Output:
    every: int | None
    interval: float | None
    vtk: bool
    compression: str
    stresses: str
    fields: tuple[str, ...] | None = None  # None: every dataset (rodsim.results.layout)


@dataclass(frozen=True)
class Step:
    """One entry of `steps:` (docs/steps.md): its name and the keys it merges over the
    case's (as written; each step's merged settings are a CaseSettings of their own)."""

    name: str | None
    solver: Mapping
    combination: Mapping[str, float] | None
    output: Mapping


@dataclass(frozen=True)
class CaseSettings:
    """A whole case file."""

    rodsim: int
    title: str
    units: UnitSystem | None
    mesh: tuple[Part, ...]
    sections: Mapping[str, RodSectionSettings | PlateSectionSettings]
    sets: Mapping[str, NodeSet]
    merge_tolerance: float | None
    boundary: tuple[Boundary, ...]
    supports: tuple[Spring | Foundation, ...]
    loads: tuple[Load, ...]
    combination: Mapping[str, float] | None
    masses: tuple[Mass, ...]
    initial: Initial
    imperfection: Imperfection | None
    solver: Solver
    output: Output
    steps: tuple[Step, ...] | None = None
    # links between two nodes (rodsim.case.connectors.Connector)
    connectors: tuple = ()
