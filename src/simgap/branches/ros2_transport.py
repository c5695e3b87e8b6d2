"""The ROS 2 bags' transport latency: each message's log time against its header stamp.

A ``sensor_msgs/msg/JointState`` is stamped when the driver read the joints and logged when
the recorder received it; the difference is how old a state is when the rest of the graph
(the policy) can act on it, a delay the simulation does not have unless it models it.
Reported by the latency branch beside the loop's own stage timing, per topic (median, 95th
percentile, extremes), against the control period: ``eliminated`` when the 95th percentile
is within ``ELIMINATE_PERIODS`` of a period (a state lands in its own frame),
``implicated`` when it exceeds ``IMPLICATE_PERIODS`` (one state in twenty is a frame late),
``inconclusive`` between them or when the two clocks disagree (a negative latency).
"""

from __future__ import annotations

from typing import Any

from simgap.branches.context import Context
from simgap.figures.latency import TransportFigures
from simgap.finding import Finding, Verdict

ELIMINATE_PERIODS = 0.25
IMPLICATE_PERIODS = 1.0
TITLE = "ROS 2 transport"


def transport_finding(ros2: dict[str, Any], control_dt_s: float) -> Finding | None:
    """The transport Finding of a bag dataset's ``info["ros2"]``; None without stamps."""
    per_bag = [(b["bag"], t) for b in ros2.get("bags", []) for t in b["transport_latency"]]
    if not per_bag:
        return None
    worst_bag, worst = max(per_bag, key=lambda bt: bt[1]["p95_s"])
    p95 = float(worst["p95_s"])
    figures = TransportFigures.from_mapping(
        {
            "transport_p95_s": p95,
            "transport_p50_s": float(worst["p50_s"]),
            "topic": worst["topic"],
            "bag": worst_bag,
            "control_dt_s": control_dt_s,
            "per_bag": [{"bag": b, **t} for b, t in per_bag],
        }
    )
    line = (
        f"{worst['topic']}: log time minus header stamp {worst['p50_s'] * 1e3:.3g} ms "
        f"median, {p95 * 1e3:.3g} ms 95th percentile (worst bag {worst_bag}), against "
        f"the {control_dt_s * 1e3:.3g} ms control period"
    )
    if any(t["clocks_disagree"] for _, t in per_bag):
        least = min(t["min_s"] for _, t in per_bag)
        return Finding(
            branch="latency",
            verdict=Verdict.INCONCLUSIVE,
            title=TITLE,
            figures=figures,
            key_figure="transport_p95_s",
            summary=f"The stamping clock and the recorder's disagree: a message was logged "
            f"{-least * 1e3:.3g} ms before its stamp. {line}.",
            next_step="Synchronise the clocks of the driver's machine and the recorder's "
            "(chrony or PTP) and record again.",
        )
    if p95 <= ELIMINATE_PERIODS * control_dt_s:
        verdict, step = Verdict.ELIMINATED, "Nothing to change in the ROS 2 transport."
    elif p95 > IMPLICATE_PERIODS * control_dt_s:
        verdict = Verdict.IMPLICATED
        step = (
            "States arrive a frame late: move the policy onto the driver's machine or a "
            "faster transport (shared memory, a reliable QoS with a shallow queue), or "
            "train with this observation delay."
        )
    else:
        verdict = Verdict.INCONCLUSIVE
        step = (
            "Part of a frame is lost in transport: add the measured delay to the "
            "simulated observation, or move the policy closer to the driver."
        )
    return Finding(
        branch="latency",
        verdict=verdict,
        title=TITLE,
        figures=figures,
        key_figure="transport_p95_s",
        summary=f"{line}.",
        next_step=step,
    )


def assess(ctx: Context) -> list[Finding]:
    """The transport Finding of the rig's ROS 2 bags (none when it names no bag)."""
    from simgap.evidence.ros2_bag import rig_recording

    rig = ctx.rig
    if not rig.evidence.ros2_bags or rig.evidence.dataset is not None:
        return []
    ds = ctx.evidence.get("lerobot_dataset", rig_recording)
    dt = float(ctx.options.get("control_dt_s") or rig.control_dt_s)
    f = transport_finding(dict(ds.info.get("ros2", {})), dt)
    return [] if f is None else [f]
