"""``rodsim render`` (docs/render.md): its options, on rodsim.post.render; registered on the
``rodsim`` group by rodsim.cli."""

import click

from rodsim.cli import _handle_errors, main
from rodsim.errors import CaseError


def _pair(text: str, key: str, kind=float) -> tuple:
    try:
        a, b = (kind(v) for v in text.replace("x", ",").split(","))
    except ValueError:
        form = "WIDTHxHEIGHT, e.g. 1280x720" if kind is int else "LOW,HIGH, e.g. -5e3,5e3"
        raise CaseError(f"expected {form}, got {text!r}", key=key) from None
    return a, b


@main.command()
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
@click.option("--mode", type=int, default=0, help="Animate mode K (1-based) of a modal or "
              "buckling results file.")  # fmt: skip
@click.option(
    "--view",
    type=click.Choice(["auto", "iso", "xy", "xz", "yz"]),
    default="auto",
    show_default=True,
    help="Looking at which plane (auto: the plane of a flat structure, else iso); the "
    "camera is fitted to every frame drawn.",
)
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
@_handle_errors
def render(
    results, output, field, frames, at, reference, mode, view, camera, size, fps, scale, clim, cmap
):
    """Draw RESULTS off-screen: rods with their sections, plates with their thickness,
    coloured by a field (needs rodsim[render])."""
    from rodsim.post.render import render as draw
    from rodsim.results_reader import incomplete_warning

    pixels = _pair(size, "--size", int) if size is not None else None
    limits = _pair(clim, "--range") if clim is not None else None
    warning = incomplete_warning(results)
    if warning:
        click.echo(warning, err=True)
    path = draw(
        results, output, field=field, frames=frames, mode=mode, view=view, camera=camera,
        size=pixels, fps=fps, scale=scale, clim=limits, cmap=cmap, time=at, reference=reference,
    )  # fmt: skip
    click.echo(f"wrote {path}")
