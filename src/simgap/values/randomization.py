"""The randomisation spec as a value: its entries (pinned or ranged parameters) and the spec.

``randomize.build_spec`` makes one from a diagnosis; ``sim.variants`` and the exporters read it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Source = Literal["measured", "fitted", "defaulted"]


@dataclass(frozen=True)
class Entry:
    """One parameter of the spec.

    Attributes:
        name: parameter name; the unit is the suffix (``_s``, ``_kg``, ``_per_s``, ``_scale``).
        kind: ``pinned`` (a value) or ``range`` (``low``..``high``).
        source: ``measured``, ``fitted`` or ``defaulted``.
        value: the pinned value.
        low: lower end of a range.
        high: upper end of a range.
        distribution: ``uniform`` or ``log_uniform``.
        resample: ``episode`` or ``step`` (when a new value is drawn).
        target: what it applies to (a joint regex, a body or geom name).
        note: why this value or range, and where it came from.
    """

    name: str
    kind: Literal["pinned", "range"]
    source: Source
    value: float | None = None
    low: float | None = None
    high: float | None = None
    distribution: str = "uniform"
    resample: str = "episode"
    target: str = ""
    note: str = ""


@dataclass(frozen=True)
class RandomizationSpec:
    """The spec for the next training run."""

    rig: str
    seed: int
    control_dt_s: float | None
    entries: tuple[Entry, ...]

    def entry(self, name: str) -> Entry:
        """An entry by name; a miss lists the names."""
        for e in self.entries:
            if e.name == name:
                return e
        from simgap.errors import NameNotFoundError

        raise NameNotFoundError("spec entry", name, [e.name for e in self.entries])

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "rig": self.rig,
            "seed": self.seed,
            "control_dt_s": self.control_dt_s,
            "entries": [asdict(e) for e in self.entries],
        }
