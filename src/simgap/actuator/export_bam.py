"""BAM's own JSON parameter format, written and read, so a BAM user loads simgap's fit.

A BAM parameter file (``bam/params/<actuator>/<model>.json``, loaded by
``bam.model.load_model``) is a flat object of parameter values plus ``"model"`` (``m1`` ...
``m6``) and ``"actuator"`` (``xl330``, ``sts3215``, ...). BAM loads every key that names one
of its parameters and ignores the others. simgap writes the family's parameters under
BAM's names (``kt``, ``R``, ``armature``, ``q_offset``, ``friction_base``, ...; M3 and M4
use ``load_friction_base``/``load_friction_stribeck``), the transport delay as
``command_delay`` (a simgap key: BAM 1.0.2 has no transport delay and ignores it), the
STS3215's ``max_velocity`` and ``error_gain_ratio`` (1.0: simgap takes the 0.166 error gain
as measured), and keeps its own provenance under ``simgap`` (BAM ignores it).

What BAM computes with the file is stated, not assumed (``in_bam``): BAM 1.0.2's simulator
is simgap's physical servo (``physical.py``; the same samples, ``evidence.bam.bam_resample``)
driven by the header's supply voltage, without a delay, and with its XL330 firmware current
limit (1.75 A). On BAM's own logs simgap fits exactly that; elsewhere (a logged voltage, a
fitted delay) the file's ``simgap.in_bam`` gives the training MAE BAM will report and which
differences apply. ``tests/bam_real`` checks it against BAM 1.0.2 itself.

``load_bam_params`` reads such a file (simgap's or BAM's shipped ones) back into the
family, the servo and the parameter vector the simulator runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from simgap.actuator.families import servo_family
from simgap.actuator.family_fit import per_log_mae
from simgap.actuator.friction import PHYS_NAMES, friction_family
from simgap.actuator.physical import PhysicalSpace, simulate_physical
from simgap.actuator.servo import ServoBatch
from simgap.errors import InputError
from simgap.outputs import atomic_write_json

DELAY_KEY = "command_delay"
"""simgap's key for the transport delay [s] in a BAM file (BAM 1.0.2 has none: it ignores
the key, and simulates without the delay)."""

BAM_RELEASE = "1.0.2"
"""The BAM release ``in_bam`` describes (better-actuator-models on PyPI)."""

BAM_CURRENT_LIMIT_A = {"xl330": 1.75}
"""The firmware current limit [A] BAM 1.0.2's simulator applies to a servo's duty
(``bam/dynamixel/actuator.py``: ``XL330Actuator(max_current=1.75)``). BAM's main branch
dropped it after the release (commit edef2f4: the XL330 does not limit current in its
voltage mode)."""


def bam_params_json(family: str, servo: str, params: Mapping[str, float],
                    provenance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The BAM parameter object of one fit.

    Args:
        family: ``m1`` ... ``m6``.
        servo: servo family name (BAM's ``actuator``).
        params: BAM-named values (simgap's ``delay_s``, where the fit has one, becomes
            ``command_delay``).
        provenance: what to keep under ``simgap`` (fit, held-out scores...).
    """
    space = PhysicalSpace(friction_family(family), servo_family(servo),
                          fit_max_velocity="max_velocity" in params,
                          fit_delay="delay_s" in params)
    out: dict[str, Any] = {}
    for name in space.names:
        if name not in params:
            raise InputError(field=name, expected=f"a value for every {family} parameter",
                             got=f"keys {sorted(params)}")
        out[DELAY_KEY if name == "delay_s" else name] = float(params[name])
    if space.servo.name == "sts3215":
        out.setdefault("max_velocity", space.servo.max_velocity_rad_s)
        out["error_gain_ratio"] = 1.0
    out["model"] = family
    out["actuator"] = space.servo.name
    if provenance:
        out["simgap"] = dict(provenance)
    return out


def write_bam_params(path: str | Path, family: str, servo: str, params: Mapping[str, float],
                     provenance: Mapping[str, Any] | None = None) -> Path:
    """Write the BAM parameter file of one fit (atomically)."""
    return atomic_write_json(Path(path), bam_params_json(family, servo, params, provenance))


def load_bam_params(source: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """A BAM parameter file (or its parsed object), checked: ``model`` and ``actuator``
    known, every parameter of the family present (``command_delay``, simgap's key, defaults
    to 0: BAM's own files have no delay)."""
    if isinstance(source, Mapping):
        data, where = dict(source), "BAM parameters"
    else:
        p = Path(source)
        where = str(p)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(file=p, expected="a BAM parameter JSON", got="no such file") \
                from None
        except json.JSONDecodeError as e:
            raise InputError(file=p, expected="a BAM parameter JSON", got=str(e)) from e
    for key in ("model", "actuator"):
        if key not in data:
            raise InputError(file=where, field=key, expected="BAM's model and actuator keys",
                             got="nothing", fix="write the file with bam.fit or simgap")
    fam = friction_family(str(data["model"]))
    servo = servo_family(str(data["actuator"]))
    missing = [n for n in fam.free if n != "delay_s" and n not in data]
    if missing:
        raise InputError(file=where, field=missing[0], expected=f"every {fam.name} parameter",
                         got=f"missing {missing}")
    data.setdefault(DELAY_KEY, 0.0)
    data["_family"], data["_servo"] = fam.name, servo.name
    return data


def space_and_values(data: Mapping[str, Any]) -> tuple[PhysicalSpace, np.ndarray]:
    """The PhysicalSpace and parameter vector of a loaded BAM parameter object."""
    fam = friction_family(str(data["model"]))
    servo = servo_family(str(data["actuator"]))
    space = PhysicalSpace(fam, servo, fit_max_velocity="max_velocity" in data
                          and servo.max_velocity_box is not None)
    x = np.array([float(data[DELAY_KEY if n == "delay_s" else n]) for n in space.names])
    return space, x


def joint_bam_json(res: Any) -> dict[str, Any] | None:
    """The BAM parameter object of a ladder's ``JointResult`` (None unless its servo rung
    fitted a friction family on a known servo), with the held-out scores as provenance."""
    if res.bam_params is None or res.friction_family is None or res.servo_family is None:
        return None
    servo = res.rung("servo")
    prov = {"joint": res.joint, "selected_rung": res.selected, "held_out": res.held_out,
            "validation_mae_rad": servo.validation_mae_rad,
            "train_mae_rad": servo.train_mae_rad}
    if "test_mae_rad" in servo.details:  # the --validate logs, left out of the selection
        prov["test_mae_rad"] = servo.details["test_mae_rad"]
        prov["test_logs"] = [str(x) for x in res.test_logs]
    if servo.details.get("in_bam"):
        prov["in_bam"] = servo.details["in_bam"]
    return bam_params_json(res.friction_family, res.servo_family, res.bam_params, prov)


def as_bam_simulates(batch: ServoBatch, servo: str) -> ServoBatch:
    """The logs as BAM 1.0.2's simulator drives them: the header's supply voltage (BAM
    does not read the logged one) and BAM's current limit for the servo, if any."""
    lim = BAM_CURRENT_LIMIT_A.get(servo)
    return replace(batch, vin_t=None,
                   i_max=None if lim is None else np.full(batch.n_logs, lim))


def bam_prediction(space: PhysicalSpace, x: np.ndarray, batch: ServoBatch) -> np.ndarray:
    """What BAM 1.0.2 predicts with the parameters ``x`` (n,) on every log: shape (L, T)
    [rad] (the delay dropped, ``as_bam_simulates``)."""
    sup = space.superset(np.asarray(x, dtype=float)[None])
    sup[:, PHYS_NAMES.index("delay_s")] = 0.0
    out: np.ndarray = simulate_physical(sup, as_bam_simulates(batch, space.servo.name))[0]
    return out


def in_bam(space: PhysicalSpace, x: np.ndarray, batch: ServoBatch, train: np.ndarray,
           own_mae_rad: float) -> dict[str, Any]:
    """How the fit ``x`` (n,) scores once loaded in BAM 1.0.2, on the training logs
    (``train``: shape (L,), bool): the MAE BAM reports, simgap's own, and the differences
    between the two simulations that apply to this fit."""
    per = per_log_mae(bam_prediction(space, x, batch), batch)
    notes = []
    delay = space.named(x).get("delay_s", 0.0)
    if delay > 0:
        notes.append(f"BAM has no transport delay: the fitted {delay * 1e3:.3g} ms is dropped")
    if batch.vin_t is not None:
        notes.append("BAM drives with the header's supply voltage, simgap with the logged one")
    lim = BAM_CURRENT_LIMIT_A.get(space.servo.name)
    ours = batch.i_max
    if (lim is None) != (ours is None) or (lim is not None and ours is not None
                                           and not np.allclose(ours, lim)):
        notes.append(f"BAM {BAM_RELEASE} limits the {space.servo.name}'s current to {lim} A, "
                     f"simgap to {None if ours is None else float(np.max(ours))} A"
                     if lim is not None else f"BAM {BAM_RELEASE} does not limit the "
                     f"{space.servo.name}'s current, simgap does")
    return {"release": BAM_RELEASE, "train_mae_rad": float(per[train].mean()),
            "train_mae_by_log_rad": [float(v) for v in per[train]],
            "simgap_train_mae_rad": float(own_mae_rad), "differences": notes}
