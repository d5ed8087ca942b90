"""The ``rodsim`` command: a thin click layer over rodsim.api (docs/python.md), rodsim.post,
rodsim.sweep and rodsim.validate.

group.py holds the group and registers every command; run.py (run, check, schema, warmup),
post.py (info, export, plot, render), sweep.py and validate.py the commands; common.py the
error handling they share. At import the command modules load click and light modules
(rodsim.errors, rodsim.progress) only: numpy, h5py and the solvers load inside the commands,
so that ``rodsim --help`` stays fast.
"""

from rodsim.cli.group import main

__all__ = ["main"]
