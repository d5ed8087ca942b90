"""The record of one results-file dataset (docs/results.md) and the words the dataset table
(rodsim.results.table_mesh, rodsim.results.table_frames) and the layout rule
(rodsim.results.layout) share: when a dataset is in the file, what output.fields may leave out,
and how a ragged per-frame dataset is stored.

Ragged per-frame datasets (layout 1.10; docs/results.md "Ragged datasets"): a dataset whose
number of rows changes from frame to frame is stored flat, the frames' rows one after the
other, with a companion dataset <path>_end (F,) int64 holding where each frame's rows end:
frame k's rows are rows end[k-1]:end[k] (from 0 for k = 0). Appending a frame only grows both
along their first axis, like every other per-frame dataset, so a kill between flushes loses
the newest frame only, and no capacity need be known in advance (a count with rows padded to
a capacity would need one, or a resize of every frame when a frame has more).
"""

from typing import NamedTuple

# when a dataset is in the file
ALWAYS = "always"
RODS = "rods"  # the mesh has rod elements (E > 0)
PLATES = "plates"  # the mesh has plates (P > 0)
ROD_STRESS = "rod stresses"  # rods, and sections with a shape (R > 0 recovery points)
POINT_STRESS = "point stresses"  # rod stresses, and output.stresses: points
TERM = "term"  # the model has the term that declares it (Dataset.term): Term.datasets

SETS = "mesh/sets"  # one dataset per node set, named after the set

# output.fields (docs/results.md, "Choosing the datasets"): the per-frame datasets of these
# groups may be left out, all but the nodes' positions and rotations (the motion itself, which
# every reader and the ParaView series draw). What else a frame holds (time, steps, energies,
# solver counters, total momenta) is a few scalars and always written.
# (and every per-frame dataset a term declares: its group, TERM_GROUPS, with GROUP/*)
CHOOSABLE_GROUPS = ("nodes", "rods", "plates")
ALWAYS_WRITTEN = ("nodes/position", "nodes/rotation")
FIELDS_ATTR = "fields"  # file attribute: the choosable datasets the run chose (layout 1.7)
POINT_STRESSES_ATTR = "point_stresses"  # file attribute: output.stresses: points (layout 1.7)

END_SUFFIX = "_end"  # a ragged dataset's companion: where each frame's rows end
# the attribute of a ragged dataset naming its companion (readers tell ragged ones by it)
FRAME_END_ATTR = "frame_end"


class Dataset(NamedTuple):
    """One dataset of the layout.

    path: HDF5 path; ``{name}`` stands for each key of a dict-valued source.
    shape: per frame for per-frame datasets (everything outside mesh/; the file adds the frame
    axis F in front), whole for mesh/ datasets: ints and the sizes N (nodes), E (rod
    elements), P (plate elements), K (nodes of the set).
    source: the Frame attribute (per-frame) or Mesh attribute (mesh/) written; "terms" for a
    term's dataset (Frame.terms[path]).
    units: in the case's own consistent units ("1": dimensionless, "index": 0-based).
    description: also the dataset's "description" attribute in the file.
    present: ALWAYS, RODS, PLATES, ROD_STRESS, POINT_STRESS, or TERM (term: the term's name).
    optional: readers accept files without it although it is written ALWAYS (it came after
    the first files of the layout); datasets added by a minor version must set it.
    dtype: f8 for every per-frame dataset but the flag solver/off_schedule (i8).
    names: Mesh attribute holding the names that an integer code indexes (attribute "names").
    since: the layout_minor that added an optional dataset (0: during layout 1.0).
    term: the rodsim.terms term that declares it (Term.datasets); None: the layout's own.
    ragged: a per-frame dataset whose first axis (its size letter) changes from frame to
    frame: stored flat, (rows of all frames, *shape[1:]), with end_path (F,) int64 (see the
    module docstring). Term datasets only (layout 1.10).
    """

    path: str
    shape: tuple
    source: str
    units: str
    description: str
    present: str = ALWAYS
    optional: bool = False
    dtype: str = "f8"
    names: str | None = None
    since: int = 0
    term: str | None = None
    ragged: bool = False

    @property
    def per_frame(self) -> bool:
        return not self.path.startswith("mesh/")

    @property
    def choosable(self) -> bool:
        """Whether output.fields may leave it out (CHOOSABLE_GROUPS, a term's own)."""
        group = self.path.partition("/")[0]
        ours = group in CHOOSABLE_GROUPS or self.term is not None
        return self.per_frame and ours and self.path not in ALWAYS_WRITTEN

    @property
    def may_be_absent(self) -> bool:
        return self.optional or self.present != ALWAYS

    @property
    def container(self) -> str:
        """What the file holds: the dataset, or the group of a family of named datasets."""
        return self.path.removesuffix("/{name}")

    @property
    def end_path(self) -> str:
        """A ragged dataset's companion (F,) int64: the end of each frame's rows."""
        return self.path + END_SUFFIX
