"""The demo's simulated control loop timing: a seeded per-stage timing log.

Stage durations are drawn per tick from distributions shaped like a real wrist-camera
deployment with the policy served over a network hop: camera capture and transport,
preprocessing, inference, the network round trip, and the servo command write. The rate of
the network's exponential tail is fixed per episode and its delay redrawn every tick
(Peng et al. 2017), so the demo plants latency with jitter that overruns a 15 Hz control
period in a sizeable share of ticks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simgap.outputs import atomic_write_text


@dataclass(frozen=True)
class LoopTiming:
    """Parameters of the simulated loop [s]. Medians of lognormal stages, spread sigma.

    Attributes:
        camera_s: median camera capture + transport.
        preprocess_s: median preprocessing.
        inference_s: median inference.
        network_base_s: fixed part of the network round trip.
        network_rate_range: (low, high) exponential rate [1/s] of the network's added delay,
            drawn once per episode.
        command_s: median servo command write.
        sigma: lognormal spread of the lognormal stages.
    """

    camera_s: float = 0.018
    preprocess_s: float = 0.004
    inference_s: float = 0.028
    network_base_s: float = 0.006
    network_rate_range: tuple[float, float] = (60.0, 160.0)
    command_s: float = 0.003
    sigma: float = 0.18


def simulate_ticks(
    n_episodes: int = 20,
    steps: int = 150,
    seed: int = 0,
    timing: LoopTiming = LoopTiming(),
    control_dt_s: float = 1 / 15,
) -> list[dict[str, object]]:
    """Timing-log records (one per tick) for a seeded simulated control loop."""
    rng = np.random.default_rng(seed)
    records: list[dict[str, object]] = []
    t = 0.0
    for ep in range(n_episodes):
        rate = rng.uniform(*timing.network_rate_range)
        for step in range(steps):
            stages = {
                "camera": timing.camera_s * rng.lognormal(0.0, timing.sigma),
                "preprocess": timing.preprocess_s * rng.lognormal(0.0, timing.sigma),
                "inference": timing.inference_s * rng.lognormal(0.0, timing.sigma),
                "network": timing.network_base_s + rng.exponential(1.0 / rate),
                "command": timing.command_s * rng.lognormal(0.0, timing.sigma),
            }
            records.append(
                {
                    "episode": ep,
                    "step": step,
                    "t": round(t, 6),
                    "stages": {k: round(v, 7) for k, v in stages.items()},
                }
            )
            t += max(control_dt_s, sum(stages.values()))
        t += 2.0  # reset between episodes
    return records


def write_timing_log(path: str | Path, **kwargs: object) -> Path:
    """Write the simulated loop's timing log as JSON Lines (atomically)."""
    recs = simulate_ticks(**kwargs)  # type: ignore[arg-type]
    return atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in recs))
