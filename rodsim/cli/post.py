"""The commands that read a results file: ``rodsim info``, and ``rodsim export``, ``rodsim
plot`` and ``rodsim render``, which write it into other files (docs/running.md,
docs/render.md), on rodsim.post."""

from pathlib import Path

import click

from rodsim.cli.common import handle_errors
from rodsim.errors import CaseError


@click.command()
@click.argument("results", type=click.Path(dir_okay=False))
@handle_errors
def info(results):
    """Print what a results file holds."""
    from rodsim.post.summary import describe
    from rodsim.results.reader import read_live

    click.echo(read_live(results, describe))  # a read torn by a live run's flush: again


def _listed(options: list) -> str:
    """'--table is' or '--table, --frame are'."""
    return ", ".join(options) + (" is" if len(options) == 1 else " are")


@click.command()
@click.argument("results", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["vtk", "csv", "xdmf", "npz", "mtx"]),
    help="vtk (the default): the ParaView series; csv: a table of a frame's nodes, rods or "
    "plates, or (--history) a node set's time history; xdmf: an index that lets ParaView "
    "read the results file itself; with --matrices npz (the default) or mtx (Matrix "
    "Market: <stem>_K.mtx, _M.mtx, _C.mtx and _dofs.csv).",
)
@click.option(
    "-o",
    "--output",
    "folder",
    type=click.Path(),
    help="Folder for the series (default: next to the results file); csv: the file (default: "
    "<stem>_<table>_<frame>.csv or <stem>_<set>.csv next to the results file); xdmf: the "
    "file (default: <stem>.xdmf next to the results file); with "
    "--matrices the .npz file or the stem of the .mtx files (default: <case stem>_matrices "
    "next to the case).",
)
@click.option(
    "--table",
    default=None,
    help="csv: one row per node (nodes, the default), rod element (rods) or plate element "
    "(plates), or per entry of a term's datasets: its group (connectors) or one dataset "
    "(connectors/force); a ragged dataset gives the frame's rows.",
)
@click.option(
    "--frame",
    type=int,
    default=None,
    help="csv: the frame of the table, from 0; negative counts from the end (default: -1, "
    "the last).",
)
@click.option("--history", metavar="SET", default=None, help="csv: the time history of a node set.")
@click.option(
    "--envelope",
    is_flag=True,
    default=None,
    help="csv: the --table's least and largest values over all frames, and their frames.",
)
@click.option(
    "--matrices",
    is_flag=True,
    help="RESULTS is a case file: write its K, M and C with the DOF map (docs/modal.md).",
)
@click.option(
    "--set", "overrides", multiple=True, metavar="KEY=VALUE", help="With --matrices: as run."
)
@handle_errors
def export(results, fmt, folder, table, frame, history, envelope, matrices, overrides):
    """Write the ParaView series of an existing results file, a CSV table of it, or
    (--matrices) the stiffness, mass and damping matrices of a case."""
    csv_only = {"--table": table, "--frame": frame, "--history": history, "--envelope": envelope}
    given = [name for name, value in csv_only.items() if value is not None]
    if matrices:
        from rodsim.post.matrices import export_matrices

        if given:
            raise CaseError(f"{_listed(given)} for --format csv, not --matrices")
        if fmt not in (None, "npz", "mtx"):
            raise CaseError(f"--matrices writes --format npz or mtx, not {fmt}")
        paths = export_matrices(results, folder, overrides, fmt or "npz")
        click.echo("wrote K, M, C and the DOF map: " + ", ".join(map(str, paths)))
        return
    if fmt in ("npz", "mtx"):
        raise CaseError(
            f"--format {fmt} is for --matrices; a results file exports vtk, csv or xdmf"
        )
    if overrides:
        raise CaseError("--set is for --matrices (a case file); a results file has its case")
    if fmt != "csv" and given:
        raise CaseError(f"{_listed(given)} for --format csv")
    if history and (table or frame is not None or envelope):
        raise CaseError("--history writes every frame of a node set: give it without --table, "
                        "--frame and --envelope")  # fmt: skip
    if envelope and frame is not None:
        raise CaseError("--envelope covers every frame: give it without --frame")
    from rodsim.results.reader import incomplete_warning

    warning = incomplete_warning(results)
    if warning:
        click.echo(warning, err=True)
    if fmt == "xdmf":
        from rodsim.post.xdmf_export import export_xdmf

        click.echo(f"wrote {export_xdmf(results, folder)}")
        return
    if fmt == "csv":
        from rodsim.post.csv_export import export_csv

        path = export_csv(results, folder, table or "nodes", -1 if frame is None else frame,
                          history, bool(envelope))  # fmt: skip
        click.echo(f"wrote {path}")
        return
    from rodsim import progress
    from rodsim.post.export import export_vtk

    count = progress.Count("frames")  # on a terminal, on stderr (docs/running.md)
    try:
        pvd, n = export_vtk(results, folder, progress=count)
    finally:
        count.close()
    click.echo(f"wrote {n} frames: {pvd}")


def _check_picture(path: Path, results) -> None:
    """CaseError unless path names a PNG that may be written (rodsim.results.guard): a .yaml
    or .h5 name was an internal error."""
    from rodsim.results import guard as output_guard

    if path.suffix.lower() != ".png":
        raise CaseError(
            f"rodsim plot writes PNG pictures: expected a .png name, got {path}", key="-o"
        )
    reads = {Path(results).resolve(): "the results file itself"}
    output_guard.check(path, "png", reads=reads, file=str(results))


@click.command()
@click.argument("results", type=click.Path(dir_okay=False))
@click.argument("what", default="energy")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="PNG file.")
@click.option(
    "--against",
    default=None,
    metavar="CURVE",
    help="Horizontal axis instead of time: load_factor, time, total_time or one component "
    "QUANTITY.C@SET (e.g. --against displacement.y@load_point for a load-displacement plot).",
)
@click.option(
    "--along",
    is_flag=True,
    help="QUANTITY@SET along the rod of SET (its arc length) instead of over time: a "
    "diagram, e.g. moment.bending2@beam.all --along.",
)
@click.option(
    "--frames",
    default=None,
    metavar="K,K,...",
    help="--along: the frames drawn, from 0, negative from the end (default: -1, the last).",
)
@click.option(
    "--envelope",
    is_flag=True,
    help="--along: also the band between the least and largest value over all frames.",
)
@handle_errors
def plot(results, what, output, against, along, frames, envelope):
    """Plot time histories: energy, momentum, load_factor, or QUANTITY@SET (e.g.
    displacement@beam.end, displacement.z@tip, force.axial@beam.all, membrane.N11@deck.all);
    with --along, QUANTITY@SET along its rod; of a sweep's summary.h5, RESULT --against P
    (or P1,P2)."""
    from rodsim.results.reader import incomplete_warning
    from rodsim.sweep import summary

    if output is not None:
        _check_picture(Path(output), results)
    if summary.is_summary(results):  # a sweep's summary.h5: a result against its parameters
        from rodsim.sweep.plot import plot_sweep

        if along or frames is not None or envelope:
            raise CaseError("a sweep's summary plots a result --against one or two parameters")
        click.echo(f"wrote {plot_sweep(results, what, against, output)}")
        return
    if not along and (frames is not None or envelope):
        raise CaseError("--frames and --envelope are for --along")
    if along and against:
        raise CaseError("--along draws against the arc length: give it without --against")
    warning = incomplete_warning(results)
    if warning:
        click.echo(warning, err=True)
    if along:
        from rodsim.post.diagrams import plot_along

        path, _ = plot_along(results, what, output, frames or "-1", envelope)
    else:
        from rodsim.post.plots import plot_results

        path = plot_results(results, what, output, against)
    click.echo(f"wrote {path}")


@click.command()
@click.argument("results", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="A .png (one frame), .gif or .mp4 (the run, or a mode's animation). Default: "
    "<stem>_<field>.png next to the results, with --mode <stem>_mode<K>.gif.",
)
@click.option(
    "--field",
    default="displacement",
    show_default=True,
    metavar="QUANTITY[.C]",
    help="Colour by a nodal field (displacement, velocity, rotation, ...), a rod field "
    "(force.axial, moment.bending2, ...), a plate field (membrane.N11, ...), von_mises_max, "
    "utilisation, or none. No component: the magnitude.",
)
@click.option(
    "--frames",
    default=None,
    metavar="K | START:STOP:STEP",
    help="The frame of a .png (default -1, the last) or the frames of a movie (default all, "
    "at most 300 evenly picked).",
)
@click.option("--time", "at", type=float, default=None, metavar="T",
              help="A .png of the frame nearest time T (several steps: total time).")  # fmt: skip
@click.option("--reference", is_flag=True, help="Also draw the undeformed structure, faint.")
@click.option("--mode", type=int, default=None, help="Animate mode K (1-based) of a modal or "
              "buckling results file.")  # fmt: skip
@click.option(
    "--view",
    type=click.Choice(["auto", "iso", "xy", "xz", "yz"]),
    default="auto",
    show_default=True,
    help="Looking at which plane (auto: the plane the structure and its motion lie closest "
    "to, else iso).",
)
@click.option("--fit", type=click.Choice(["each", "all"]), default=None,
              help="each: a movie's camera follows the structure (the default); all: one camera "
              "holds every frame (the default of --mode and a .png).")  # fmt: skip
@click.option("--camera", default=None, metavar="PX,PY,PZ/FX,FY,FZ/UX,UY,UZ",
              help="Camera position, focal point and view-up, instead of --view.")  # fmt: skip
@click.option("--size", default=None, metavar="WxH", help="Picture size in pixels (default "
              "1024x768, a .gif 640x480).")  # fmt: skip
@click.option("--fps", type=float, default=12.0, show_default=True, help="Movie frames per second.")
@click.option(
    "--scale",
    type=float,
    default=1.0,
    show_default=True,
    help="Draw displacements and rotations times this (the colours keep the real values); "
    "with --mode, of the amplitude (1: the largest displacement 10% of the model's size).",
)
@click.option("--range", "clim", default=None, metavar="LOW,HIGH",
              help="Colour range (default: the values' range over the frames drawn).")  # fmt: skip
@click.option("--cmap", default="viridis", show_default=True, help="Matplotlib colour map.")
@handle_errors
def render(results, output, field, frames, at, reference, mode, view, fit, camera, size, fps,
           scale, clim, cmap):  # fmt: skip
    """Draw RESULTS off-screen: rods with their sections, plates with their thickness,
    coloured by a field (needs rodsim[render])."""
    from rodsim import progress
    from rodsim.post.render import render as draw
    from rodsim.results.reader import incomplete_warning

    warning = incomplete_warning(results)
    if warning:
        click.echo(warning, err=True)
    count = progress.Count("frames")  # on a terminal, on stderr (docs/running.md)
    try:
        path = draw(
            results, output, progress=count, field=field, frames=frames, mode=mode, view=view,
            fit=fit, camera=camera, size=size, fps=fps, scale=scale, clim=clim, cmap=cmap,
            time=at, reference=reference,
        )  # fmt: skip
    finally:
        count.close()
    click.echo(f"wrote {path}")
