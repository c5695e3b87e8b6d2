"""``python -m simgap``: the same as the ``simgap`` command."""

from simgap.cli import main

main()
