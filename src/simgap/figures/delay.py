"""One delay, one value: the command's delay as every branch that measures it states it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from simgap.figures.base import TEXT, Record, figure


@dataclass(frozen=True)
class Delay(Record):
    """The time from a command leaving the policy to the joint starting to answer it.

    The total is what a replay can identify; how it splits between the control loop (logged
    stage times, or the fitted transport delay) and the servo (its own command lag) is stated
    only when the data separate them. On the ridge, any split with the same total replays
    alike: the total is identified, the split is not.
    """

    total_s: float = figure("s", "the total delay, best estimate")
    interval_s: tuple[float, float] | None = figure(
        "s", "the total's interval (None when withheld; see reason)", default=None
    )
    loop_s: float = figure(
        "s", "the control loop's share (NaN when not separated)", default=math.nan
    )
    servo_s: float = figure("s", "the servo's share (NaN when not separated)", default=math.nan)
    on_ridge: bool = figure(
        TEXT, "only the total is identified: loop and servo trade off", default=False
    )
    reason: str = figure(TEXT, "why no interval is stated, when none is", default="")
    source: str = figure(
        TEXT, "where the figure comes from (timing log, replay fit, ...)", default=""
    )

    @property
    def identified(self) -> bool:
        """Whether the total carries an interval."""
        return self.interval_s is not None
