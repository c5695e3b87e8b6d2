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

What BAM computes with the file is stated by ``simgap.actuator.in_bam``.

``load_bam_params`` reads such a file (simgap's or BAM's shipped ones) back into the
family, the servo and the parameter vector the simulator runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from simgap.actuator.families import servo_family
from simgap.actuator.friction import friction_family
from simgap.actuator.physical import PhysicalSpace
from simgap.errors import InputError
from simgap.outputs import atomic_write_json

DELAY_KEY = "command_delay"
"""simgap's key for the transport delay [s] in a BAM file (BAM 1.0.2 has none: it ignores
the key, and simulates without the delay)."""


def bam_params_json(
    family: str,
    servo: str,
    params: Mapping[str, float],
    provenance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The BAM parameter object of one fit.

    Args:
        family: ``m1`` ... ``m6``.
        servo: servo family name (BAM's ``actuator``).
        params: BAM-named values (simgap's ``delay_s``, where the fit has one, becomes
            ``command_delay``).
        provenance: what to keep under ``simgap`` (fit, held-out scores...).
    """
    space = PhysicalSpace(
        friction_family(family),
        servo_family(servo),
        fit_max_velocity="max_velocity" in params,
        fit_delay="delay_s" in params,
    )
    out: dict[str, Any] = {}
    for name in space.names:
        if name not in params:
            raise InputError(
                field=name,
                expected=f"a value for every {family} parameter",
                got=f"keys {sorted(params)}",
            )
        out[DELAY_KEY if name == "delay_s" else name] = float(params[name])
    if space.servo.name == "sts3215":
        out.setdefault("max_velocity", space.servo.max_velocity_rad_s)
        out["error_gain_ratio"] = 1.0
    out["model"] = family
    out["actuator"] = space.servo.name
    if provenance:
        out["simgap"] = dict(provenance)
    return out


def write_bam_params(
    path: str | Path,
    family: str,
    servo: str,
    params: Mapping[str, float],
    provenance: Mapping[str, Any] | None = None,
) -> Path:
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
            raise InputError(file=p, expected="a BAM parameter JSON", got="no such file") from None
        except json.JSONDecodeError as e:
            raise InputError(file=p, expected="a BAM parameter JSON", got=str(e)) from e
    for key in ("model", "actuator"):
        if key not in data:
            raise InputError(
                file=where,
                field=key,
                expected="BAM's model and actuator keys",
                got="nothing",
                fix="write the file with bam.fit or simgap",
            )
    fam = friction_family(str(data["model"]))
    servo = servo_family(str(data["actuator"]))
    missing = [n for n in fam.free if n != "delay_s" and n not in data]
    if missing:
        raise InputError(
            file=where,
            field=missing[0],
            expected=f"every {fam.name} parameter",
            got=f"missing {missing}",
        )
    data.setdefault(DELAY_KEY, 0.0)
    data["_family"], data["_servo"] = fam.name, servo.name
    return data


def space_and_values(data: Mapping[str, Any]) -> tuple[PhysicalSpace, np.ndarray]:
    """The PhysicalSpace and parameter vector of a loaded BAM parameter object."""
    fam = friction_family(str(data["model"]))
    servo = servo_family(str(data["actuator"]))
    space = PhysicalSpace(
        fam, servo, fit_max_velocity="max_velocity" in data and servo.max_velocity_box is not None
    )
    x = np.array([float(data[DELAY_KEY if n == "delay_s" else n]) for n in space.names])
    return space, x


def joint_bam_json(res: Any) -> dict[str, Any] | None:
    """The BAM parameter object of a ladder's ``JointResult`` (None unless its servo rung
    fitted a friction family on a known servo), with the held-out scores as provenance."""
    if res.bam_params is None or res.friction_family is None or res.servo_family is None:
        return None
    servo = res.rung("servo")
    prov = {
        "joint": res.joint,
        "selected_rung": res.selected,
        "held_out": res.held_out,
        "validation_mae_rad": servo.validation_mae_rad,
        "train_mae_rad": servo.train_mae_rad,
    }
    if "test_mae_rad" in servo.diagnostics:  # the --validate logs, left out of the selection
        prov["test_mae_rad"] = servo.diagnostics["test_mae_rad"]
        prov["test_logs"] = [str(x) for x in res.test_logs]
    if servo.diagnostics.get("in_bam"):
        prov["in_bam"] = servo.diagnostics["in_bam"]
    return bam_params_json(res.friction_family, res.servo_family, res.bam_params, prov)
