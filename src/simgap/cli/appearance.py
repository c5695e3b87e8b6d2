"""``simgap appearance`` and ``simgap render``."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import typer

from simgap.cli._app import (
    app,
    console,
    findings_json,
    handles_errors,
    json_target,
    print_findings,
    write_json,
)
from simgap.cli._progress import working


def png_bytes(image: Any, scale: int) -> bytes:
    import numpy as np
    from PIL import Image

    pil = Image.fromarray(np.asarray(image, dtype=np.uint8))
    if scale > 1:
        pil = pil.resize((pil.width * scale, pil.height * scale), Image.Resampling.NEAREST)
    buf = io.BytesIO()
    pil.save(buf, format="PNG")
    return buf.getvalue()


IMAGE_DTYPES = ("image", "video")


def check_camera_feature(rig_path: Path) -> None:
    """The rig's camera in its dataset, checked before any rendering is announced: a
    dataset that records no camera says so (with the file and the fix), and a
    ``camera.recorded`` the dataset lacks lists its image and video features only (a
    state or action column is no camera). Frames from ``evidence.frames``, a rig without
    ``[camera]``, and a dataset the reader will refuse anyway are left to the branch.

    Raises:
        InputError: the dataset has no image or video feature.
        NameNotFoundError: ``camera.recorded`` is not one of them.
    """
    from simgap.errors import InputError, NameNotFoundError
    from simgap.evidence.lerobot import INFO_PATH
    from simgap.sim.rig_names import load_checked_rig
    from simgap.validate import read_json

    r = load_checked_rig(rig_path)
    ds = r.evidence.dataset
    if r.camera is None or not r.camera.recorded or r.evidence.frames is not None or ds is None:
        return
    info_path = ds / INFO_PATH
    if not info_path.is_file():
        return
    info = read_json(info_path, "a LeRobot dataset's meta/info.json")
    feats = info.get("features") if isinstance(info, dict) else None
    if not isinstance(feats, dict):
        return
    cams = [k for k, f in feats.items() if isinstance(f, dict) and f.get("dtype") in IMAGE_DTYPES]
    if not cams:
        raise InputError(
            file=info_path,
            field="camera.recorded",
            expected=f"an image or video feature named {r.camera.recorded!r}",
            got=f"this dataset records no camera: none of its {len(feats)} features is an "
            "image or a video",
            fix="record the dataset with the camera on (LeRobot's --robot.cameras), or point "
            "evidence.frames in the rig at a frames folder with their joint angles "
            "(docs/formats.md), or remove [camera] from the rig to leave the appearance "
            "branch not measured",
        )
    if r.camera.recorded not in cams:
        raise NameNotFoundError(
            "camera (image or video) feature",
            r.camera.recorded,
            cams,
            file=info_path,
            field="camera.recorded",
        )


@app.command()
@handles_errors
def appearance(
    rig: Path = typer.Argument(..., help="The rig.toml (with [camera] and evidence.frames)."),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the findings as JSON."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Folder for real/sim/difference PNGs at the policy resolution."
    ),
    frames: int = typer.Option(12, "--frames", help="Compare at most this many frames."),
    camera_frames: int = typer.Option(
        2, "--camera-frames", help="Frames used to search the camera's offset."
    ),
) -> None:
    """Compare real frames with renders at the same joint angles, region by region."""
    from simgap.diagnose import assess_branch
    from simgap.outputs import atomic_write_bytes

    check_camera_feature(rig)
    with working(
        "appearance",
        f"rendering up to {frames} frames at the recorded joint "
        f"angles and searching the camera offset on {camera_frames}",
        5.0 * frames,
    ):
        r, found = assess_branch(
            rig,
            "appearance",
            out_dir=out,
            options={"appearance_frames": frames, "appearance_camera_frames": camera_frames},
        )
    print_findings(f"appearance: {r.name}", found)
    write_json(json_path, findings_json(r, found))
    if out is not None:
        from simgap.figures.appearance import ExposureDetails

        images = next(
            (
                f.typed_details(ExposureDetails).images
                for f in found
                if f.kind == ExposureDetails.kind
            ),
            None,
        )
        if images is not None:
            out.mkdir(parents=True, exist_ok=True)
            for key in ("real", "sim", "diff"):
                atomic_write_bytes(out / f"{key}.png", png_bytes(getattr(images, key), 8))
            console.print(f"wrote {out}/real.png, sim.png, diff.png", highlight=False)


@app.command()
@handles_errors
def render(
    rig: Path = typer.Argument(..., help="The rig.toml (with [camera])."),
    q: str = typer.Option(
        ...,
        "--q",
        help="Joint values in recorded units, comma-separated, in the rig's joint order.",
    ),
    out: Path = typer.Option(..., "--out", help="PNG file to write."),
    policy: bool = typer.Option(
        True, "--policy/--full", help="Resize to the policy's resolution (default) or not."
    ),
    scale: int = typer.Option(8, "--scale", help="Nearest-neighbour upscale of the PNG."),
) -> None:
    """Render the rig's camera at given joint values."""
    import numpy as np

    from simgap.errors import InputError
    from simgap.outputs import atomic_write_bytes
    from simgap.sim.render import render_rig_view
    from simgap.sim.rig_names import load_checked_rig

    r = load_checked_rig(rig)
    if r.camera is None:
        raise InputError(file=rig, field="camera", expected="a [camera] section", got="nothing")
    try:
        vals = [float(v) for v in q.split(",") if v.strip()]
    except ValueError:
        raise InputError(field="--q", expected="comma-separated numbers", got=q) from None
    if len(vals) != len(r.joints):
        raise InputError(
            field="--q",
            expected=f"{len(r.joints)} values ({', '.join(j.recorded for j in r.joints)})",
            got=f"{len(vals)}",
        )
    rad = np.array([j.unit.to_rad(v) for j, v in zip(r.joints, vals, strict=True)])
    img = render_rig_view(
        r.model_path,
        r.camera.name,
        r.joint_names,
        rad,
        r.camera.render_resolution,
        r.camera.policy_resolution if policy else None,
    )
    atomic_write_bytes(out, png_bytes(img, max(1, scale)))
    console.print(f"wrote {out}", highlight=False)
