"""Reading results files; the format, writer and readers live in rodsim.results_format. This
name stays so that scripts importing the readers from here keep working."""

from rodsim.results_format import (
    frame_count,
    layout_version,
    open_results,
    quaternion_matrices,
    read_frame,
)

__all__ = ["frame_count", "layout_version", "open_results", "quaternion_matrices", "read_frame"]
