"""Per-episode MuJoCo model variants of a randomisation spec, built through MjSpec."""

from __future__ import annotations

import json
import math
from pathlib import Path

import mujoco
import numpy as np

from simgap.errors import InputError
from simgap.outputs import atomic_write_text
from simgap.safe_names import checked_xml, xml_attr_whitespace
from simgap.sim.model import load_spec
from simgap.values.randomization import Entry, RandomizationSpec


def _draw(e: Entry, rng: np.random.Generator) -> float:
    if e.kind == "pinned":
        assert e.value is not None
        return e.value
    assert e.low is not None and e.high is not None
    if e.distribution == "log_uniform":
        return float(math.exp(rng.uniform(math.log(e.low), math.log(e.high))))
    return float(rng.uniform(e.low, e.high))


def variant_spec(
    spec: RandomizationSpec, model_path: Path, rng: np.random.Generator
) -> tuple[mujoco.MjSpec, dict[str, float]]:
    """One variant: the model with one draw of every entry applied (and the draws).

    Raises:
        InputError: the model is missing or does not parse (MuJoCo's message is kept).
    """
    m = load_spec(model_path)
    draws = {e.name: _draw(e, rng) for e in spec.entries}
    by = {e.name: e for e in spec.entries}
    gain = draws.get("unit_gain_scale", 1.0)
    for act in m.actuators:
        if "kp" in draws:
            kp = draws["kp"]
        else:
            kp = float(act.gainprm[0]) * draws.get("kp_scale", 1.0)
        act.gainprm[0] = kp * gain
        act.biasprm[1] = -kp * gain
        if "kv" in draws:
            act.biasprm[2] = -draws["kv"] * gain
        if "servo_lag_time_constant_s" in draws and draws["servo_lag_time_constant_s"] > 0:
            act.dyntype = mujoco.mjtDyn.mjDYN_FILTEREXACT
            act.dynprm[0] = draws["servo_lag_time_constant_s"]
    for j in m.joints:
        if j.type == mujoco.mjtJoint.mjJNT_HINGE:
            j.damping = np.asarray(j.damping, dtype=float) * draws.get("joint_damping_scale", 1.0)
    if "object_mass_kg" in draws:
        for g in m.geoms:
            if g.name == by["object_mass_kg"].target:
                g.mass = draws["object_mass_kg"]
    if "pad_friction" in draws:
        pads = set(by["pad_friction"].target.split("|"))
        for g in m.geoms:
            if g.name in pads:
                fr = np.array(g.friction, dtype=float)
                fr[0] = draws["pad_friction"]
                g.friction = fr
    return m, draws


def write_variants(
    spec: RandomizationSpec, model_path: Path, out_dir: Path, *, n: int = 8, seed: int = 0
) -> list[Path]:
    """Write ``n`` variant MJCF files (``variant_000.xml``...) and ``variants.json`` (the
    draws; latency is per step, so it is listed there, not in the model)."""
    rng = np.random.default_rng(seed)
    load_spec(model_path)  # a missing or broken model is refused before any file is written
    out_dir.mkdir(parents=True, exist_ok=True)
    paths, table = [], []
    for i in range(n):
        m, draws = variant_spec(spec, model_path, rng)
        try:
            m.compile()
        except ValueError as e:
            raise InputError(
                file=model_path,
                expected="a model that compiles with the drawn values",
                got=str(e).strip()[:300],
                fix="check the randomisation's targets against the model",
            ) from e
        # MuJoCo's writer leaves a newline or tab in a name raw: escaped, then parsed back
        text = xml_attr_whitespace(m.to_xml())
        checked_xml(text, f"variant_{i:03d}.xml")
        p = atomic_write_text(out_dir / f"variant_{i:03d}.xml", text)
        paths.append(p)
        table.append({"file": p.name, **draws})
    paths.append(
        atomic_write_text(
            out_dir / "variants.json",
            json.dumps({"rig": spec.rig, "seed": seed, "variants": table}, indent=2) + "\n",
        )
    )
    return paths
