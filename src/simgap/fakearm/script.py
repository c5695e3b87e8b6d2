"""Run a deployment script against the fake arm (``simgap fake-arm SCRIPT``).

A script is a Python file that defines ``run(robot)``: it connects, loops over
``get_observation`` / ``send_action`` as it would on the real arm, and disconnects. It may
define ``FAKE_ARM = {...}``: overrides of ``FakeSO101Config`` fields (e.g.
``{"write_goal_before_torque": True}``). The script's folder is put on ``sys.path`` while it
runs, as ``python script.py`` would.

The script is ordinary Python run in this process, with the user's privileges: it can do
anything its user can (run only scripts you would run yourself). It is an input: the trace
may not be written over it (or over the model). What the script raises is the script's
error (``ScriptError``, with its traceback from the script's first frame), not simgap's;
a script that calls ``sys.exit`` before ``run(robot)`` returns is a ``ScriptExit`` that says
where, and whether a trace was written (the fake arm saves what it recorded on the way out).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from simgap.errors import InputError
from simgap.fakearm.robot import FakeCameraConfig, FakeSO101, FakeSO101Config
from simgap.outputs import input_clash, note_input


class ScriptError(Exception):
    """The deployment script raised an exception (its own, or the fake arm refusing one of
    its calls): the CLI prints ``report`` (the error and its traceback) and exits with 1.

    Attributes:
        script: the script.
        report: the exception and its traceback, from the script's first frame.
        trace_written: whether the trace recorded so far was written.
    """

    def __init__(self, script: Path, exc: BaseException, trace_written: bool) -> None:
        self.script = script
        self.report = "".join(
            traceback.format_exception(type(exc), exc, _user_frames(exc.__traceback__))
        )
        self.trace_written = trace_written
        super().__init__(f"{script}: the deployment script raised {type(exc).__name__}: {exc}")


class ScriptExit(Exception):  # noqa: N818  (it is an exit, not an error of simgap's)
    """The deployment script called ``sys.exit`` (or raised ``SystemExit``) before
    ``run(robot)`` returned.

    Attributes:
        script: the script.
        code: the exit code (None or 0: a clean exit).
        where: ``file:line`` of the call.
        trace_written: whether the trace recorded so far was written.
    """

    def __init__(self, script: Path, exc: SystemExit, trace_written: bool) -> None:
        self.script = script
        self.code = exc.code
        self.where = _where(exc.__traceback__)
        self.trace_written = trace_written
        super().__init__(
            f"{script}: the deployment script called sys.exit({self.code!r}) at "
            f"{self.where}, before run(robot) returned"
        )

    @property
    def clean(self) -> bool:
        """The code says success (None or 0)."""
        return self.code in (None, 0)


def _user_frames(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` from the first frame that is not this module's or the import machinery's."""
    while tb is not None and (
        tb.tb_frame.f_code.co_filename == __file__
        or tb.tb_frame.f_code.co_filename.startswith("<frozen ")
    ):
        tb = tb.tb_next
    return tb


def _where(tb: TracebackType | None) -> str:
    last = None
    while tb is not None:
        last, tb = tb, tb.tb_next
    if last is None:
        return "unknown"
    return f"{last.tb_frame.f_code.co_filename}:{last.tb_lineno}"


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def make_config(
    overrides: Mapping[str, Any],
    *,
    trace_path: str | Path,
    use_degrees: bool = True,
    camera: bool = False,
    realtime: bool = False,
    model_path: str | Path | None = None,
    source: Path | None = None,
) -> FakeSO101Config:
    """A ``FakeSO101Config`` from command-line choices and a script's ``FAKE_ARM`` dict."""
    fields = {f.name for f in dataclasses.fields(FakeSO101Config)}
    for key in overrides:
        if key not in fields:
            raise InputError(
                file=source,
                field=f"FAKE_ARM.{key}",
                expected="a FakeSO101Config field",
                got=key,
                fix=f"use one of: {', '.join(sorted(fields))}",
            )
    base: dict[str, Any] = {
        "use_degrees": use_degrees,
        "realtime": realtime,
        "trace_path": trace_path,
    }
    if model_path is not None:
        base["model_path"] = model_path
    if camera:
        base["cameras"] = {"wrist": FakeCameraConfig()}
    base.update(overrides)
    cams = base.get("cameras") or {}
    base["cameras"] = {
        k: v if isinstance(v, FakeCameraConfig) else FakeCameraConfig(**v) for k, v in cams.items()
    }
    return FakeSO101Config(**base)


def run_script(
    script: str | Path,
    trace_path: str | Path,
    *,
    use_degrees: bool = True,
    camera: bool = False,
    realtime: bool = False,
    model_path: str | Path | None = None,
) -> FakeSO101:
    """Import ``script``, build the fake arm, call ``run(robot)``; the trace is written on
    disconnect (done here if the script forgot, and when the script fails or exits early).
    Returns the robot.

    Raises:
        InputError: no such script, no ``run``, a bad ``FAKE_ARM``, or the trace would be
            written over the script or the model (refused before the script runs).
        ScriptError: the script raised an exception.
        ScriptExit: the script called ``sys.exit`` before ``run(robot)`` returned.
    """
    script = Path(script)
    if not script.is_file():
        raise InputError(file=script, expected="a Python deployment script", got="no such file")
    inputs = [Path(os.path.realpath(script))]
    if model_path is not None:
        inputs.append(Path(os.path.realpath(model_path)))
    for p in inputs:
        note_input(p)
    clash = input_clash(trace_path, inputs)
    if clash is not None:
        raise InputError(
            file=trace_path,
            field="--trace",
            expected="a trace file apart from the script and the model",
            got=f"the trace {clash[0]} {clash[1]}",
            fix="name a new file for the trace, e.g. --trace trace.jsonl",
        )
    name = f"_simgap_deploy_{script.stem}"
    spec = importlib.util.spec_from_file_location(name, script)
    if spec is None or spec.loader is None:
        raise InputError(file=script, expected="a Python file", got=script.suffix)
    module = importlib.util.module_from_spec(spec)
    folder = str(script.resolve().parent)
    before = _stamp(Path(trace_path))
    robot: FakeSO101 | None = None
    sys.path.insert(0, folder)
    try:
        try:
            spec.loader.exec_module(module)
        except SystemExit as e:
            raise ScriptExit(script, e, False) from None
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # any other, even a BaseException of the script's own
            raise ScriptError(script, e, False) from None
        run = getattr(module, "run", None)
        if not callable(run):
            raise InputError(
                file=script,
                field="run",
                expected="a function run(robot)",
                got="nothing",
                fix="define def run(robot): ... in the script",
            )
        config = make_config(
            getattr(module, "FAKE_ARM", {}),
            trace_path=trace_path,
            use_degrees=use_degrees,
            camera=camera,
            realtime=realtime,
            model_path=model_path,
            source=script,
        )
        robot = FakeSO101(config)
        try:
            run(robot)
        except SystemExit as e:
            _save(robot)
            raise ScriptExit(script, e, _stamp(Path(trace_path)) != before) from None
        except KeyboardInterrupt:  # Ctrl-C: keep what was recorded
            _save(robot)
            raise
        except BaseException as e:  # any other, even a BaseException of the script's own
            _save(robot)
            raise ScriptError(script, e, _stamp(Path(trace_path)) != before) from None
        _save(robot)
        if _stamp(Path(trace_path)) == before:
            raise InputError(
                file=script,
                field="run",
                expected="a run(robot) that connects the arm and drives it",
                got=f"it returned with nothing recorded (no trace was written to {trace_path})",
                fix="call robot.connect() first, then get_observation / send_action, in run(robot)",
            )
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
        sys.modules.pop(name, None)
    return robot


def _save(robot: FakeSO101) -> None:
    """Disconnect (which writes the trace) if the script left the arm connected."""
    if robot.is_connected:
        robot.disconnect()
