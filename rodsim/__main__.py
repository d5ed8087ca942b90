"""``python -m rodsim``: the ``rodsim`` command."""

from rodsim.cli import main

main()
