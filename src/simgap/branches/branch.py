"""A branch's contract as one value: ``Branch``, the small base every branch shares.

A branch is one cause the ladder can implicate. Everything that reads its findings reaches it
through this value, never by a module's name: the ladder calls ``assess`` in ``cost`` order;
``not_measured`` names its ``needs``; the report draws a finding with ``plots``;
``simgap randomize`` (and the fleet's spec) writes its entries with ``randomization``; and its
typed records are the ones ``simgap.figures.registry`` lists under its name (``records``).

Each branch module ends in its ``SPEC = Branch(...)``; ``simgap.branches.ladder_list``
lists them (the ladder's rungs, and every branch a finding can name).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from simgap.branches.context import Context
from simgap.figures.base import Record
from simgap.figures.registry import DETAILS, FIGURES, details_type, figures_type
from simgap.finding import Finding
from simgap.randomize.draft import EntryBuilder

Assess = Callable[[Context], list[Finding]]
"""``assess(ctx) -> list[Finding]``: a branch's findings on the context's rig."""

Plots = Callable[[Mapping[str, Any]], list[str]]
"""A branch's report section: a finding's JSON form -> HTML snippets (inline SVG or PNG),
most telling first; an empty string is dropped."""

Records = tuple[type[Record] | None, type[Record] | None]
"""The (figures, details) record types of one kind of finding; None where it has none."""


@dataclass(frozen=True)
class Branch:
    """One branch: how the ladder runs it and what reads its findings.

    Attributes:
        name: the branch's name, as its findings carry it (``Finding.branch``).
        cost: relative cost; the ladder runs its rungs in increasing cost (0 for a branch
            that is not a rung).
        needs: the evidence it reads, in words (the ``not_measured`` finding names them).
        assess: its findings on a context; None for a branch whose findings come from a
            command of its own rather than the ladder (``simgap calibration``).
        plots: its report section (a ``simgap.report.plots_<branch>`` function); None where
            its findings draw no plot.
        randomization: the builder of its randomisation entries (a ``simgap.randomize``
            function); None where its findings pin or range nothing.
    """

    name: str
    cost: float
    needs: tuple[str, ...]
    assess: Assess | None
    plots: Plots | None = None
    randomization: EntryBuilder | None = None

    @property
    def records(self) -> dict[str, Records]:
        """Kind -> (figures, details) record types of every kind of finding it writes, as
        ``simgap.figures.registry`` lists them (the one list; nothing is declared here)."""
        kinds = dict.fromkeys(r.kind for r in (*FIGURES, *DETAILS) if r.branch == self.name)
        return {k: (figures_type(self.name, k), details_type(self.name, k)) for k in kinds}
