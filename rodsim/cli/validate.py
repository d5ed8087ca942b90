"""``rodsim validate`` (docs/validation/README.md): the validation benchmarks, on
rodsim.validate."""

import sys

import click

from rodsim.cli.common import handle_errors


@click.command()
@click.argument("names", nargs=-1)
@click.option("--quick", is_flag=True, help="The coarse tier (CI): coarser meshes, shorter runs.")
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False),
    help="Write DIR/README.md with the table and one figure per benchmark.",
)
@click.option(
    "--suite",
    type=click.Path(file_okay=False),
    default=None,
    help="Benchmark folder (default: validation/ of the rodsim checkout).",
)
@handle_errors
def validate(names, quick, report_dir, suite):
    """Run the validation benchmarks (all, or NAMES) and compare with their references.

    Exit code 0 if every compared quantity passes, 1 if any fails, 2 for an unknown NAME or a
    broken benchmark spec."""
    import tempfile
    from pathlib import Path

    from rodsim import progress
    from rodsim.validate import report, runner
    from rodsim.validate import suite as suites

    tier = "quick" if quick else "full"
    benches = suites.select(suite, names)
    if report_dir:  # before the benchmarks run: a user's README.md there is not replaced
        report.check_folder(report_dir, benches)
    outcomes = []
    count = progress.Count("benchmarks")  # on a terminal, below the lines it prints for good
    with tempfile.TemporaryDirectory(prefix="rodsim-validate-") as tmp:
        try:
            for done, bench in enumerate(benches):  # results files are scratch
                count.say(f"running {bench.number}. {bench.name} ({tier}) ...")
                count(done, len(benches))
                outcomes.append(runner.run_benchmark(bench, tier, Path(tmp)))
            count(len(benches), len(benches))
        finally:
            count.close()
        click.echo(report.table(outcomes))
        click.echo(report.summary(outcomes))
        if report_dir:
            path = report.write_report(outcomes, report_dir, tier)
            click.echo(f"report    {path}")
    if any(o.status in ("FAIL", "error") for o in outcomes):
        sys.exit(1)  # not ctx.exit: its Exit exception would be taken for a bug above
