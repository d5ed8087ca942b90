"""Render a rodsim result to a PNG without a display: the rod as tubes, coloured by a quantity.

Reads a ParaView series (<stem>.pvd, from `rodsim run` or `rodsim export`) or a results file
(<stem>.h5) and draws one frame, or several overlaid with fading opacity (a strobe of the
motion), with a scalar bar, axes and a title. Commands that made docs/images: docs/paraview.md.

SCALARS is a point array (displacement, velocity, angular_velocity, d1, d2, d3) or a cell array
(force, moment, strain, curvature): its magnitude, or one component with `.c`: x/y/z,
axial/shear2/shear3 (force), torsion/bending2/bending3 (moment), 1/2/3 or 0/1/2.
A .h5 input has no d1..d3 (they need the .pvd).

Headless rendering needs no X server or Xvfb: the PyPI vtk wheel (>= 9.4) renders through EGL
when there is no display. It needs libEGL and Mesa (Debian/Ubuntu: `apt-get install libegl1
libgl1-mesa-dri`) or a GPU driver with EGL; OSMesa is not needed. Without DISPLAY the script
asks VTK for EGL directly (VTK_DEFAULT_OPENGL_WINDOW), which skips an X11 attempt and its
harmless "bad X server connection" warning.
"""

import argparse
import os
import sys
from pathlib import Path

import h5py
import numpy as np
import pyvista as pv

COMPONENTS = {
    "force": ("axial", "shear2", "shear3"),
    "moment": ("torsion", "bending2", "bending3"),
    "strain": ("1", "2", "3"),
    "curvature": ("1", "2", "3"),
}
VIEWS = {"iso": "view_isometric", "xy": "view_xy", "xz": "view_xz", "yz": "view_yz"}


def load(path):
    """(times, title, frame(k) -> PolyData of the rods' line cells) of a .pvd or .h5 file."""
    path, h5 = Path(path), Path(path).with_suffix(".h5")
    title = path.stem  # or the case title, from the results file if it is there
    if h5.exists():
        with h5py.File(h5, "r", locking=False) as f:
            title, times = f.attrs.get("title", title), f["time"][()]
    if path == h5:

        def frame(k):  # only the datasets of docs/results.md
            with h5py.File(h5, "r", locking=False) as f:
                conn, x = f["mesh/rods"][()], f["nodes/position"][k]
                mesh = pv.PolyData(x, lines=np.column_stack([np.full(len(conn), 2), conn]))
                mesh.point_data["displacement"] = x - f["mesh/points"][()]
                for name in ("velocity", "angular_velocity"):
                    mesh.point_data[name] = f[f"nodes/{name}"][k]
                for name in COMPONENTS:
                    mesh.cell_data[name] = f[f"rods/{name}"][k]
            return mesh

        return times, title, frame
    reader = pv.get_reader(str(path))

    def frame(k):
        reader.set_active_time_point(k)
        data = reader.read()
        grid = data.combine() if isinstance(data, pv.MultiBlock) else data
        grid = grid.extract_cells_by_type(pv.CellType.LINE)  # the rods
        mesh = pv.PolyData(grid.points, lines=grid.cells)
        mesh.point_data.update(grid.point_data)
        mesh.cell_data.update(grid.cell_data)
        return mesh

    return np.asarray(reader.time_values), title, frame


def add_scalars(mesh, spec) -> tuple[str, bool]:
    """Store quantity SPEC on mesh; return (its array name, whether it is cell data)."""
    name, _, comp = spec.partition(".")
    on_cells = name not in mesh.point_data
    data = mesh.cell_data if on_cells else mesh.point_data
    if name not in data:
        sys.exit(f"no array {name!r}; have {sorted(mesh.point_data) + sorted(mesh.cell_data)}")
    if comp:
        names = COMPONENTS.get(name, ("x", "y", "z"))
        data[spec] = np.asarray(data[name])[:, names.index(comp) if comp in names else int(comp)]
        return spec, on_cells
    data[f"{name} magnitude"] = np.linalg.norm(data[name], axis=1)
    return f"{name} magnitude", on_cells


def main(argv=None) -> Path:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = p.add_argument
    add("results", help="<stem>.pvd or <stem>.h5")
    add("-o", "--output", help="PNG file (default: <stem>.png next to the input)")
    add("--scalars", default="displacement", help="quantity to colour by")
    add("--time", type=float, nargs="+", help="frame(s) nearest these times (default: last)")
    add("--frames", type=int, help="strobe of this many frames evenly spaced in time")
    add("--t-range", type=float, nargs=2, metavar=("T0", "T1"), help="span for --frames")
    add("--scale", type=float, default=1.0, help="draw reference + SCALE x displacement")
    add("--reference", action="store_true", help="also draw the reference geometry")
    add("--radius", type=float, help="tube radius (default: 0.6%% of the drawing's size)")
    add("--view", default="iso", choices=VIEWS)
    add("--elevation", type=float, default=0.0, help="then tilt the view up (degrees)")
    add("--zoom", type=float, default=1.0, help="> 1 to zoom in")
    add("--clim", type=float, nargs=2, help="colour range (default: the data's)")
    add("--cmap", help="colour map (default: viridis; coolwarm, centred, for a component)")
    add("--title", help="default: case title, quantity and times")
    add("--size", type=int, nargs=2, default=(1200, 800), metavar=("W", "H"))
    args = p.parse_args(argv)

    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    pv.OFF_SCREEN = True
    times, title, frame = load(args.results)
    span = args.t_range or (times[0], times[-1])
    wanted = np.linspace(*span, args.frames) if args.frames else args.time or [times[-1]]
    picks = sorted({int(np.abs(times - t).argmin()) for t in wanted})
    meshes = [frame(k) for k in picks]
    reference = meshes[0].warp_by_vector("displacement", factor=-1.0)
    if args.scale != 1.0:  # the points are already deformed: add (scale - 1) x displacement
        meshes = [m.warp_by_vector("displacement", factor=args.scale - 1.0) for m in meshes]
    label, on_cells = [add_scalars(m, args.scalars) for m in meshes][-1]
    signed = "." in args.scalars
    lo, hi = min(m[label].min() for m in meshes), max(m[label].max() for m in meshes)
    clim = args.clim or ((-max(-lo, hi), max(-lo, hi)) if signed else (lo, hi))
    bounds = np.array([m.bounds for m in meshes])
    radius = args.radius or 0.006 * np.linalg.norm(bounds[:, 1::2].max(0) - bounds[:, ::2].min(0))

    plotter = pv.Plotter(off_screen=True, window_size=list(args.size))
    fs = min(args.size[0] / 1200, args.size[1] / 800)  # font sizes are in pixels
    if args.reference:
        plotter.add_mesh(reference, color="grey", line_width=2)
    bar = {
        "title": label.replace(" ", "\n"),
        "vertical": True,
        "position_x": 0.85,
        "position_y": 0.25,
        "height": 0.5,
        "fmt": "%.3g",
        "title_font_size": round(20 * fs),
        "label_font_size": round(16 * fs),
    }
    for i, (k, mesh) in enumerate(zip(picks, meshes, strict=True)):
        last = i == len(meshes) - 1  # earlier frames translucent (no depth peeling: with
        # EGL/llvmpipe it drops translucent actors); point data: one smooth tube per rod
        # (elements joined into polylines), cell data: one tube per element
        tube = (
            mesh.tube(radius=radius, n_sides=24, capping=False)
            if on_cells
            else mesh.strip(join=True).tube(radius=radius, n_sides=24, capping=True)
        )
        plotter.add_mesh(
            tube,
            scalars=label,
            clim=clim,
            smooth_shading=True,
            cmap=args.cmap or ("coolwarm" if signed else "viridis"),
            opacity=1.0 if last else 0.3 + 0.5 * i / max(len(meshes) - 1, 1),
            show_scalar_bar=last,
            scalar_bar_args=bar,
        )
        if len(meshes) > 1:
            plotter.add_point_labels(
                [mesh.points[mesh.n_points // 2] + 3 * radius],
                [f"t={times[k]:g}"],
                font_size=round(16 * fs),
                shape=None,
                show_points=False,
                always_visible=True,
            )
    shown = ", ".join(f"{times[k]:g}" for k in picks)
    shown += f" (displacement x{args.scale:g})" if args.scale != 1.0 else ""
    plotter.add_title(args.title or f"{title}: {label} at t = {shown}", font_size=round(12 * fs))
    plotter.show_axes()
    getattr(plotter, VIEWS[args.view])()
    plotter.camera.elevation = args.elevation
    plotter.reset_camera()
    plotter.camera.zoom(args.zoom)
    output = Path(args.output or Path(args.results).with_suffix(".png"))
    output.parent.mkdir(parents=True, exist_ok=True)
    plotter.screenshot(output)
    plotter.close()
    return output


if __name__ == "__main__":
    print(main())
