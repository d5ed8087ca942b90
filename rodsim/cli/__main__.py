"""``python -m rodsim.cli``: the ``rodsim`` command."""

from rodsim.cli import main

main()
