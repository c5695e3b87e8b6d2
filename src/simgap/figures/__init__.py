"""Typed figures: each branch's contract with the report, randomize, fleet and the CLI."""

from simgap.figures.base import TEXT, UNITLESS, Record, figure
from simgap.figures.delay import Delay

__all__ = ("TEXT", "UNITLESS", "Delay", "Record", "figure")
