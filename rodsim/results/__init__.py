"""Results: what a run keeps, on disk and in memory (docs/results.md).

One room for the results concept, low in the house: it imports the model and the terms (whose
per-frame datasets it writes) and no solver.

- ``layout``: the dataset table and the layout rule (which dataset a Frame field becomes);
- ``frame``: the per-frame record (``Frame``), filled by the solvers;
- ``storage``: the HDF5 mechanics (crash-safe file, chunks, space); ``writer``: the writer;
- ``reader``: the reader, with its adapters for older layouts; ``arrays``: ``Results``;
- ``lock``: one writer per file; ``guard``: may a command write this path;
- ``restart``: the restart slots;
- ``vtk``, ``vtk_cells``, ``mode_series``: the ParaView series.

``rodsim.results.Results`` and ``rodsim.results.read_results`` (the names of the old
``rodsim/results.py``) are the ones of ``rodsim.results.arrays``, imported on first use.
"""

_ARRAYS = ("Results", "ResultsMesh", "read_results", "from_frames", "mesh_of")


def __getattr__(name: str):
    if name in _ARRAYS:
        from rodsim.results import arrays

        return getattr(arrays, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
