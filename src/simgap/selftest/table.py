"""The recovery table: outcome counts per family and per joint, and the sentence they make.

A family is *seen* on this rig when the truth lies inside the stated interval in at least
half of its planted cells (``SEEN_SHARE``); otherwise the sentence says what happened to
it instead: declared not identifiable, or missed (the stronger warning: the diagnosis
stated an interval that excludes the truth, or nothing). False implications (an interval
that excludes the true value of a cell nothing was planted in) are counted beside them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simgap.selftest.score import OUTCOMES, Cell

SEEN_SHARE = 0.5
"""Share of a family's planted cells with the truth inside the interval to call it seen."""


@dataclass(frozen=True)
class Counts:
    """Outcome counts over some cells (``OUTCOMES``); ``planted`` = inside + declared +
    missed; ``silent``: the missed cells where nothing at all was stated."""

    inside: int = 0
    declared: int = 0
    missed: int = 0
    clean: int = 0
    false: int = 0
    silent: int = 0

    @property
    def planted(self) -> int:
        """Cells with a planted fault."""
        return self.inside + self.declared + self.missed

    def to_dict(self) -> dict[str, int]:
        """JSON form, with ``planted``."""
        return {
            **{k: getattr(self, k) for k in OUTCOMES},
            "silent": self.silent,
            "planted": self.planted,
        }


def count(cells: Iterable[Cell]) -> Counts:
    """The outcome counts of ``cells``."""
    n = dict.fromkeys(OUTCOMES, 0)
    silent = 0
    for c in cells:
        n[c.outcome] += 1
        silent += c.outcome == "missed" and c.interval is None
    return Counts(**n, silent=silent)


@dataclass(frozen=True)
class FamilyRow:
    """One family of the recovery table.

    Attributes:
        family: the family.
        counts: over every joint and faulty trial.
        joints: joint -> counts of that joint alone.
        null_false: false implications of this family on the null trial.
    """

    family: str
    counts: Counts
    joints: Mapping[str, Counts] = field(default_factory=dict)
    null_false: int = 0

    @property
    def seen(self) -> bool:
        """Inside the interval in at least ``SEEN_SHARE`` of the planted cells."""
        return self.counts.planted > 0 and self.counts.inside >= SEEN_SHARE * self.counts.planted

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "family": self.family,
            **self.counts.to_dict(),
            "seen": self.seen,
            "null_false": self.null_false,
            "joints": {j: c.to_dict() for j, c in self.joints.items()},
        }


def recovery_table(
    cells: Sequence[Cell],
    families: Sequence[str],
    null_trial: str = "null",
) -> list[FamilyRow]:
    """One row per family: the faulty trials' cells counted, per joint too, and the null
    trial's false implications apart."""
    rows = []
    for fam in families:
        mine = [c for c in cells if c.family == fam and c.trial != null_trial]
        joints = list(dict.fromkeys(c.joint for c in cells if c.family == fam))
        rows.append(
            FamilyRow(
                family=fam,
                counts=count(mine),
                joints={j: count(c for c in mine if c.joint == j) for j in joints},
                null_false=sum(
                    c.outcome == "false" for c in cells if c.family == fam and c.trial == null_trial
                ),
            )
        )
    return rows


def _join(words: Sequence[str], last: str = "and") -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + f" {last} " + words[-1]


def _why_not(r: FamilyRow) -> str:
    c = r.counts
    if c.missed >= c.declared:
        how = (
            "nothing stated"
            if c.silent == c.missed
            else "the truth outside the stated interval"
            if not c.silent
            else f"the truth outside the stated interval in {c.missed - c.silent}, nothing "
            f"stated in {c.silent}"
        )
        return f"{r.family} (missed {c.missed} of {c.planted}: {how})"
    return f"{r.family} (declared not identifiable in {c.declared} of {c.planted})"


def sentence(rows: Sequence[FamilyRow], null_implicated: Sequence[str] = ()) -> str:
    """'On this rig simgap sees X, not Y (why)', then the false implications and the null
    trial, from the numbers."""
    tried = [r for r in rows if r.counts.planted]
    seen = [r.family for r in tried if r.seen]
    unseen = [_why_not(r) for r in tried if not r.seen]
    if not tried:
        out = (
            "No planted fault was scored (the null trial alone, or no faulty trial was "
            "diagnosed), so nothing is known of what simgap sees on this rig."
        )
    elif not unseen:
        out = f"On this rig simgap sees {_join(seen)}."
    elif not seen:
        out = f"On this rig simgap sees none of the planted families: not {_join(unseen, 'or')}."
    else:
        out = f"On this rig simgap sees {_join(seen)}, not {_join(unseen, 'or')}."
    false = [f"{r.family} {r.counts.false}" for r in rows if r.counts.false]
    if false:
        out += (
            " It stated changes that were not planted (false implications) in "
            + _join(false)
            + " cell(s)."
        )
    untried = [r.family for r in rows if not r.counts.planted]
    if untried and tried:
        out += f" Not drawn in these trials: {_join(untried)}."
    if null_implicated:
        out += (
            " The null run (the nominal model's own recording) implicated "
            + _join(list(null_implicated))
            + ": a false implication."
        )
    else:
        out += " The null run (the nominal model's own recording) implicated nothing."
    return out


def _md(s: object) -> str:
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(
    rows: Sequence[FamilyRow],
    text: str,
    *,
    gap: Mapping[str, Any] | None = None,
    not_planted: Mapping[str, str] | None = None,
    title: str = "simgap selftest",
) -> str:
    """The recovery table as Markdown: the sentence, per family, per family and joint, the
    gap closed and what was not planted."""
    lines = [
        f"# {_md(title)}",
        "",
        _md(text),
        "",
        "| family | planted | inside | declared | missed | false | null false | seen |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        c = r.counts
        seen = ("yes" if r.seen else "no") if c.planted else "not drawn"
        lines.append(
            f"| {_md(r.family)} | {c.planted} | {c.inside} | {c.declared} | "
            f"{c.missed} | {c.false} | {r.null_false} | {seen} |"
        )
    joints = list(dict.fromkeys(j for r in rows for j in r.joints))
    if joints:
        lines += [
            "",
            "Per joint (inside / planted; false implications in brackets):",
            "",
            "| family | " + " | ".join(_md(j) for j in joints) + " |",
            "|---|" + "---|" * len(joints),
        ]
        for r in rows:
            cells = []
            for j in joints:
                jc = r.joints.get(j)
                if jc is None or not (jc.planted or jc.false):
                    cells.append("-")
                else:
                    cells.append(
                        f"{jc.inside}/{jc.planted}" + (f" ({jc.false})" if jc.false else "")
                    )
            lines.append(f"| {_md(r.family)} | " + " | ".join(cells) + " |")
    if gap:
        lines += [
            "",
            f"Replay gap closed by the offered patch on the held-out episode: "
            f"{_md(gap.get('text', ''))}",
        ]
    if not_planted:
        lines += ["", "Not planted:", ""]
        lines += [f"- {_md(k)}: {_md(v)}" for k, v in not_planted.items()]
    return "\n".join(lines) + "\n"
