"""The command line: thin modules that parse arguments, call one function and print.

Each ``cli/<area>.py`` registers its commands on the shared ``app``.
"""

from __future__ import annotations

from simgap.cli import _progress as _progress  # noqa: F401  (the root options)
from simgap.cli import actuator as _actuator  # noqa: F401  (registers commands)
from simgap.cli import appearance as _appearance  # noqa: F401
from simgap.cli import body as _body  # noqa: F401  (registers commands)
from simgap.cli import calibration as _calibration  # noqa: F401
from simgap.cli import contact as _contact  # noqa: F401
from simgap.cli import controller as _controller  # noqa: F401
from simgap.cli import diagnose as _diagnose  # noqa: F401  (registers commands)
from simgap.cli import episodes as _episodes  # noqa: F401  (registers commands)
from simgap.cli import evaluation as _evaluation  # noqa: F401  (registers commands)
from simgap.cli import excite as _excite  # noqa: F401  (registers commands)
from simgap.cli import fleet as _fleet  # noqa: F401  (registers commands)
from simgap.cli import init as _init  # noqa: F401
from simgap.cli import latency as _latency  # noqa: F401
from simgap.cli import maniskill as _maniskill  # noqa: F401  (registers commands)
from simgap.cli import plumbing as _plumbing  # noqa: F401  (registers commands)
from simgap.cli import randomize as _randomize  # noqa: F401
from simgap.cli import selftest as _selftest  # noqa: F401  (registers commands)
from simgap.cli import view as _view  # noqa: F401  (registers commands)
from simgap.cli._app import app


def main() -> None:
    """Entry point of the ``simgap`` console script."""
    app()


__all__ = ["app", "main"]
