"""Synthetic fleets: findings.json files whose per-arm values are drawn from a known
distribution (log-normal about a centre, relative spread ``tau``), each fit reporting its
own 95 % interval about a noisy estimate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll")
CENTRES = {"kp": 20.0, "kv": 0.8, "delay_s": 0.012}
TAU = 0.10
"""True unit-to-unit spread (log scale, ~10 %)."""
FAULT = (7, "elbow_flex", "kp", 0.5)
"""The planted fault of the tests: arm 7's elbow kp halved."""


def synth_fleet(
    seed: int,
    n_arms: int = 8,
    *,
    fault: tuple[int, str, str, float] | None = None,
    tau: float = TAU,
    fit_se: tuple[float, float] = (0.02, 0.05),
    unidentifiable: tuple[int, str, str] | None = None,
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """(arm name, findings) pairs and the truth ``{(param, joint): [true value per arm]}``.

    ``fault``: (arm index, joint, param, factor) multiplies that arm's true value.
    """
    rng = np.random.default_rng(seed)
    arms: list[tuple[str, dict[str, Any]]] = []
    truth: dict[tuple[str, str], list[float]] = {}
    for i in range(n_arms):
        params: dict[str, dict[str, float]] = {}
        ivs: dict[str, dict[str, list[float]]] = {}
        delay: dict[str, float] = {}
        div: dict[str, list[float]] = {}
        unid: dict[str, dict[str, str]] = {}
        for j in JOINTS:
            for p, c in CENTRES.items():
                true = c * float(np.exp(rng.normal(0.0, tau)))
                if fault is not None and fault[0] == i and fault[1] == j and fault[2] == p:
                    true *= fault[3]
                truth.setdefault((p, j), []).append(true)
                se = float(rng.uniform(*fit_se))
                est = float(np.log(true) + rng.normal(0.0, se))
                lo, hi = float(np.exp(est - 1.96 * se)), float(np.exp(est + 1.96 * se))
                if p == "delay_s":
                    delay[j], div[j] = float(np.exp(est)), [lo, hi]
                else:
                    params.setdefault(j, {})[p] = float(np.exp(est))
                    ivs.setdefault(j, {})[p] = [lo, hi]
        if unidentifiable is not None and unidentifiable[0] == i:
            unid.setdefault(unidentifiable[1], {})[unidentifiable[2]] = (
                "the fit's Hessian is singular along kv (condition 3e9)"
            )
        findings = {
            "rig": f"arm_{i}",
            "seed": 0,
            "stop": {},
            "findings": [
                {"branch": "latency", "verdict": "eliminated", "figures": {}},
                {
                    "branch": "actuator",
                    "kind": "joint_dynamics",
                    "verdict": "implicated" if fault and fault[0] == i else "eliminated",
                    "figures": {
                        "delay_s": delay,
                        "delay_interval_s": div,
                        "params": params,
                        "params_interval": ivs,
                        "not_identifiable": unid,
                    },
                },
            ],
        }
        arms.append((f"arm_{i}", findings))
    return arms, truth


def write_fleet(arms: list[tuple[str, dict[str, Any]]], root: Path) -> list[Path]:
    """Each arm's findings.json in ``root/<arm>/`` and a fleet.json listing them."""
    out = []
    for name, f in arms:
        d = root / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "findings.json").write_text(json.dumps(f), encoding="utf-8")
        out.append(d)
    (root / "fleet.json").write_text(
        json.dumps(
            {"arms": [{"name": n, "folder": n, "status": "done", "rig": None} for n, _ in arms]}
        ),
        encoding="utf-8",
    )
    return out
