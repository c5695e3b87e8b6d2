"""The appearance branch: what the policy sees on the real arm against what it saw in training.

Three findings: exposure and background (per-region real/sim brightness, the background's
level, exposure drift, the rest-pose match), the camera's pose (offset from the modelled
camera in policy pixels and as a ratio to training's camera jitter), and the reach of view
from the start pose (with the evaluation's initial states against training's workspace).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.appearance.compare import FLAT_SPREAD, AppearanceResult, analyse
from simgap.appearance.flags import BACKGROUND_KEY, CLIP_MIN
from simgap.appearance.regions import difference_image, difference_map
from simgap.appearance.regions import region_means as mean_region
from simgap.appearance.visibility import Visibility, inside_workspace, reach_of_view
from simgap.branches.branch import Branch
from simgap.branches.context import Context, not_measured
from simgap.evaluation.stats import median_interval
from simgap.evidence.frames import load_frames
from simgap.evidence.initial_states import load_initial_states
from simgap.figures.appearance import (
    CameraFigures,
    ExposureDetails,
    ExposureFigures,
    ReachFigures,
)
from simgap.finding import Finding, Verdict
from simgap.report import plots_appearance
from simgap.rig import Rig
from simgap.sim.render import SceneRenderer, region_ids
from simgap.values.frames import FrameSet

BRANCH = "appearance"
FRAMES_NEED = (
    "camera frames that show the scene, the gripper in view (evidence.frames or "
    "the dataset's camera): the compared ones are flat"
)
BACKGROUND_NEED = (
    f"{BACKGROUND_KEY} = ... (the brightest background training showed, "
    "0..255; 0 for a pure-black simulator)"
)
MATCH_MIN = 0.5
"""Best match score (mean NCC over the gripper's pixels, -1..1) below which no candidate camera
pose shows the gripper where the real frames do: no shift is measured (the demo's best is
0.91, the model's own frames about 1)."""
JITTER_NEED = (
    "camera.training_jitter_px (or training_jitter_m / training_jitter_deg) = ... "
    "from training's camera randomisation"
)


def _stated(rig: Rig, key: str) -> float | None:
    """``camera.<key>`` when the user stated it (None when left out or guessed)."""
    v = getattr(rig.camera, key, None)
    return None if v is None or not rig.stated(f"camera.{key}") else float(v)


def provenance(rig: Rig) -> dict[str, str]:
    """Where each camera value the appearance verdicts compare against comes from."""
    return {
        f"camera.{k}": rig.provenance(f"camera.{k}")
        for k in (
            "training_background_max",
            "training_jitter_px",
            "training_jitter_m",
            "training_jitter_deg",
        )
    }


def _flat_summary(res: AppearanceResult, what: str) -> str:
    spread = res.largest_spread or 0.0
    return (
        f"The real frames show no scene: their brightness varies by at most {spread:.2f} "
        f"of 255 (flat below {FLAT_SPREAD:g}), so {what} cannot be measured on them. A "
        "flat frame is what a covered, disconnected or unexposed camera gives; check the "
        "camera before anything else."
    )


def _img(a: np.ndarray) -> list[Any]:
    return np.clip(np.rint(a), 0, 255).astype(np.uint8).tolist()


def _start_q(fs: FrameSet, renderer: SceneRenderer) -> np.ndarray | None:
    start = [i for i, lab in enumerate(fs.pose_label) if lab == "start"]
    if start:
        out: np.ndarray = np.median(fs.frames.q[start], axis=0)
        return out
    return renderer.kin.keyframe_q("start")


def run(
    rig: Rig,
    fs: FrameSet,
    *,
    max_frames: int = 12,
    camera_frames: int = 2,
    grid_m: np.ndarray | None = None,
) -> tuple[AppearanceResult, Visibility | None]:
    """The appearance analysis on values (the CLI and ``assess`` both call this)."""
    assert rig.camera is not None
    cam = rig.camera
    with SceneRenderer(
        rig.model_path,
        cam.name,
        rig.joint_names,
        cam.render_resolution,
        cam.policy_resolution,
        object_body=rig.object_body,
        object_geom=rig.object_geom,
        source=rig.source,
    ) as r:
        groups = region_ids(r, rig.gripper_geoms, rig.object_geom)
        # a value rig.toml marks '# guessed' is nobody's statement: no verdict rests on it
        res = analyse(
            r,
            fs,
            groups,
            training_background_max=_stated(rig, "training_background_max"),
            jitter={k: _stated(rig, f"training_jitter_{k}") for k in ("px", "m", "deg")},
            max_frames=max_frames,
            camera_frames=camera_frames,
        )
        vis = None
        q0 = _start_q(fs, r)
        if q0 is not None and groups["object"] and r.object_body:
            axis, _, _ = r.kin.base_axis()
            vis = reach_of_view(
                r,
                q0,
                groups["object"][0],
                axis,
                r.kin.body_rest_z(r.object_body),
                distances_m=grid_m,
            )
    return res, vis


def findings(
    rig: Rig, res: AppearanceResult, vis: Visibility | None, initial_states: np.ndarray | None
) -> list[Finding]:
    """Build the three appearance findings from the analysis."""
    fl = {f.name: f for f in res.flags}
    gains = res.gains("jaws")
    rec_gain = fl["exposure_mismatch"].values.get("gain_by_recording", {})
    obj = [c.regions["object"].gain for c in res.comparisons]
    bg = fl["background_not_dark"]
    raised = [f.name for f in res.flags if f.raised]
    bg_unstated = "not_stated" in bg.values or _stated(rig, "training_background_max") is None
    prov = provenance(rig)
    region_means = {
        name: mean_region([c.regions[name] for c in res.comparisons])
        for name in ("jaws", "object", "background")
    }
    figures: dict[str, Any] = {
        "jaw_gain": float(np.nanmedian(gains)) if np.isfinite(gains).any() else None,
        # the median's distribution-free interval over the frames, and its coverage
        "jaw_gain_interval": (
            None if (gi := median_interval(list(gains))) is None else [gi[0], gi[1]]
        ),
        "jaw_gain_interval_coverage": None if gi is None else gi[2],
        "jaw_gain_by_recording": rec_gain,
        # The recording furthest from a match: what the exposure flag holds against 1.
        "jaw_gain_worst_recording": fl["exposure_mismatch"].values.get("gain"),
        "jaw_clipped_fraction": fl["exposure_mismatch"].values.get("clipped_fraction"),
        "jaw_gain_is_lower_bound": bool(
            (fl["exposure_mismatch"].values.get("clipped_fraction") or 0.0) > CLIP_MIN
        ),
        "object_gain": float(np.median([g for g in obj if g is not None]))
        if any(g is not None for g in obj)
        else None,
        "background_level": bg.values.get("background_level"),
        "training_background_max": bg.values.get("training_background_max"),
        "exposure_drift_spread_fraction": fl["exposure_drift"].values.get("spread_fraction"),
        "exposure_between_recordings_fraction": fl["exposure_drift"].values.get(
            "between_recordings_fraction"
        ),
        "gain_vs_bright_r": fl["exposure_drift"].values.get("gain_vs_bright_r"),
        "rest_pose_gain": fl["rest_pose_match"].values.get("gain_rest"),
        "start_pose_gain": fl["rest_pose_match"].values.get("gain_start"),
        "regions": region_means,
        "flags": {f.name: f.raised for f in res.flags},
        "n_frames": len(res.comparisons),
        "real_brightness_spread": res.largest_spread,
        # where each value the verdict holds a measurement against comes from
        "provenance": {"camera.training_background_max": prov["camera.training_background_max"]},
    }
    pick = next((c for c in res.comparisons if c.pose_label == "start"), res.comparisons[0])
    details = {
        "images": {
            "real": _img(pick.real),
            "sim": _img(pick.sim),
            "diff": difference_image(difference_map(pick.real, pick.sim)).tolist(),
            "frame": pick.index,
            "recording": pick.recording,
            "pose_label": pick.pose_label,
        },
        "jaw_gain_per_frame": gains,
        "flag_messages": {f.name: f.message for f in res.flags},
    }
    jg = figures["jaw_gain"] if figures["jaw_gain"] is not None else float("nan")
    level = bg.values.get("background_level") or 0.0
    summary = (
        " ".join(fl[n].message for n in raised)
        if raised
        else (
            f"The real frames match the simulator's: jaw brightness ratio {jg:.2f}, "
            f"background {level:.0f}."
        )
    )
    verdict = Verdict.IMPLICATED if raised else Verdict.ELIMINATED
    needs: tuple[str, ...] = ()
    if res.flat:  # a flat frame has no jaws, object or background to compare
        verdict, needs = (
            Verdict.NOT_MEASURED,
            (FRAMES_NEED,) + ((BACKGROUND_NEED,) if bg_unstated else ()),
        )
        summary = _flat_summary(res, "neither the exposure nor the background")
    elif not raised and bg_unstated:  # matched exposure; the background held against nothing
        verdict, needs = Verdict.NOT_MEASURED, (BACKGROUND_NEED,)
        summary = (
            f"The jaws match the simulator's brightness (ratio {jg:.2f}), and "
            f"{bg.message[0].lower()}{bg.message[1:]} Without it the background is "
            "not measured."
        )
    out = [
        Finding(
            branch=BRANCH,
            verdict=verdict,
            needs=needs,
            title="Exposure and background",
            summary=summary,
            key_figure="jaw_gain"
            if len([g for g in rec_gain.values() if g is not None]) <= 1
            else "jaw_gain_worst_recording",
            figures=ExposureFigures.from_mapping(figures),
            details=ExposureDetails.from_mapping(details, where="details"),
            next_step=_exposure_step(raised, res.flat, bg_unstated, verdict),
        )
    ]
    out.append(_camera_finding(res, {k: v for k, v in prov.items() if "jitter" in k}))
    out.append(_visibility_finding(rig, vis, initial_states))
    return out


def _exposure_step(raised: list[str], flat: bool, bg_unstated: bool, verdict: Verdict) -> str:
    """The exposure finding's next step."""
    fill = f" and fill in {BACKGROUND_NEED} in rig.toml" if bg_unstated else ""
    if flat:
        return f"Check the camera, record frames that show the scene{fill}."
    if verdict is Verdict.NOT_MEASURED:
        return f"Fill in {BACKGROUND_NEED} in rig.toml."
    if raised:
        return (
            "Lock exposure, gain and white balance at the start of every session, match "
            "the jaws at the start pose, and train on dark-grey backgrounds up to the "
            "real background's level."
        )
    return "Keep the exposure lock and re-check it before each session."


def _camera_finding(res: AppearanceResult, prov: dict[str, str] | None = None) -> Finding:
    cam = res.camera
    if res.flat:  # no structure: every candidate pose matches a flat frame equally
        return Finding(
            branch=BRANCH,
            verdict=Verdict.NOT_MEASURED,
            title="Camera pose",
            summary=_flat_summary(res, "a camera pose shift"),
            figures=CameraFigures.from_mapping({"real_brightness_spread": res.largest_spread}),
            next_step="Record frames at the start pose, where the gripper is in "
            "view, with the camera working.",
            needs=(FRAMES_NEED,),
        )
    if cam is None:
        return Finding(
            branch=BRANCH,
            verdict=Verdict.INCONCLUSIVE,
            title="Camera pose",
            figures=CameraFigures(),
            summary="No compared frame shows the gripper, so the camera's offset "
            "could not be measured.",
            next_step="Record frames at the start pose, where the gripper is in view.",
        )
    if not cam.score_best >= MATCH_MIN:  # every candidate matched as badly: nothing found
        return Finding(
            branch=BRANCH,
            verdict=Verdict.INCONCLUSIVE,
            title="Camera pose",
            summary=f"No candidate camera pose matches the real frames over the "
            f"gripper's pixels (best match score {cam.score_best:.2f} of 1, "
            f"{MATCH_MIN:g} needed): the frames may not show the gripper, "
            "so no pose shift is measured.",
            figures=CameraFigures.from_mapping(
                {
                    "match_score_modelled": cam.score_nominal,
                    "match_score_best": cam.score_best,
                    "match_score_min": MATCH_MIN,
                }
            ),
            key_figure="match_score_best",
            next_step="Record frames at the start pose, where the gripper is in view.",
        )
    jit = res.jitter_px
    ratio = cam.shift_norm_px / jit if jit else None
    raised = jit is not None and cam.shift_norm_px > jit
    iv = cam.shift_bracket_px
    figures = {
        "camera_offset_px": cam.shift_norm_px,
        # the search's resolution: no noise model gives a confidence interval here
        "camera_offset_resolution_px": None if iv is None else list(iv),
        "camera_offset_dx_px": cam.shift_px[0],
        "camera_offset_dy_px": cam.shift_px[1],
        "training_jitter_px": jit,
        "camera_offset_ratio_to_jitter": ratio,
        "camera_rotation_deg": np.rad2deg(cam.offset.rot_rad).tolist(),
        "match_score_modelled": cam.score_nominal,
        "match_score_best": cam.score_best,
        "renders": cam.n_renders,
        "provenance": dict(prov or {}),
    }
    rtxt = f", {ratio:.1f} times training's largest camera jitter" if ratio is not None else ""
    rot = ", ".join(f"{v:.1f}" for v in figures["camera_rotation_deg"])
    if jit is None:  # an offset held against no stated jitter is no verdict
        return Finding(
            branch=BRANCH,
            verdict=Verdict.NOT_MEASURED,
            title="Camera pose",
            key_figure="camera_offset_px",
            figures=CameraFigures.from_mapping(figures),
            needs=(JITTER_NEED,),
            summary=f"The real camera sees the gripper {cam.shift_norm_px:.1f} policy pixels "
            "away from where the model puts it, but the rig does not say how far "
            "training moved its camera, so there is nothing to hold the offset "
            "against.",
            next_step=f"Fill in {JITTER_NEED} in rig.toml.",
        )
    return Finding(
        branch=BRANCH,
        verdict=Verdict.IMPLICATED if raised else Verdict.ELIMINATED,
        title="Camera pose",
        key_figure="camera_offset_px",
        figures=CameraFigures.from_mapping(figures),
        summary=f"The real camera sees the gripper {cam.shift_norm_px:.1f} policy pixels away "
        f"from where the model puts it"
        + (
            f" (one search step either way moves it between {iv[0]:.2f} and "
            f"{iv[1]:.2f} px: the search's resolution, not a confidence interval)"
            if iv is not None
            else ""
        )
        + f"{rtxt}: that offset is the figure of record. "
        f"The fitted mount rotation ({rot} deg about the camera's x, y, z) is one of "
        "many shift and rotation pairs that move the image alike (they trade off), so "
        "read it as a direction, not a measurement.",
        next_step=(
            "Model the real camera mount (or retrain around it): calibrating it in a tool "
            "changes nothing for a policy already trained."
            if raised
            else "The camera sits within training's jitter; nothing to change."
        ),
    )


def _visibility_finding(rig: Rig, vis: Visibility | None, states: np.ndarray | None) -> Finding:
    figures: dict[str, Any] = {}
    verdict = Verdict.INCONCLUSIVE
    parts = []
    if vis is not None:
        figures.update(
            {
                "reach_of_view_m": vis.reach_m,
                "nearest_visible_m": vis.nearest_m,
                "grid_distances_m": vis.distances_m,
                "grid_seen": vis.seen,
            }
        )
        parts.append(
            f"From the start pose the camera sees the object up to "
            f"{vis.reach_m * 100:.0f} cm from the base axis."
            if np.isfinite(vis.reach_m)
            else "From the start pose the camera does not see the object anywhere on the grid."
        )
    x_rng, y_rng = rig.training.workspace_x_m, rig.training.workspace_y_m
    if states is not None and x_rng is not None and y_rng is not None:
        inside = inside_workspace(states, x_rng, y_rng)
        n_out = int((~inside).sum())
        figures.update(
            {
                "initial_states": int(inside.size),
                "initial_states_outside": n_out,
                "initial_states_outside_fraction": n_out / max(1, inside.size),
            }
        )
        verdict = Verdict.IMPLICATED if n_out else Verdict.ELIMINATED
        parts.append(
            f"{n_out} of {inside.size} initial states lie outside training's workspace."
            if n_out
            else "Every initial state lies inside training's workspace."
        )
    if vis is not None and "initial_states" not in figures:
        # Measured without a manifest: reported (it is where objects can be seen from the
        # start pose); with no initial states there is nothing placed beyond it to blame.
        verdict = Verdict.ELIMINATED if np.isfinite(vis.reach_m) else Verdict.INCONCLUSIVE
        parts.append(
            "No evaluation initial states were given to hold against it; keep "
            "placements within that reach."
        )
    if not figures:
        return Finding(
            branch=BRANCH,
            verdict=Verdict.NOT_MEASURED,
            title="Reach of view",
            figures=ReachFigures(),
            summary="No start pose or object to place, and no initial states.",
            next_step="Set model.object_geom and record start-pose frames.",
            needs=("model.object_geom and a start pose",),
        )
    return Finding(
        branch=BRANCH,
        verdict=verdict,
        title="Reach of view",
        key_figure="reach_of_view_m" if vis is not None else "initial_states_outside",
        figures=ReachFigures.from_mapping(figures),
        summary=" ".join(parts),
        next_step="Place evaluation objects inside training's workspace; beyond the "
        "reach of view the policy must search before it sees anything.",
    )


def assess(ctx: Context) -> list[Finding]:
    """Compare real frames with renders at the same joint angles.

    Options (``ctx.options``): ``appearance_frames`` (frames compared, 12),
    ``appearance_camera_frames`` (frames used for the camera search, 2) and
    ``appearance_grid_m`` (distances [m] of the reach-of-view grid).
    """
    rig = ctx.rig
    if rig.camera is None:
        return [not_measured(SPEC, "Not measured: the rig has no [camera] section.")]
    has_ds = rig.evidence.dataset is not None and rig.camera.recorded
    if rig.evidence.frames is None and not has_ds:
        return [not_measured(SPEC)]
    fs = ctx.evidence.get("frames", load_frames)
    states = ctx.evidence.get("initial_states", load_initial_states)
    ctx.progress("appearance: rendering", 0.0)
    grid = ctx.options.get("appearance_grid_m")
    res, vis = run(
        rig,
        fs,
        max_frames=int(ctx.options.get("appearance_frames", 12)),
        camera_frames=int(ctx.options.get("appearance_camera_frames", 2)),
        grid_m=None if grid is None else np.asarray(grid, dtype=float),
    )
    return findings(rig, res, vis, states)


SPEC = Branch(
    name=BRANCH,
    cost=4.0,
    needs=("evidence.frames or camera frames in evidence.dataset", "a [camera] section"),
    assess=assess,
    plots=lambda f: plots_appearance.plots(f),  # looked up when drawn: a test may replace it
)
"""The appearance branch's contract: its plots; no randomisation entries."""
