"""What every command shares: errors rodsim raises on purpose (RodsimError) are printed as
one line, ``error: ...``, and mapped to their exit code (docs/running.md: 2 bad input, 3
numerical failure, 4 I/O and resources, 128 + n a signal); running out of memory anyway (a
MemoryError) is exit code 4 too. Nothing prints a traceback unless --debug is given.
"""

import functools
import sys

import click

from rodsim.errors import Interrupted, ResourceError, RodsimError


def handle_errors(fn):
    """Wrap a command's function (beneath its click decorators) in the mapping above."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        ctx = click.get_current_context()
        debug = ctx.find_root().params.get("debug", False)
        try:
            return fn(*args, **kwargs)
        except RodsimError as exc:
            if debug:
                raise
            kind = "interrupted" if isinstance(exc, Interrupted) else "error"
            try:
                click.echo(f"{kind}: {exc}", err=True)
            except OSError:  # no terminal left to tell (SIGHUP): the exit code says it
                pass
            ctx.exit(exc.exit_code)
        except BrokenPipeError:  # e.g. `rodsim check case.yaml | head`
            sys.stderr.close()
            ctx.exit(0)
        except KeyboardInterrupt:
            click.echo("\ninterrupted: the frames written so far are kept", err=True)
            ctx.exit(130)
        except MemoryError as exc:  # the estimate was too low, or the memory went elsewhere
            if debug:
                raise
            click.echo(
                f"error: out of memory{f' ({exc})' if str(exc) else ''}: the model "
                "needs more memory than this machine gave it (`rodsim check` prints "
                "the estimate); reduce the model or free memory. Results written so "
                "far stay readable.",
                err=True,
            )
            ctx.exit(ResourceError.exit_code)
        except Exception as exc:  # a bug in rodsim: say so instead of dumping a traceback
            if debug:
                raise
            click.echo(
                f"internal error ({type(exc).__name__}: {exc}); this is a bug in "
                "rodsim. Rerun with `rodsim --debug ...` for the traceback.",
                err=True,
            )
            ctx.exit(1)

    return wrapper
