"""Findings as a diagnosis writes them, for the Rerun and MCAP tests (no rerun import here:
the MCAP tests run without rerun-sdk)."""

from __future__ import annotations

from typing import Any


def diagnosis() -> dict[str, Any]:
    """An implicated latency finding (no figures) and an eliminated actuator finding whose
    noise floor is 2 mrad on every SO-101 joint."""
    return {
        "rig": "so101-bench-3",
        "findings": [
            {
                "branch": "latency",
                "verdict": "implicated",
                "title": "Latency",
                "summary": "the loop overruns",
                "figures": {},
            },
            {
                "branch": "actuator",
                "kind": "joint_dynamics",
                "verdict": "eliminated",
                "title": "Actuator dynamics",
                "summary": "within the floor",
                "artifacts": {},
                "figures": {
                    "noise_floor_rad": {
                        j: {"total_rad": 0.002, "model_rad": 0.0}
                        for j in (
                            "shoulder_pan",
                            "shoulder_lift",
                            "elbow_flex",
                            "wrist_flex",
                            "wrist_roll",
                            "gripper",
                        )
                    }
                },
            },
        ],
    }


def timed_findings() -> list[dict[str, Any]]:
    """A time base, a stale first frame and failure phases, as findings.json writes them."""
    return [
        {
            "branch": "evidence",
            "kind": "time_base",
            "verdict": "eliminated",
            "title": "Time base",
            "summary": "fits",
            "figures": {
                "peak_speed_episode": 1,
                "peak_speed_frame": 7,
                "peak_speed_rad_s": 2.5,
                "peak_speed_joint": "elbow_flex",
                "episodes": 2,
                "frames": 60,
                "impossible_frames": 0,
                "stale_frames": 0,
                "moving_frames": 40,
                "gaps": 0,
            },
        },
        {
            "branch": "plumbing",
            "kind": "stale_first_frame",
            "verdict": "implicated",
            "title": "Stale first frame",
            "summary": "stale",
            "figures": {"stale_episodes": 1},
            "details": {
                "episodes": [
                    {
                        "episode": 0,
                        "tick": 0,
                        "taken_before_reset_s": 0.7,
                        "before_reset": True,
                        "same_as_previous_last": False,
                    },
                    {
                        "episode": 1,
                        "tick": 30,
                        "taken_before_reset_s": -0.1,
                        "before_reset": False,
                        "same_as_previous_last": False,
                    },
                ]
            },
        },
        {
            "branch": "phases",
            "verdict": "inconclusive",
            "title": "Failure phases",
            "summary": "lift",
            "figures": {},
            "details": {
                "real_episodes": [
                    {
                        "episode": 0,
                        "failure_phase": None,
                        "reached": "after_success",
                        "phases_s": {"approach": [0.0, 0.5]},
                    },
                    {
                        "episode": 1,
                        "failure_phase": "lift_and_carry",
                        "reached": "grasp",
                        "before": "a person marked it",
                        "phases_s": {"approach": [0.0, 0.3], "grasp": [0.4, 0.97]},
                    },
                ]
            },
        },
    ]
