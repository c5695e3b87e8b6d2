"""The action queue's time budget, read from LeRobot's async client and server logs.

``async_budget`` gives the time one asynchronous inference may take before the queue runs
dry, ``chunk_size_threshold x actions_per_chunk x dt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from simgap.evidence.lerobot_logs import LeRobotLog

DEFAULT_CHUNK_SIZE_THRESHOLD = 0.5
"""``RobotClientConfig.chunk_size_threshold``'s default in LeRobot 0.6.1 (async_inference/
configs.py); the docs' table says 0.7, the code 0.5."""
BUDGET_RULE = (
    "async serving is judged against the time the action queue lasts once an "
    "observation is sent, chunk_size_threshold x actions_per_chunk x dt (the client "
    "sends when the queue holds that share of a chunk); a synchronous loop is judged "
    "against one control period"
)


@dataclass(frozen=True)
class Budget:
    """The time one inference may take [s], and where each factor came from.

    Attributes:
        mode: ``"async"`` (LeRobot's policy server) or ``"sync"`` (one control period).
        budget_s: the time budget [s].
        dt_s: the client's control period [s] (1 / its fps, else the rig's).
        actions_per_chunk: actions per chunk (async; None for sync).
        chunk_size_threshold: the client's send threshold (async; None for sync).
        sources: factor -> where it was read ("client config", "server policy
            instructions", "action shape", "LeRobot default", "rig").
    """

    mode: str
    budget_s: float
    dt_s: float
    actions_per_chunk: int | None = None
    chunk_size_threshold: float | None = None
    sources: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """How the budget reads in a summary."""
        if self.mode == "sync":
            return f"{self.dt_s * 1e3:.1f} ms control period"
        return (
            f"{self.budget_s * 1e3:.1f} ms queue budget ({self.chunk_size_threshold:g} x "
            f"{self.actions_per_chunk} actions x {self.dt_s * 1e3:.1f} ms)"
        )

    def figures(self) -> dict[str, object]:
        """The budget as Finding figures, with the rule."""
        return {
            "mode": self.mode,
            "budget_s": self.budget_s,
            "dt_s": self.dt_s,
            "actions_per_chunk": self.actions_per_chunk,
            "chunk_size_threshold": self.chunk_size_threshold,
            "sources": dict(self.sources),
            "rule": BUDGET_RULE,
        }


def async_budget(logs: Sequence[LeRobotLog], control_dt_s: float) -> Budget:
    """The queue's budget ``chunk_size_threshold x actions_per_chunk x dt`` from LeRobot logs.

    ``actions_per_chunk`` comes from the client's logged config, else the server's policy
    instructions, else the logged action shape (the policy's chunk, an upper bound);
    ``chunk_size_threshold`` from the client's config, else LeRobot's default 0.5; ``dt``
    from the client's fps, else the rig's control period. Without any chunk length the
    budget falls back to one control period (``mode="sync"``).
    """
    src: dict[str, str] = {}
    apc = next((lg.actions_per_chunk for lg in logs if lg.actions_per_chunk), None)
    if apc:
        src["actions_per_chunk"] = "client config / server policy instructions"
    else:
        shape = next(
            (lg.action_shape for lg in logs if lg.action_shape and len(lg.action_shape) >= 2), None
        )
        if shape is not None:
            apc, src["actions_per_chunk"] = int(shape[1]), "action shape (policy chunk)"
    fps = next((lg.client_fps for lg in logs if lg.client_fps), None)
    dt = 1.0 / fps if fps else control_dt_s
    src["dt_s"] = "client config fps" if fps else "rig control period"
    if not apc:
        return Budget(mode="sync", budget_s=dt, dt_s=dt, sources=tuple(src.items()))
    thr = next(
        (lg.chunk_size_threshold for lg in logs if lg.chunk_size_threshold is not None), None
    )
    src["chunk_size_threshold"] = "client config" if thr is not None else "LeRobot default"
    thr = DEFAULT_CHUNK_SIZE_THRESHOLD if thr is None else float(thr)
    # A threshold of 0 sends only on an empty queue: the budget is then nil, not negative.
    return Budget(
        mode="async",
        budget_s=max(thr, 0.0) * apc * dt,
        dt_s=dt,
        actions_per_chunk=int(apc),
        chunk_size_threshold=thr,
        sources=tuple(src.items()),
    )
