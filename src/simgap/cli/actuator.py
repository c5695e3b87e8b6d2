"""``simgap actuator`` (fit the actuator ladder) and ``simgap excite`` (write chirps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from simgap.cli._app import app, console, handles_errors, json_target, write_json
from simgap.cli._progress import working
from simgap.cli._typer import Command


class _ValidateList(Command):
    """``--validate`` takes a list: ``--validate a.json b.json`` is read as ``--validate
    a.json --validate b.json`` (every value up to the next option), and stays repeatable."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        out: list[str] = []
        n_val = 0
        i = 0
        while i < len(args):
            if args[i] == "--validate":
                i += 1
                start = i
                while i < len(args) and not args[i].startswith("-"):
                    out += ["--validate", args[i]]
                    i += 1
                if i == start:
                    raise typer.BadParameter(
                        "it needs at least one log. Fix: name the test logs after it "
                        "(--validate a.json b.json), or drop it to hold out one trajectory "
                        "type at a time", ctx=ctx, param_hint="--validate")
                n_val += i - start
                continue
            out.append(args[i])
            i += 1
        try:
            return super().parse_args(ctx, out)
        except typer.BadParameter as e:  # click's MissingParameter: no training log left
            if not (n_val and getattr(getattr(e, "param", None), "name", None) == "logs"):
                raise
            raise typer.BadParameter(
                f"no training logs: --validate takes every value up to the next option, so "
                f"all {n_val} log(s) after it were read as test logs. Fix: name the training "
                "logs before --validate, or end its list with another option "
                "(--validate v.json --format bam a.json b.json)", ctx=ctx,
                param_hint="--validate") from None


@app.command(cls=_ValidateList)
@handles_errors
def actuator(
    logs: list[Path] = typer.Argument(..., help="Servo bench logs (BAM JSON, CSV: the "
                                      "ladder), or one LeRobot dataset folder (diagnose's "
                                      "identification against the rig's MJCF; needs --rig)."),
    fmt: str = typer.Option(..., "--format", help="bam | lerobot | csv"),
    rig: Path | None = typer.Option(None, "--rig", help="rig.toml: joint map, units, model "
                                    "(the load) and noise floor."),
    validate: list[Path] = typer.Option([], "--validate", help="Test bench logs, left out "
                                        "of every fit and of the selection (which holds out "
                                        "one trajectory type of the training logs at a "
                                        "time) and scored on the final fit; repeatable or "
                                        "as a list up to the next option (a LeRobot dataset "
                                        "holds out its own episodes)."),
    json_path: Path = typer.Option(..., "--json", callback=json_target,
                                   help="Where to write the result JSON."),
    out: Path | None = typer.Option(None, "--out", help="Folder for the MJCF patch, Isaac "
                                    "Lab and BAM exports."),
    no_net: bool = typer.Option(False, "--no-net", help="Skip rung 4 (the network)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the fits (default: the "
                                    "rig's seed, as diagnose uses; 0 without a rig)."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out folder "
                               "(everything in it is removed once the new one is written)."),
) -> None:
    """Identify the actuators. A LeRobot dataset (--format lerobot, with --rig) runs
    diagnose's identification: the rig's own MJCF is the null, the delay is profiled and
    every parameter gets a 95 % interval or a reason, with the same seed, episodes and
    numbers as the actuator finding of 'simgap diagnose'. Bench logs (bam, csv) climb the
    actuator ladder (ideal, delay+lag, servo, net), whose null is the ideal actuator."""
    from contextlib import nullcontext

    from simgap.branches.actuator import analyse
    from simgap.evidence.actuator_logs import check_distinct_logs, load_actuator_logs
    from simgap.outputs import check_not_input, note_input, output_folder, relocate_paths
    from simgap.sim.rig_names import load_checked_rig

    for p in [*logs, *validate]:  # an output onto an input is refused before any work
        note_input(p)
    check_not_input(json_path)
    if out is not None:
        check_not_input(out, folder=True)
    if fmt != "lerobot":  # a dataset holds out its own episodes (checked below)
        check_distinct_logs(list(logs), list(validate))
    r = load_checked_rig(rig) if rig is not None else None
    if fmt == "lerobot":
        _check_lerobot(list(logs), r, list(validate))
        assert r is not None
        with working("actuator", "identifying the joint dynamics against the rig's model "
                     "(as diagnose does)", 60.0), \
                output_folder(out, force=force) if out is not None else nullcontext() as od:
            from simgap.diagnose import actuator_from_dataset

            found = actuator_from_dataset(r, logs[0], out_dir=od, seed=seed).to_dict()
        if out is not None and od is not None:
            found = relocate_paths(found, od, out.absolute())
        write_json(json_path, {"method": "joint_dynamics", "rig": r.name, "dataset":
                               str(logs[0]), **found})
        _print_identification(found)
        return
    seed = seed if seed is not None else (r.seed if r is not None else 0)
    train = load_actuator_logs(list(logs), fmt, r)
    held = load_actuator_logs(list(validate), fmt, r) if validate else []
    rungs = "ideal, delay+lag, servo" + ("" if no_net else ", network")
    with working("actuator", f"fitting the actuator ladder ({rungs}) to {len(train)} log(s), "
                 "selected holding out one trajectory type (or log) at a time"
                 + (f", then tested on the {len(held)} --validate log(s)" if held else "")
                 + ("" if no_net else "; --no-net skips the slowest rung"),
                 240.0 if not no_net else 120.0), \
            output_folder(out, force=force) if out is not None else nullcontext() as out_dir:
        result, _ = analyse(train, rig=r, validate=held, use_net=not no_net, seed=seed,
                            out_dir=out_dir)
    if out is not None and out_dir is not None:  # name the artifacts where they now lie
        result = relocate_paths(result, out_dir, out.absolute())
    write_json(json_path, result)
    from simgap.report.headline import sig

    for name, j in result["joints"].items():
        rungs = ", ".join(f"{x['model']} {sig(float(x['validation_mae_rad']))}"
                          for x in j["rungs"])
        d = j.get("delay_s")
        iv = (j.get("delay_interval_s") or (result.get("delay_interval_s") or {}).get(name))
        delay = "delay not identified" if not isinstance(d, (int, float)) else (
            f"delay {sig(d * 1e3)} ms" + (f" [{sig(iv[0] * 1e3)}, {sig(iv[1] * 1e3)}]"
                                          if isinstance(iv, (list, tuple)) and len(iv) == 2
                                          else ""))
        console.print(escape(f"{name}: selected {j['selected']} (held-out MAE [rad]: {rungs}); "
                             f"{delay}"), highlight=False)
        if j.get("test_logs") and isinstance(j.get("test_mae_rad"), (int, float)):
            tests = ", ".join(f"{x['model']} {sig(float(x['test_mae_rad']))}"
                              for x in j["rungs"] if "test_mae_rad" in x)
            console.print(escape(f"  on the {len(j['test_logs'])} --validate log(s), left "
                                 f"out of every fit and of the selection: selected "
                                 f"{j['selected']} {sig(float(j['test_mae_rad']))} rad "
                                 f"(every rung: {tests})"), highlight=False)
        for rung, why in (j.get("rungs_skipped") or {}).items():
            console.print(escape(f"  the {rung} rung was not fitted: {why}"), highlight=False)
        for x in j["rungs"]:
            ivs = (x.get("params") or {}).get("intervals") if x["model"] == "servo" else None
            for k, e in (ivs or {}).items():
                if isinstance(e, dict) and e.get("identifiable") is False:
                    console.print(escape(f"  servo {k} not identifiable: {e.get('reason', '')}"),
                                  highlight=False)
            late = (x.get("armature_profile") or {}).get("latency_reason") \
                if x["model"] == "servo" else None
            if late:
                console.print(escape(f"  servo latency: {late}"), highlight=False)
    why = (result.get("patch_proof") or {}).get("mjcf_patch_not_offered")
    if why:
        console.print(escape(f"note: {why}"), highlight=False)
    if held:
        console.print(escape(f"note: {result['selection_note']}"), highlight=False)
    console.print(f"verdict: {result['verdict']}", highlight=False)


def _check_lerobot(logs: list[Path], rig: Any, validate: list[Path]) -> None:
    from simgap.errors import InputError

    if rig is None:
        raise InputError(file=logs[0], field="--rig", expected="a rig.toml to identify a "
                         "LeRobot dataset (its joint map, units, and the MJCF that is the "
                         "null hypothesis)", got="no --rig",
                         fix="pass --rig rig.toml ('simgap init' writes one for a dataset)")
    if len(logs) != 1:
        raise InputError(file=logs[1], field="logs", expected="one LeRobot dataset folder "
                         "(diagnose reads one: evidence.dataset)", got=f"{len(logs)} folders",
                         fix="run 'simgap actuator' once per dataset")
    if validate:
        raise InputError(file=validate[0], field="--validate", expected="no --validate with "
                         "a LeRobot dataset: the episodes after the fitted ones are held "
                         "out, as in diagnose", got=f"{len(validate)} validation log(s)",
                         fix="drop --validate (or record the validation episodes into the "
                             "dataset)")


def _print_identification(found: dict[str, Any]) -> None:
    from simgap.report.headline import sig

    fig = found["figures"]
    for j, v in fig["joint_verdicts"].items():
        lo, hi = fig["delay_interval_s"][j]
        ids = ", ".join(f"{k} {sig(x)} [{sig(fig['params_interval'][j][k][0])}, "
                        f"{sig(fig['params_interval'][j][k][1])}]"
                        for k, x in fig["params"].get(j, {}).items()
                        if k in fig["params_interval"].get(j, {}))
        console.print(escape(f"{j}: {v}; delay {sig(fig['delay_s'][j] * 1e3)} ms "
                             f"[{sig(lo * 1e3)}, {sig(hi * 1e3)}]; identified: "
                             f"{ids or 'none'}; not identifiable: "
                             f"{', '.join(fig['not_identifiable'].get(j, {})) or 'none'}"),
                      highlight=False)
    console.print(escape(f"patch: {fig['patch']}"), highlight=False)
    console.print(f"verdict: {found['verdict']}", highlight=False)


@app.command()
@handles_errors
def excite(
    rig: Path | None = typer.Argument(None, help="rig.toml (joint limits come from its "
                                      "model; with --for, the rig the diagnosis ran on)."),
    out: Path | None = typer.Option(None, "--out", help="CSV of joint targets (or a folder "
                                    "for a LeRobot-style action table with --lerobot); with "
                                    "--for, the folder of the designed LeRobot v3 dataset "
                                    "(default: DIR_next_episode beside the diagnosis)."),
    for_dir: Path | None = typer.Option(None, "--for", metavar="DIR", help="A diagnosis "
                                        "folder ('simgap diagnose RIG --out DIR'): design "
                                        "the episode that identifies what it declared not "
                                        "identifiable, with the predicted intervals."),
    rig_opt: Path | None = typer.Option(None, "--rig", help="The rig, as RIG (with --for)."),
    duration: float = typer.Option(10.0, "--duration", help="Seconds per joint (with --for: "
                                   "of each joint's designed motion, default 6)."),
    f0: float = typer.Option(1.0, "--f0", help="Start frequency [Hz]."),
    f1: float = typer.Option(25.0, "--f1", help="End frequency [Hz]."),
    rate: float = typer.Option(200.0, "--rate", help="Command rate [Hz]."),
    lerobot: bool = typer.Option(False, "--lerobot", help="Write recorded units and "
                                 "LeRobot feature names instead of radians."),
    seed: int = typer.Option(0, "--seed", help="Seed of the chirp phases."),
    vmax: float = typer.Option(2 * 3.141592653589793, "--vmax", help="Joint speed the "
                               "designed motion may reach [rad/s] (with --for)."),
    check: bool = typer.Option(True, "--check/--no-check", help="With --for: simulate the "
                               "episode on the current estimate, add it to the recording "
                               "and fit (a minute or more), to hold the prediction against "
                               "a fit."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out folder "
                               "(with --for)."),
    param: list[str] = typer.Option([], "--param", help="With --for: design only for this "
                                    "parameter (kp, kv, damping, frictionloss, armature, "
                                    "force_limit, delay); repeatable."),
    joint: list[str] = typer.Option([], "--joint", help="With --for: design only for this "
                                    "joint; repeatable."),
) -> None:
    """Write chirp excitation (f0 to f1 Hz per joint) inside joint and velocity limits; or,
    with --for DIR, the episode to record next: for every parameter the diagnosis declared
    not identifiable, the motion that identifies it, as a LeRobot v3 dataset of one episode
    with the predicted intervals in its README."""
    from simgap.sim.rig_names import load_checked_rig

    if for_dir is not None:
        _excite_for(for_dir, rig_opt or rig, out, duration if duration != 10.0 else None,
                    seed, vmax, check, force, param, joint)
        return
    if rig is None or out is None:
        from simgap.errors import InputError

        raise InputError(field="RIG, --out", expected="a rig.toml and --out (chirps), or "
                         "--for DIR (the episode a diagnosis asks for)",
                         got=f"RIG {rig}, --out {out}",
                         fix="simgap excite RIG --out FILE, or simgap excite --for DIR "
                             "--rig RIG")
    from simgap.actuator.excite import write_excitation

    path = write_excitation(load_checked_rig(rig), out, duration_s=duration, f0_hz=f0, f1_hz=f1,
                            rate_hz=rate, lerobot=lerobot, seed=seed)
    console.print(f"wrote {path}", highlight=False)


def _excite_for(for_dir: Path, rig: Path | None, out: Path | None, seconds: float | None,
                seed: int, vmax: float, check: bool, force: bool, params: list[str],
                joints: list[str]) -> None:
    from simgap.actuator.excite_design import SEGMENT_S
    from simgap.actuator.excite_episode import TASK, design_json, episode_frames, readme
    from simgap.actuator.excite_for import estimate_from_diagnosis, next_motion
    from simgap.branches.joint_dynamics import dataset_logs
    from simgap.demo.writers import write_lerobot_v3
    from simgap.errors import InputError
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.outputs import (
        atomic_write_json,
        atomic_write_text,
        check_not_input,
        note_input,
        output_folder,
    )
    from simgap.report.headline import sig
    from simgap.sim.rig_names import load_checked_rig

    note_input(for_dir)
    est = estimate_from_diagnosis(for_dir).only(params, joints)
    if rig is None:
        raise InputError(file=for_dir, field="--rig", expected="the rig the diagnosis ran "
                         f"on ('{est.rig}')", got="no rig",
                         fix="pass it: simgap excite --for DIR --rig rig.toml")
    r = load_checked_rig(rig)
    if r.name != est.rig:
        raise InputError(file=rig, field="name", expected=f"the rig of the diagnosis "
                         f"('{est.rig}')", got=f"'{r.name}'",
                         fix="pass the rig.toml that 'simgap diagnose' was run on")
    if r.evidence.dataset is None:
        raise InputError(file=rig, field="evidence.dataset", expected="the LeRobot dataset "
                         "the diagnosis fitted", got="none",
                         fix="name it in rig.toml ([evidence] dataset = ...)")
    target = out if out is not None else for_dir.parent / f"{for_dir.name}_next_episode"
    note_input(r.evidence.dataset)
    check_not_input(target, folder=True)
    ds = read_lerobot_dataset(r.evidence.dataset)
    logs, targets, _ = dataset_logs(r, ds, est.fit_seconds)
    n = max(1, min(est.fitted_episodes, len(logs)))
    with working("excite", "designing the next motion from the diagnosis's sensitivities"
                 + (", then simulating and fitting it (--no-check skips that)" if check
                    else ""), 120.0 if check else 40.0):
        nm = next_motion(r, est, logs[:n], targets[:n], float(ds.fps), vmax_rad_s=vmax,
                         seconds=seconds or SEGMENT_S, seed=seed, check=check)
    frames, names = episode_frames(r, nm)
    with output_folder(target, force=force) as od:
        write_lerobot_v3(od, [frames], fps=int(round(ds.fps)), names=names, task=TASK,
                         robot_type=str(ds.info.get("robot_type", "unknown")))
        atomic_write_text(od / "README.md", readme(nm, r, str(for_dir)))
        atomic_write_json(od / "excite_design.json", design_json(nm, str(for_dir)))
    for d in nm.designs:
        lo, hi = d.interval("after")
        b_lo, b_hi = d.interval("before")
        unit = "s" if d.kind == "delay" else ""
        console.print(escape(f"{d.joint} {d.kind}: {d.segment.name}; predicted 95 % "
                             f"[{sig(lo)}, {sig(hi)}]{unit} (recording alone "
                             f"[{sig(b_lo)}, {sig(b_hi)}]{unit})"
                             + (f"; simulated and fitted: {d.checked['interval']}"
                                if "interval" in d.checked else
                                ("; simulated and fitted: still not identifiable"
                                 if d.checked else ""))), highlight=False)
    console.print(f"wrote {target} (one episode, README.md with the predicted intervals)",
                  highlight=False)
