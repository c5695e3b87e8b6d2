"""MuJoCo export of a fitted actuator: a patched model written beside the original.

MJCF's ``<include>`` pastes a file in and cannot change the attributes of what it pasted,
so the patch is built with ``MjSpec`` instead: the original is parsed (never written), the
fitted values are set on the spec, asset folders are made absolute so the new file compiles
from anywhere, and the result is saved as a new MJCF file whose header comment names the
original and every value changed. The patched file is compiled again before it is kept.

Values set per joint (each optional): position-actuator ``kp``/``kv`` (``gainprm[0]``,
``biasprm[1:3]``), the native actuator ``delay`` (MuJoCo >= 3.5: ``delay`` [s], ``nsample``
history slots, linear ``interp``), a first-order ``filter`` lag (``dyntype``/``dynprm``),
the motor's ``forcerange``, and the joint's ``damping``, ``frictionloss`` and ``armature``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import mujoco

from simgap.errors import InputError
from simgap.outputs import atomic_write_text
from simgap.safe_names import checked_xml, xml_attr_whitespace, xml_comment
from simgap.sim.model import actuator_for_joint, compile_spec, load_model, load_spec

INTERP_LINEAR = 1
"""``interp`` code of linear interpolation of the delayed control."""


@dataclass(frozen=True)
class ActuatorSettings:
    """Fitted values for one joint; None leaves the model's value.

    Attributes:
        kp: position gain [N m/rad].
        kv: velocity gain [N m s/rad].
        delay_s: command transport delay [s].
        lag_s: first-order filter time constant [s].
        force_limit: motor torque limit [N m].
        damping: joint viscous friction [N m s/rad].
        frictionloss: joint Coulomb friction [N m].
        armature: joint rotor inertia [kg m^2].
    """

    kp: float | None = None
    kv: float | None = None
    delay_s: float | None = None
    lag_s: float | None = None
    force_limit: float | None = None
    damping: float | None = None
    frictionloss: float | None = None
    armature: float | None = None


def patch_spec(
    spec: mujoco.MjSpec, model: mujoco.MjModel, settings: Mapping[str, ActuatorSettings]
) -> mujoco.MjSpec:
    """Apply ``settings`` (joint name -> values) to ``spec`` in place and return it."""
    dt = float(model.opt.timestep)
    joints = {j.name: j for j in spec.joints}
    for name, s in settings.items():
        if name not in joints:
            from simgap.errors import NameNotFoundError

            raise NameNotFoundError("joint", name, list(joints))
        j = joints[name]
        if s.damping is not None:
            j.damping[0] = s.damping
        if s.frictionloss is not None:
            j.frictionloss = s.frictionloss
        if s.armature is not None:
            j.armature = s.armature
        if all(v is None for v in (s.kp, s.kv, s.delay_s, s.lag_s, s.force_limit)):
            continue
        act = spec.actuators[actuator_for_joint(model, name)]
        if s.kp is not None:
            act.gainprm[0] = s.kp
            act.biasprm[1] = -s.kp
        if s.kv is not None:
            act.biasprm[2] = -s.kv
        if s.force_limit is not None and math.isfinite(s.force_limit):
            act.forcelimited = 1
            act.forcerange[:] = [-s.force_limit, s.force_limit]
        if s.lag_s is not None and s.lag_s >= dt:
            act.dyntype = mujoco.mjtDyn.mjDYN_FILTER
            act.dynprm[0] = s.lag_s
        if s.delay_s is not None and s.delay_s > 0:
            act.delay = s.delay_s
            act.nsample = int(math.ceil(s.delay_s / dt)) + 2
            act.interp = INTERP_LINEAR
    return spec


def patch_notes(settings: Mapping[str, ActuatorSettings], physics_dt_s: float) -> list[str]:
    """What ``patch_spec`` leaves out, one sentence each: a filter time constant below the
    physics step is never written (the step cannot resolve it; an explicit filter that fast
    only adds a stiff state), and non-finite values are never written."""
    notes = []
    for name, s in settings.items():
        if s.lag_s is not None and 0 < s.lag_s < physics_dt_s:
            notes.append(
                f"{name!r}: lag {s.lag_s * 1e3:.3g} ms is below the "
                f"{physics_dt_s * 1e3:.3g} ms physics step; no filter written"
            )
        for k, v in asdict(s).items():
            if v is not None and not math.isfinite(v) and k != "force_limit":
                notes.append(f"{name!r}: {k} is not finite ({v}); not written")
    return notes


def _finite(s: ActuatorSettings) -> ActuatorSettings:
    vals = {
        k: (v if v is None or math.isfinite(v) or k == "force_limit" else None)
        for k, v in asdict(s).items()
    }
    return ActuatorSettings(**vals)


def _relative_asset_dirs(spec: mujoco.MjSpec, out_path: Path) -> None:
    """Name the spec's mesh and texture folders relative to the patch's own folder (with
    forward slashes), so that the output folder, copied or moved, still loads; another drive
    keeps the absolute folder (no relative path exists)."""
    here = os.path.abspath(out_path.parent)
    os.makedirs(here, exist_ok=True)  # to_xml recompiles: it finds the assets from there
    spec.modelfiledir = here
    for attr in ("meshdir", "texturedir"):
        val = getattr(spec, attr, "")
        if val and Path(val).is_absolute():
            try:
                rel = os.path.relpath(val, here).replace(os.sep, "/")
            except ValueError:
                continue
            setattr(spec, attr, rel)


def baked_unidentified(
    settings: Mapping[str, ActuatorSettings], unidentified: Mapping[str, Mapping[str, str]]
) -> list[str]:
    """One sentence per value the patch bakes that the fit declared not identifiable
    (``unidentified``: joint -> {kind: reason}), e.g. "'shoulder_pan': kp 1.52 baked at its
    best fit; not identified: masked by force saturation". A kind the settings leave out
    (None, or not finite) is not baked and not named."""
    out = []
    for j, s in settings.items():
        for kind, reason in unidentified.get(j, {}).items():
            v = getattr(s, kind, None)
            if v is None or not math.isfinite(v):
                continue
            why = " ".join(str(reason).split()) or "no reason given"
            out.append(f"{j!r}: {kind} {v:.3g} baked at its best fit; not identified: {why}")
    return out


def write_actuator_patch(
    original: str | Path,
    out_path: str | Path,
    settings: Mapping[str, ActuatorSettings],
    unidentified: Mapping[str, Mapping[str, str]] | None = None,
) -> Path:
    """Write the patched model to ``out_path`` and check that it compiles.

    Args:
        original: the MJCF to patch (never written).
        out_path: the patched MJCF.
        settings: joint -> the values to set.
        unidentified: joint -> {kind: reason} for values the fit declared not identifiable;
            the header names each one the patch bakes all the same (``baked_unidentified``).

    Raises:
        InputError: the original does not load, a joint is not in it, or the patched model
            does not compile (MuJoCo's message is kept).
    """
    original = Path(original).resolve()
    out_path = Path(out_path)
    if out_path.resolve() == original:
        raise InputError(
            file=out_path,
            expected="an output path other than the original model",
            fix="write the patch into the output folder",
        )
    model = load_model(original)
    spec = load_spec(original)
    base = original.parent
    for attr in ("meshdir", "texturedir"):
        val = getattr(spec, attr, "")
        if val and not Path(val).is_absolute():
            setattr(spec, attr, str((base / val).resolve()))
        elif not val:
            setattr(spec, attr, str(base))
    dt = float(model.opt.timestep)
    notes = patch_notes(settings, dt)
    settings = {j: _finite(s) for j, s in settings.items()}
    patch_spec(spec, model, settings)
    compile_spec(spec, out_path)
    _relative_asset_dirs(spec, out_path)  # compiled from absolute folders, written relative
    changes = "; ".join(
        f"{j!r}: "
        + ", ".join(
            f"{k}={v:.6g}"
            for k, v in asdict(s).items()
            if v is not None and not (k == "lag_s" and v < dt)
        )
        for j, s in settings.items()
    )
    left = ("\n     Not written: " + "; ".join(notes)) if notes else ""
    baked = baked_unidentified(settings, unidentified or {})
    if baked:
        left += "\n     Not identified, baked all the same: " + "; ".join(baked)
    try:  # named from the patch's own folder, so a copied output folder names it truly
        shown = Path(os.path.relpath(Path(original).absolute(), out_path.parent.absolute()))
    except ValueError:  # another drive: no relative path exists
        shown = Path(original)
    header = (
        f"<!-- simgap actuator patch of {xml_comment(shown.as_posix())} (the original is "
        f"not modified).\n     Changed: {xml_comment(changes + left)} -->\n"
    )
    text = header + xml_attr_whitespace(spec.to_xml())
    checked_xml(text, out_path.name)  # the spec compiled above; the header must not break it
    atomic_write_text(out_path, text)
    load_model(out_path)  # the written file itself must compile
    return out_path
