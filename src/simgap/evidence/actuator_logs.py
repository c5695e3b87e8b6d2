"""Load actuator evidence in any supported format: BAM JSON, actuator CSV or a LeRobot v3
dataset (one ActuatorLog per episode, through the rig's joint map and units)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from simgap.errors import InputError
from simgap.rig import Rig
from simgap.values.actuator_log import MIN_DURATION_S, ActuatorLog, from_trajectory

FORMATS = ("bam", "csv", "lerobot")


def load_actuator_logs(
    paths: Sequence[str | Path],
    fmt: str,
    rig: Rig | None = None,
) -> list[ActuatorLog]:
    """Read every log; a LeRobot dataset yields one log per episode.

    Raises:
        InputError: an unknown format, a LeRobot dataset without a rig, or any reader error.
    """
    if fmt not in FORMATS:
        raise InputError(field="format", expected=f"one of {', '.join(FORMATS)}", got=fmt)
    if not paths:
        raise InputError(field="logs", expected="at least one log", got="none")
    logs: list[ActuatorLog] = []
    for p in paths:
        if fmt == "bam":
            from simgap.evidence.bam import read_bam_log

            logs.append(read_bam_log(p))
        elif fmt == "csv":
            from simgap.evidence.servo_csv import read_servo_csv

            logs.append(read_servo_csv(p, rig))
        else:
            if rig is None:
                raise InputError(
                    file=p,
                    field="rig",
                    expected="a rig (its joint map and units) to read a LeRobot dataset",
                    got="none",
                    fix="pass --rig rig.toml",
                )
            from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset

            ds = read_lerobot_dataset(p)
            # LeRobot episodes differ in length; one shorter than a fit needs is left out,
            # not a reason to refuse the dataset.
            logs.extend(
                from_trajectory(tr)
                for tr in dataset_trajectories(ds, rig)
                if tr.t[-1] - tr.t[0] >= MIN_DURATION_S
            )
    return logs


def rig_actuator_logs(rig: Rig) -> list[ActuatorLog]:
    """The rig's actuator evidence: ``evidence.actuator_logs`` in ``actuator_format``, or
    else the rig's LeRobot ``evidence.dataset`` (action = command)."""
    ev = rig.evidence
    if ev.actuator_logs:
        return load_actuator_logs(list(ev.actuator_logs), ev.actuator_format, rig)
    if ev.dataset is not None:
        return load_actuator_logs([ev.dataset], "lerobot", rig)
    return []


def _identity(p: Path) -> str:
    """What makes two named logs the same log: the bytes of a file (a copy under another
    name is the same data), the resolved path of anything else."""
    import hashlib

    try:
        if p.is_file():
            return "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest()
    except OSError:
        pass
    return "path:" + str(p.resolve())


def check_distinct_logs(train: Sequence[Path], held: Sequence[Path]) -> None:
    """Each log once: a log held out and trained on, or trained on twice (it would be held
    out against its own copy), scores the fit on data it saw. Two logs are the same when
    their bytes are (a copy under another name), else when their resolved paths are.

    Raises:
        InputError: naming the repeated log and the fix.
    """
    seen: dict[str, Path] = {}
    for group, paths in (("training", train), ("--validate", held)):
        for p in paths:
            key = _identity(p)
            if key in seen:
                first = seen[key]
                where = (
                    "named both as training and as validation"
                    if group == "--validate" and first in train
                    else "named twice"
                )
                same = "" if str(first) == str(p) else f" ({first} and {p} hold the same data)"
                raise InputError(
                    file=p,
                    field="--validate" if group == "--validate" else "logs",
                    expected="each log once, so that no held-out score is "
                    "computed on data the fit saw",
                    got=f"{p} {where}{same}",
                    fix="name each log once: as a training log or after --validate",
                )
            seen[key] = p
