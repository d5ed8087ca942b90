"""The ``rodsim`` group: its own options, and the one list of its commands.

The command modules define plain click commands and never import this module: they are
registered here, so that the group's help lists exactly what this file names.
"""

import logging

import click

from rodsim import __version__
from rodsim.cli import post, run, sweep, validate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rodsim")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logging.")
@click.option("-v", "--verbose", is_flag=True, help="Log what rodsim does.")
def main(debug: bool, verbose: bool) -> None:
    """rodsim: dynamics and equilibrium of geometrically exact rods."""
    level = logging.DEBUG if debug else logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


main.add_command(run.run)
main.add_command(run.check)
main.add_command(run.schema)
main.add_command(run.warmup)
main.add_command(post.info)
main.add_command(post.export)
main.add_command(post.plot)
main.add_command(post.render)
main.add_command(sweep.sweep)
main.add_command(validate.validate)
