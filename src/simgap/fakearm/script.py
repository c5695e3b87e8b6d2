"""Run a deployment script against the fake arm (``simgap fake-arm SCRIPT``).

A script is a Python file that defines ``run(robot)``: it connects, loops over
``get_observation`` / ``send_action`` as it would on the real arm, and disconnects. It may
define ``FAKE_ARM = {...}``: overrides of ``FakeSO101Config`` fields (e.g.
``{"write_goal_before_torque": True}``). The script's folder is put on ``sys.path`` while it
runs, as ``python script.py`` would.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.fakearm.robot import FakeCameraConfig, FakeSO101, FakeSO101Config


def make_config(overrides: Mapping[str, Any], *, trace_path: str | Path,
                use_degrees: bool = True, camera: bool = False, realtime: bool = False,
                model_path: str | Path | None = None,
                source: Path | None = None) -> FakeSO101Config:
    """A ``FakeSO101Config`` from command-line choices and a script's ``FAKE_ARM`` dict."""
    fields = {f.name for f in dataclasses.fields(FakeSO101Config)}
    for key in overrides:
        if key not in fields:
            raise InputError(file=source, field=f"FAKE_ARM.{key}",
                             expected="a FakeSO101Config field", got=key,
                             fix=f"use one of: {', '.join(sorted(fields))}")
    base: dict[str, Any] = {"use_degrees": use_degrees, "realtime": realtime,
                            "trace_path": trace_path}
    if model_path is not None:
        base["model_path"] = model_path
    if camera:
        base["cameras"] = {"wrist": FakeCameraConfig()}
    base.update(overrides)
    cams = base.get("cameras") or {}
    base["cameras"] = {k: v if isinstance(v, FakeCameraConfig) else FakeCameraConfig(**v)
                       for k, v in cams.items()}
    return FakeSO101Config(**base)


def run_script(script: str | Path, trace_path: str | Path, *, use_degrees: bool = True,
               camera: bool = False, realtime: bool = False,
               model_path: str | Path | None = None) -> FakeSO101:
    """Import ``script``, build the fake arm, call ``run(robot)``; the trace is written on
    disconnect (done here if the script forgot). Returns the robot."""
    script = Path(script)
    if not script.is_file():
        raise InputError(file=script, expected="a Python deployment script", got="no such file")
    name = f"_simgap_deploy_{script.stem}"
    spec = importlib.util.spec_from_file_location(name, script)
    if spec is None or spec.loader is None:
        raise InputError(file=script, expected="a Python file", got=script.suffix)
    module = importlib.util.module_from_spec(spec)
    folder = str(script.resolve().parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
        run = getattr(module, "run", None)
        if not callable(run):
            raise InputError(file=script, field="run", expected="a function run(robot)",
                             got="nothing", fix="define def run(robot): ... in the script")
        config = make_config(getattr(module, "FAKE_ARM", {}), trace_path=trace_path,
                             use_degrees=use_degrees, camera=camera, realtime=realtime,
                             model_path=model_path, source=script)
        robot = FakeSO101(config)
        try:
            run(robot)
        finally:
            if robot.is_connected:
                robot.disconnect()
    finally:
        sys.path.remove(folder)
        sys.modules.pop(name, None)
    return robot
