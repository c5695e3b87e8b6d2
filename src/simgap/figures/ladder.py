"""The actuator branch's ``ladder`` figures (:class:`LadderFigures`, :class:`LadderDetails`):
servo bench logs (``evidence.actuator_logs``) fitted by the actuator ladder (ideal ->
delay_lag -> servo -> net), per joint, against the ideal actuator (the commanded position);
``simgap.branches.actuator``.

``delay_s`` is always the whole command-to-motion delay of a joint (control loop + servo).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Headline, JSONValue, Record, figure, finite, sig
from simgap.figures.delay import Delay
from simgap.figures.patch import PatchOffer


@dataclass(frozen=True, kw_only=True)
class LadderJoint(Record):
    """One joint's climb of the ladder: the rung selected and its held-out error."""

    delay: Delay | None = figure(
        TEXT,
        "the selected rung's command-to-motion delay (its best "
        "fit: the ladder gives it no interval)",
        default=None,
    )
    selected: str = figure(TEXT, "the rung selected: ideal, delay_lag, servo or net")
    ideal_mae_rad: float = figure("rad", "held-out mean absolute error of the ideal actuator")
    selected_mae_rad: float = figure("rad", "held-out mean absolute error of the selected rung")
    params: Mapping[str, float] = figure(
        TEXT,
        "the selected rung's numeric parameters by name, each in the unit its name "
        "ends with (lag_s [s], stiffness_nm_per_rad [N m/rad], ...)",
        default_factory=dict,
    )


@dataclass(frozen=True, kw_only=True)
class LadderFigures(Record):
    """Servo bench logs against the ideal actuator: per joint the rung of the ladder that
    explains them, its held-out error and delay, and the patch's proof."""

    branch = "actuator"
    kind = "ladder"

    noise_floor_rad: float = figure("rad", "the encoder's noise floor the errors are held against")
    joints: Mapping[str, LadderJoint] = figure(
        TEXT, "each joint fitted, by name", default_factory=dict
    )
    worst_ideal_mae_rad: float = figure(
        "rad", "the largest held-out error of the ideal actuator over the joints"
    )
    patch_proof: PatchOffer | None = figure(
        TEXT, "the MJCF patch's held-out proof (with a rig model)", default=None
    )

    def headline(self) -> Headline | None:
        """Where a model other than the ideal actuator was selected, the joint it fits worst
        (the finding's residual): ideal -> selected held-out error against the encoder floor;
        else the joint an ideal actuator misses most. The joint is named: the largest ideal
        error of all was, on the demo, the gripper's, not what the finding found."""
        floor = finite(self.noise_floor_rad)
        joints = {
            j: v
            for j, v in self.joints.items()
            if finite(v.ideal_mae_rad) is not None and finite(v.selected_mae_rad) is not None
        }
        if floor is None:
            return None
        if not joints:
            worst = finite(self.worst_ideal_mae_rad)
            if worst is None:
                return None
            return Headline(
                f"an ideal actuator misses by {sig(worst)} rad (worst joint, held "
                f"out) against the encoder noise floor {sig(floor)} rad",
                worst,
                floor,
            )
        fitted = {j: v for j, v in joints.items() if v.selected not in ("", "ideal")}
        if fitted:
            j = max(fitted, key=lambda k: fitted[k].selected_mae_rad)
            ideal, sel = fitted[j].ideal_mae_rad, fitted[j].selected_mae_rad
            more = f"worst of {len(fitted)} joints, held out" if len(fitted) > 1 else "held out"
            return Headline(
                f"{j}: ideal actuator {sig(ideal)} -> {fitted[j].selected} "
                f"{sig(sel)} rad ({more}) against the encoder noise floor "
                f"{sig(floor)} rad",
                sel,
                floor,
            )
        j = max(joints, key=lambda k: joints[k].ideal_mae_rad)
        ideal = joints[j].ideal_mae_rad
        return Headline(
            f"an ideal actuator misses by {sig(ideal)} rad ({j}, the worst joint, "
            f"held out) against the encoder noise floor {sig(floor)} rad",
            ideal,
            floor,
        )


@dataclass(frozen=True, kw_only=True)
class Rung(Record):
    """One rung of a joint's ladder as fitted (``ActuatorModel.to_dict``)."""

    model: str = figure(TEXT, "the rung: ideal, delay_lag, servo or net")
    train_mae_rad: float = figure("rad", "mean absolute error on the training logs")
    validation_mae_rad: float = figure("rad", "held-out mean absolute error")
    params: Mapping[str, JSONValue] = figure(
        TEXT,
        "the rung's parameters by name (units in their names; the servo's intervals "
        "and families as the fit gives them)",
        default_factory=dict,
    )
    fit_time_s: float = figure("s", "wall time of the fit")
    validation_per_log_rad: tuple[float, ...] = figure(
        "rad", "held-out mean absolute error per log", default=()
    )
    held_out_by_group_rad: Mapping[str, float] = figure(
        "rad", "held-out mean absolute error per group of logs", default_factory=dict
    )
    extra: Mapping[str, JSONValue] = figure(
        TEXT,
        "the rung's other diagnostics (the other held-out scheme, the friction "
        "families compared, profiles...)",
        default_factory=dict,
    )


@dataclass(frozen=True, kw_only=True)
class LadderJointDetails(Record):
    """One joint's ladder as the report plots it."""

    delay_s: float = figure("s", "the selected rung's command-to-motion delay")
    selected: str = figure(TEXT, "the rung selected")
    rungs: tuple[Rung, ...] = figure(TEXT, "every rung fitted, in ladder order", default=())
    verdict: str = figure(TEXT, "the joint's verdict")
    stop_reason: str = figure(TEXT, "why the climb stopped where it did")
    rungs_skipped: Mapping[str, str] = figure(
        TEXT, "rungs not fitted, and why", default_factory=dict
    )
    xcorr_delay_s: float = figure(
        "s", "the command-to-motion delay by cross-correlation (a first guess, not the fit's)"
    )
    load: str = figure(TEXT, "where the joint's load came from")
    held_out: str = figure(TEXT, "how logs were held out")
    held_out_logs: tuple[str, ...] = figure(
        TEXT,
        "the logs held out, when a single training log left the --validate logs as the fold",
        default=(),
    )
    test_logs: tuple[str, ...] = figure(
        TEXT, "the --validate logs left out of the selection", default=()
    )
    test_mae_rad: float | None = figure(
        "rad", "the selected fit's error on the test logs", default=None
    )


@dataclass(frozen=True, kw_only=True)
class LadderPatch(Record):
    """The MJCF patch of the ladder: its proof, or why none was offered."""

    mjcf_patch: PatchOffer | None = figure(TEXT, "the patch and its proof", default=None)
    mjcf_patch_not_offered: str = figure(TEXT, "why no patch was written", default="")


@dataclass(frozen=True, kw_only=True)
class LadderDetails(Record):
    """The ladder's whole result (``simgap actuator``'s JSON), which the report plots."""

    branch = "actuator"
    kind = "ladder"

    verdict: str = figure(TEXT, "the branch's verdict over the joints")
    noise_floor_rad: float = figure("rad", "the noise floor")
    noise_floor_source: str = figure(TEXT, "where the floor came from")
    seed: int | None = figure(UNITLESS, "seed of every random choice", default=None)
    joints: Mapping[str, LadderJointDetails] = figure(
        TEXT, "each joint fitted", default_factory=dict
    )
    unexcited_joints: Mapping[str, str] = figure(
        TEXT, "joints too still to fit, and why", default_factory=dict
    )
    resampling: tuple[Mapping[str, JSONValue], ...] = figure(
        TEXT, "how each log was resampled to a uniform step", default=()
    )
    selection_note: str = figure(TEXT, "what the --validate logs' error means", default="")
    artifacts: Mapping[str, str] = figure(TEXT, "files written, by name", default_factory=dict)
    patch_proof: LadderPatch | None = figure(TEXT, "the MJCF patch's proof", default=None)

    @classmethod
    def from_result(cls, out: Mapping[str, JSONValue]) -> LadderDetails:
        """From ``simgap.branches.actuator.analyse``'s JSON (less its ``branch``, which the
        Finding states; each rung's other diagnostics gathered in ``extra``)."""
        known = {f for f in Rung.__dataclass_fields__ if f != "extra"}
        joints = {}
        for j, jj in (out.get("joints") or {}).items():
            rungs = [
                {
                    **{k: v for k, v in r.items() if k in known},
                    "extra": {k: v for k, v in r.items() if k not in known},
                }
                for r in jj.get("rungs") or []
            ]
            joints[j] = {**jj, "rungs": rungs}
        data = {k: v for k, v in out.items() if k != "branch"}
        data["joints"] = joints
        return cls.from_mapping(data, where="details")
