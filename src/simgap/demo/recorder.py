"""The demo bench recorder: drive the twin (and the simulation) and record as data arrives.

``record_bench(folder, seed)`` runs the scripted pick and place over a set of seeded cube
placements inside the 20 x 20 cm training square on the bench twin
and on the nominal model, and writes the evidence named in the demo ``rig.toml``: a LeRobot
v3 dataset of the bench (with frames), the same protocol in simulation, the timing log,
simulated and real evaluation manifests, a frames folder, push logs, static-object poses,
the deployment trace and actuator excitation logs. ``episodes.py`` holds the per-episode
loops; this module holds the protocol and the files.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.demo.bench import run_real, run_sim
from simgap.demo.chirps import chirps
from simgap.demo.episode import BIN_RADIUS_M, EpisodeResult
from simgap.demo.frames import camera_shift_px, write_frames
from simgap.demo.poses import static_poses
from simgap.demo.pushes import push_logs
from simgap.demo.script import Script
from simgap.demo.timing import write_timing_log
from simgap.demo.truth import NOT_PLANTED, TRUTH
from simgap.demo.twin import JOINTS
from simgap.demo.writers import write_csv, write_jsonl, write_lerobot_v3, write_manifest_toml
from simgap.outputs import atomic_write_json

FPS = 15
NAMES = [f"{j}.pos" for j in JOINTS]
WORKSPACE_X = (0.14, 0.34)
WORKSPACE_Y = (-0.10, 0.10)
TASK = "Put the red cube in the blue bin."
N_INSIDE = 12
N_OUTSIDE = 0  # every evaluation placement inside training's square: not a planted fault


@dataclass(frozen=True)
class Files:
    """Evidence file names, relative to the demo folder (the ``[evidence]`` of rig.toml)."""

    dataset: str = "recordings/real"
    sim_dataset: str = "recordings/sim"
    timing_log: str = "timing.jsonl"
    sim_manifest: str = "eval/sim.toml"
    real_manifest: str = "eval/real.toml"
    frames: str = "frames"
    trace: str = "trace.jsonl"
    push_logs: tuple[str, ...] = ("push/push_01.csv", "push/push_02.csv")
    static_object_poses: str = "static_object_poses.csv"
    actuator_logs: tuple[str, ...] = ("servo/chirp_01.csv", "servo/chirp_02.csv")
    policy: str = "policy/scripted_pick_place.json"
    truth: str = "truth.json"


FILES = Files()


def initial_states(seed: int) -> list[tuple[float, float, float]]:
    """Seeded cube placements (x, y, yaw) in the model frame [m, m, rad]: ``N_INSIDE``
    inside the training square, then ``N_OUTSIDE`` outside it, interleaved."""
    rng = np.random.default_rng([seed, 7])
    inside = [
        (
            rng.uniform(WORKSPACE_X[0] + 0.02, WORKSPACE_X[1] - 0.02),
            rng.uniform(WORKSPACE_Y[0] + 0.01, WORKSPACE_Y[1] - 0.01),
        )
        for _ in range(N_INSIDE)
    ]
    outside = []
    for i in range(N_OUTSIDE):
        if i % 2 == 0:
            outside.append(
                (
                    rng.uniform(WORKSPACE_X[1] + 0.03, WORKSPACE_X[1] + 0.07),
                    rng.uniform(-0.06, 0.06),
                )
            )
        else:
            outside.append(
                (
                    rng.uniform(0.2, 0.3),
                    float(np.sign(rng.uniform(-1, 1))) * rng.uniform(0.12, 0.15),
                )
            )
    xy = inside[:]
    for i, o in enumerate(outside):
        xy.insert(2 + 3 * i, o)
    out = []
    for x, y in xy:
        yaw = math.atan2(y, x - 0.0388353)
        out.append((round(float(x), 4), round(float(y), 4), round(yaw, 4)))
    return out


def states_hash(states: list[tuple[float, float, float]]) -> str:
    """sha256 of the states' compact JSON, values rounded to 1e-6 (the manifest's hash)."""
    canon = [[round(float(v), 6) for v in s] for s in states]
    return hashlib.sha256(json.dumps(canon, separators=(",", ":")).encode()).hexdigest()


def _manifest(
    folder: Path,
    rel: str,
    kind: str,
    states: list[tuple[float, float, float]],
    results: list[EpisodeResult],
    seed: int,
    policy_hash: str,
    model_hash: str,
) -> None:
    env: dict[str, Any] = {"kind": kind}
    if kind == "sim":
        env.update(model="so101_demo.xml", commit=model_hash)
    else:
        env.update(rig="simgap-demo-so101")
    trials = []
    for i, r in enumerate(results):
        t: dict[str, Any] = {"success": r.success, "initial_state": i}
        if not r.success:
            t["phase"] = r.phase
            t["note"] = r.note + ("" if r.inside else " (placed outside the training square)")
        trials.append(t)
    write_manifest_toml(
        folder / rel,
        {
            "policy": {"checkpoint": FILES.policy, "sha256": policy_hash},
            "environment": env,
            "initial_states": {
                "states": [list(s) for s in states],
                "seed": seed,
                "hash": states_hash(states),
            },
            "success": {
                "predicate": "cube_in_bin",
                "threshold": BIN_RADIUS_M,
                "judge": "automatic",
            },
        },
        trials,
        header=f"simgap demo: {kind} evaluation of the scripted pick and place"
        + (" on the synthetic bench (a twin with planted faults)." if kind == "real" else "."),
    )


def record_bench(folder: str | Path, seed: int = 0) -> dict[str, Any]:
    """Record the whole demo bench into ``folder``; returns the computed truth figures."""
    folder = Path(folder)
    script = Script()
    states = initial_states(seed)
    n_ep = len(states)
    dt = 1.0 / FPS
    steps = script.steps(dt)
    timing_path = write_timing_log(
        folder / FILES.timing_log, seed=seed, n_episodes=n_ep, steps=steps
    )
    ticks = [json.loads(line) for line in timing_path.read_text().splitlines() if line]
    policy = {
        "kind": "scripted pick and place (not a learned policy)",
        "script": {k: v for k, v in script.__dict__.items()},
    }
    policy_bytes = (json.dumps(policy, sort_keys=True, indent=2) + "\n").encode()
    from simgap.outputs import atomic_write_bytes

    atomic_write_bytes(folder / FILES.policy, policy_bytes)
    policy_hash = hashlib.sha256(policy_bytes).hexdigest()
    model_hash = hashlib.sha256((folder / "so101_demo.xml").read_bytes()).hexdigest()

    inside = [
        WORKSPACE_X[0] <= s[0] <= WORKSPACE_X[1] and WORKSPACE_Y[0] <= s[1] <= WORKSPACE_Y[1]
        for s in states
    ]
    real = run_real(states, inside, ticks, script, seed)
    sim = run_sim(states, inside, script)

    write_lerobot_v3(
        folder / FILES.dataset,
        [e.frames for e in real.episodes],
        fps=FPS,
        names=NAMES,
        task=TASK,
        robot_type="so101_follower",
        image_key="observation.images.wrist",
    )
    write_lerobot_v3(
        folder / FILES.sim_dataset,
        [e.frames for e in sim.episodes],
        fps=FPS,
        names=NAMES,
        task=TASK,
        robot_type="so101_follower",
        image_key="observation.images.wrist",
    )
    _manifest(
        folder,
        FILES.sim_manifest,
        "sim",
        states,
        [e.result for e in sim.episodes],
        seed,
        policy_hash,
        model_hash,
    )
    _manifest(
        folder,
        FILES.real_manifest,
        "real",
        states,
        [e.result for e in real.episodes],
        seed,
        policy_hash,
        model_hash,
    )
    write_jsonl(folder / FILES.trace, real.trace)
    write_frames(folder / FILES.frames, real)
    pushes = push_logs(seed)
    for rel, (header, rows) in zip(FILES.push_logs, pushes, strict=True):
        write_csv(folder / rel, header, rows)
    header, rows, cube_world = static_poses(seed)
    write_csv(folder / FILES.static_object_poses, header, rows)
    for rel, (header, rows) in zip(FILES.actuator_logs, chirps(seed), strict=True):
        write_csv(folder / rel, header, rows)

    totals = np.array([sum(t["stages"].values()) for t in ticks])
    computed = {
        "latency": {
            "total_p50_s": float(np.percentile(totals, 50)),
            "total_p95_s": float(np.percentile(totals, 95)),
            "overrun_fraction": float(np.mean(totals > dt)),
            "control_dt_s": dt,
        },
        "camera": camera_shift_px(),
        "exposure_gain": real.gains,
        "static_object_world_m": [float(x) for x in cube_world],
        "success": {
            "sim": int(sum(e.result.success for e in sim.episodes)),
            "real": int(sum(e.result.success for e in real.episodes)),
            "trials": n_ep,
        },
    }
    truth = {
        "planted": TRUTH.to_dict(),
        "computed": computed,
        "not_planted": list(NOT_PLANTED),
        "seed": seed,
        "files": FILES.__dict__,
    }
    atomic_write_json(folder / FILES.truth, truth)
    return truth
