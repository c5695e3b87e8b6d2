"""Plumbing checks on the setup around the loop: stale first frames, a checkpoint that only
loads on a GPU, motor temperatures drifting between episodes, a policy server reachable from
the network. Each returns a Finding (implicated or eliminated) or None when the evidence is
absent."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

import numpy as np

from simgap.figures.plumbing import (
    CheckpointDetails,
    CheckpointFigures,
    PolicyServerFigures,
    StaleFirstFrameDetails,
    StaleFirstFrameFigures,
    TemperatureDriftFigures,
)
from simgap.finding import Finding
from simgap.plumbing.motion import make_finding
from simgap.values.trace import MOTORS, CheckpointProbe, Trace

TEMPERATURE_DRIFT_C = 5.0
"""Mean motor temperature rising this much [deg C] from the first to the last episode."""
TIME_EPS_S = 1e-6


def _reset_time(trace: Trace, rows: np.ndarray, first_row: int) -> float | None:
    """The latest ``reset`` event of the episode at or before its first image (None if none)."""
    first_t = float(trace.t[first_row])
    in_episode = set(rows.tolist())
    cands = [
        e.t
        for e in trace.events
        if e.name == "reset" and e.row in in_episode and e.t <= first_t + TIME_EPS_S
    ]
    if not cands and rows[0] > 0:  # a writer may log the reset with the previous tick
        cands = [e.t for e in trace.events if e.name == "reset" and e.row == rows[0] - 1]
    return max(cands) if cands else None


def check_stale_first_frame(trace: Trace) -> Finding | None:
    """Each episode's first image: taken before the episode's ``reset`` event (``image_t``
    earlier than the event), or identical to the previous episode's last image (``image_sha1``).

    Needs per tick: ``episode``, ``t``, ``observation.image_t`` (capture time on the trace's
    clock; or ``image_age_s``, capture = ``t`` - age) and ``events`` with ``reset`` and its time
    for the time test; ``observation.image_sha1`` for the hash test.
    """
    img_t = np.where(np.isfinite(trace.image_t), trace.image_t, trace.t - trace.image_age_s)
    has_img = np.isfinite(img_t) | np.array([s is not None for s in trace.image_sha1])
    if not has_img.any():
        return None
    episodes = list(dict.fromkeys(trace.episode.tolist()))
    per: list[dict[str, Any]] = []
    prev_last_sha: str | None = None
    for ep in episodes:
        rows = np.flatnonzero(trace.episode == ep)
        rows_img = rows[has_img[rows]]
        if rows_img.size == 0:
            continue
        first = int(rows_img[0])
        reset = _reset_time(trace, rows, first)
        lead = (
            None if reset is None or not np.isfinite(img_t[first]) else float(reset - img_t[first])
        )
        before = lead is not None and lead > TIME_EPS_S
        sha = trace.image_sha1[first]
        repeated = sha is not None and prev_last_sha is not None and sha == prev_last_sha
        per.append(
            {
                "episode": int(ep),
                "tick": int(trace.tick[first]),
                "image_t": float(img_t[first]) if np.isfinite(img_t[first]) else None,
                "reset_t": reset,
                "taken_before_reset_s": lead,
                "before_reset": bool(before),
                "same_as_previous_last": bool(repeated),
            }
        )
        prev_last_sha = trace.image_sha1[int(rows_img[-1])]
    if not per:
        return None
    stale = [p for p in per if p["before_reset"] or p["same_as_previous_last"]]
    leads = [p["taken_before_reset_s"] for p in per if p["before_reset"]]
    figs = {
        "stale_episodes": len(stale),
        "episodes_checked": len(per),
        "before_reset_episodes": sum(p["before_reset"] for p in per),
        "repeated_image_episodes": sum(p["same_as_previous_last"] for p in per),
        "max_taken_before_reset_s": max(leads) if leads else 0.0,
        "resets_logged": sum(p["reset_t"] is not None for p in per),
    }
    summary = (
        f"{len(stale)} of {len(per)} episodes started from a stale image: "
        f"{figs['before_reset_episodes']} taken before the scene was reset (up to "
        f"{figs['max_taken_before_reset_s'] * 1e3:.0f} ms before), "
        f"{figs['repeated_image_episodes']} identical to the previous episode's last."
        if stale
        else f"All {len(per)} episodes started from an image taken after their reset."
    )
    return make_finding(
        "Stale first frame",
        bool(stale),
        StaleFirstFrameFigures.from_mapping(figs),
        "stale_episodes",
        summary,
        "Reset the scene first, then wait for a frame captured after the reset (e.g. "
        "async_read, or discard frames older than the reset) before the first decision.",
        details=StaleFirstFrameDetails.from_mapping({"episodes": per}, where="details"),
    )


_NOT_GPU = {
    "not_a_checkpoint": (
        "Checkpoint is not a checkpoint",
        "{path} is neither a PyTorch zip archive nor a pickle: it is not a checkpoint.",
        "Point meta.checkpoint at the weights file the deployment loads.",
    ),
    "unsafe_pickle": (
        "Checkpoint holds unsafe pickled objects",
        "{path} holds Python objects beyond tensors, which the safe loader "
        "(weights_only=True) refuses: {error}",
        "Do not load it with weights_only=False (that runs code from the file). Re-save "
        "the weights as a plain state_dict of tensors, or as safetensors, from a trusted "
        "copy.",
    ),
    "unreadable": (
        "Checkpoint does not load",
        "{path} does not load on the CPU with the safe loader: {error}",
        "Check that the file is complete (not truncated) and was written by torch.save.",
    ),
}


def check_checkpoint(probe: CheckpointProbe | None) -> Finding | None:
    """A checkpoint saved from CUDA memory: storages tagged ``cuda``, so ``torch.load``
    without ``map_location`` fails on a machine without CUDA."""
    if probe is None:
        return None
    cuda = [loc for loc in probe.locations if loc.startswith("cuda")]
    figs = {
        "checkpoint": str(probe.path),
        "storage_locations": list(probe.locations),
        "cuda_storage_locations": len(cuda),
        "loads_without_map_location": probe.loads_plain,
        "loads_with_map_location_cpu": probe.loads_cpu,
        "cuda_available_here": probe.cuda_available,
    }
    bad = bool(cuda) or not probe.loads_plain
    kind = getattr(probe, "kind", "cuda" if cuda else "ok")
    figs["probe"] = kind
    if kind in _NOT_GPU:
        title, summary, step = _NOT_GPU[kind]
        return make_finding(
            title,
            True,
            CheckpointFigures.from_mapping(figs),
            "loads_without_map_location",
            summary.format(path=probe.path, error=probe.cpu_error),
            step,
            details=CheckpointDetails(plain_error=probe.plain_error, cpu_error=probe.cpu_error),
        )
    if cuda:
        summary = (
            f"The checkpoint's tensors are tagged {', '.join(cuda)}: it was saved from "
            "GPU memory"
            + (
                " and does not load here without map_location='cpu'."
                if not probe.loads_plain
                else "; it loads here only because this machine has CUDA."
            )
        )
    elif not probe.loads_plain:
        summary = f"The checkpoint does not load on the CPU: {probe.plain_error}"
    else:
        summary = "The checkpoint loads on the CPU without a map location."
    return make_finding(
        "Checkpoint loads only on a GPU",
        bad,
        CheckpointFigures.from_mapping(figs),
        "loads_without_map_location",
        summary,
        "Load with torch.load(path, map_location='cpu') (keeping the safe "
        "default weights_only=True), or re-save the checkpoint from CPU memory "
        "(model.cpu().state_dict()).",
        details=CheckpointDetails(plain_error=probe.plain_error, cpu_error=probe.cpu_error),
    )


def _temperatures(trace: Trace) -> dict[str, np.ndarray]:
    """Per motor, temperature per tick [deg C] from reads or observation features."""
    out: dict[str, np.ndarray] = {}
    for m in MOTORS:
        col = trace.observation.get(f"{m}.temperature")
        if col is not None and np.any(np.isfinite(col)):
            out[m] = col
    reads = [r for r in trace.reads if r.register == "Present_Temperature"]
    for m in MOTORS:
        if m in out:
            continue
        vals = np.full(len(trace), np.nan)
        for r in reads:
            if r.motor == m:
                vals[r.row] = r.value
        if np.any(np.isfinite(vals)):
            out[m] = vals
    return out


def check_temperature_drift(trace: Trace) -> Finding | None:
    """Mean motor temperature per episode; the rise from the first to the last episode."""
    temps = _temperatures(trace)
    episodes = list(dict.fromkeys(trace.episode.tolist()))
    if not temps or len(episodes) < 2:
        return None
    means: dict[str, list[float | None]] = {}
    drift: dict[str, float] = {}
    for m, col in temps.items():
        row = []
        for ep in episodes:
            v = col[trace.episode == ep]
            v = v[np.isfinite(v)]
            row.append(float(v.mean()) if v.size else None)
        means[m] = row
        known = [x for x in row if x is not None]
        if len(known) >= 2:
            drift[m] = known[-1] - known[0]
    if not drift:
        return None
    worst = max(drift, key=lambda m: drift[m])
    bad = drift[worst] > TEMPERATURE_DRIFT_C
    figs = {
        "max_drift_c": drift[worst],
        "worst_motor": worst,
        "drift_c": drift,
        "episodes": len(episodes),
        "episode_mean_c": means,
    }
    summary = (
        f"{worst} warmed by {drift[worst]:.1f} C from the first to the last of "
        f"{len(episodes)} episodes: the servos' behaviour drifts across the evaluation."
        if bad
        else f"Motor temperatures stayed within {drift[worst]:.1f} C across "
        f"{len(episodes)} episodes."
    )
    return make_finding(
        "Motor temperature drift",
        bad,
        TemperatureDriftFigures.from_mapping(figs),
        "max_drift_c",
        summary,
        "Rest the arm between episodes (or cool it to a fixed temperature) and reduce "
        "holding torque; compare episodes at the same temperature.",
    )


def check_policy_server(meta: Mapping[str, Any], rig_address: str | None) -> Finding | None:
    """A policy server bound to a non-loopback address (reachable from the network)."""
    addr = meta.get("policy_server") or rig_address
    if not addr:
        return None
    text = str(addr).strip()
    host = text.rsplit(":", 1)[0] if text.count(":") == 1 or text.startswith("[") else text
    host = host.strip("[]")
    if host.lower() == "localhost":
        loopback, any_iface = True, False
    else:
        try:
            ip = ipaddress.ip_address(host)
            loopback, any_iface = ip.is_loopback, ip.is_unspecified
        except ValueError:
            loopback, any_iface = False, False
    figs = {
        "address": text,
        "host": host,
        "loopback": loopback,
        "all_interfaces": any_iface,
        "source": "trace" if meta.get("policy_server") else "rig",
    }
    summary = (
        f"The policy server listens on {text}, "
        + ("every network interface" if any_iface else "a network address")
        + ": anyone on the network can send it observations or read its actions."
        if not loopback
        else f"The policy server listens on loopback ({text})."
    )
    return make_finding(
        "Policy server address",
        not loopback,
        PolicyServerFigures.from_mapping(figs),
        "loopback",
        summary,
        "Bind the policy server to 127.0.0.1 and reach it through an SSH tunnel when "
        "client and server run on different machines.",
    )
