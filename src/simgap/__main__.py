"""``python -m simgap``: the same as the ``simgap`` command."""

from simgap.cli import main

if __name__ == "__main__":
    main()
