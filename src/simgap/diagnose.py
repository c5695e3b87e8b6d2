"""diagnose_rig: load a rig, check its evidence, run the ladder, write findings and report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simgap.errors import InputError, NameNotFoundError
from simgap.evaluation.protocol import compare
from simgap.evidence.bundle import EvidenceBundle
from simgap.evidence.manifest import read_manifest
from simgap.finding import Diagnosis, Finding
from simgap.fit.backends import Compute
from simgap.ladder import LADDER, Context, ProgressFn, assess_for, run_ladder
from simgap.outputs import (
    atomic_write_json,
    json_safe,
    output_folder,
    relative_paths,
    relocate_paths,
)
from simgap.report import write_report
from simgap.rig import Rig
from simgap.sim.rig_names import load_checked_rig
from simgap.validate import control_period


def comparability_from_rig(rig: Any) -> dict[str, Any] | None:
    """The report's comparability block from the rig's sim and real manifests, or None.

    The manifests are read here, at the edge; ``evaluation.protocol.compare`` takes the values.

    Uses ``rig.evidence.sim_manifest`` and ``rig.evidence.real_manifest``; None unless both
    are given. Rates are named "simulated" and "real".
    """
    ev = getattr(rig, "evidence", None)
    sim = getattr(ev, "sim_manifest", None)
    real = getattr(ev, "real_manifest", None)
    if sim is None or real is None:
        return None
    return compare(read_manifest(sim), read_manifest(real), names=("simulated", "real"))


def diagnose_rig(
    rig_path: str | Path,
    out_dir: str | Path,
    *,
    force: bool = False,
    progress: ProgressFn | None = None,
    control_dt_s: float | None = None,
    ray_address: str | None = None,
    allow_rig_compute: bool = False,
    controller_cross_check: bool = False,
    compute: Compute | None = None,
    actuator_net: bool = True,
    controller_episodes: int = 1,
) -> Diagnosis:
    """Diagnose one rig and write ``findings.json`` and ``report.html`` into ``out_dir``.

    ``controller_cross_check`` adds SIMPLER's pose fit of the gains beside the joint-dynamics
    fit of record (off: it took 20-42 % of a diagnosis and decides nothing).
    ``actuator_net`` False skips the actuator ladder's rung 4 (the network, the slowest).
    ``controller_episodes``: the recorded episodes, evenly spread, that the controller
    branch's SIMPLER pose fit replays (each costs a rollout per candidate).
    ``ray_address`` (or, with ``allow_rig_compute``, the rig's ``[compute] backend =
    "ray"``) runs the identification's candidate batches on Ray (``local`` starts an
    instance on this machine); see ``simgap.fit.backends.compute_context``. ``compute``,
    given, is where the fits run instead (a fleet's Ray task passes its cluster).

    Raises:
        InputError: the rig is invalid, or evidence paths it names do not exist (all of
            them are named at once).
        OutputExistsError: ``out_dir`` is not empty and ``force`` is False.
    """
    rig = load_checked_rig(rig_path)
    missing = rig.evidence.missing()
    if missing:
        listed = "; ".join(f"evidence.{k} = {p}" for k, p in missing)
        raise InputError(
            file=rig_path,
            field="evidence",
            expected="paths that exist",
            got=f"{len(missing)} missing: {listed}",
            fix="correct these paths in rig.toml (relative to the rig file)",
        )
    if control_dt_s is not None:
        control_dt_s = control_period(control_dt_s, field="--control-dt")
    final = Path(out_dir)
    if compute is None:
        compute = compute_backend(rig, ray_address, allow_rig_compute=allow_rig_compute)
    with output_folder(final, force=force) as out:
        ctx = Context(
            rig=rig,
            evidence=EvidenceBundle(rig),
            out_dir=out,
            seed=rig.seed,
            progress=progress or (lambda m, f: None),
            options={
                **({"control_dt_s": control_dt_s} if control_dt_s else {}),
                **({"controller_cross_check": True} if controller_cross_check else {}),
                **({} if actuator_net else {"actuator_net": False}),
                **(
                    {"controller_episodes": controller_episodes} if controller_episodes != 1 else {}
                ),
            },
            compute=compute,
        )
        diagnosis = run_ladder(ctx, comparability=comparability_from_rig(rig))
        # artifacts were written into the temporary folder: name them where they will be
        d = json_safe(relocate_paths(diagnosis.to_dict(), out, final.absolute()))
        d = json_safe(relocate_paths(d, out.resolve(), final.absolute()))
        diagnosis = Diagnosis.from_dict(d)
        # findings.json names every path relative to its own folder, so the folder may move
        written = relative_paths(d, final.absolute())
        atomic_write_json(out / "findings.json", written)
        write_report(Diagnosis.from_dict(written), out / "report.html")
    return diagnosis


def compute_backend(
    rig: Rig, ray_address: str | None = None, *, allow_rig_compute: bool = False
) -> Compute:
    """The backend the rig's fits use: Ray when ``ray_address`` is given, or when the rig's
    ``[compute]`` says so and ``allow_rig_compute`` (a rig file alone never sends the model
    and logs to a cluster), else the default (local threads)."""
    from simgap.fit.backends import compute_context

    return compute_context(rig, ray_address, allow_rig_compute=allow_rig_compute)


def assess_branch(
    rig_path: str | Path,
    branch: str,
    *,
    out_dir: Path | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[Rig, list[Finding]]:
    """Run one branch of the ladder on a rig (what ``simgap phases``, ``envelope``,
    ``appearance`` and ``body`` do): the rig and the branch's Findings. The evidence gate
    runs first, as in the ladder, so that a check that reads the dataset's stamps as time
    does not run on a refused time base."""
    spec = next((s for s in LADDER if s.name == branch), None)
    if spec is None:
        raise NameNotFoundError("branch", branch, [s.name for s in LADDER])
    assess = assess_for(spec)
    rig = load_checked_rig(rig_path)
    ctx = Context(
        rig=rig,
        evidence=EvidenceBundle(rig),
        out_dir=out_dir,
        seed=rig.seed,
        options=dict(options or {}),
    )
    from simgap.branches import evidence_gate

    if branch in evidence_gate.GATED:  # as the ladder: a refused time base stops them
        ctx.findings.extend(evidence_gate.assess(ctx))
    return rig, assess(ctx)


STANDALONE_BEFORE_ACTUATOR = ("latency",)
"""Branches ``actuator_from_dataset`` runs before the actuator, as the ladder does: the
latency branch's loop measurement sets the actuator's delay account (and so the patch)."""


def actuator_from_dataset(
    rig: Rig,
    dataset: str | Path | None = None,
    *,
    out_dir: Path | None = None,
    seed: int | None = None,
    progress: ProgressFn | None = None,
    ray_address: str | None = None,
) -> Finding:
    """The actuator Finding of a LeRobot dataset exactly as ``diagnose_rig`` makes it.

    The null hypothesis is the rig's own MJCF (``branches.joint_dynamics.identify_rig``:
    the delay profiled, every parameter with a 95 % interval or a reason, the MJCF patch
    and the Isaac Lab file written into ``out_dir/actuator`` only once proven), with
    diagnose's seed (the rig's, unless ``seed`` is given), options and episode selection
    (the first ``MAX_FIT_EPISODES`` fitted, the rest held out), and the latency branch run
    first so that the delay account against the loop is the same.

    Args:
        rig: the rig (joint map, units, model, noise floor).
        dataset: the LeRobot v3 dataset folder; None reads the rig's ``evidence.dataset``.
            Given, it replaces the rig's dataset and its servo bench logs (whose ladder
            diagnose would run instead).
        out_dir: folder for the artifacts (None: nothing written, no patch offered).
        seed: seed of the fits; None is the rig's ``seed``, as in diagnose.
        progress: progress callback.
        ray_address: run the identification's batches on Ray, as ``diagnose_rig``.

    Raises:
        InputError: no dataset, or the rig's model file is missing.
    """
    import os
    from dataclasses import replace

    from simgap.branches import actuator_dataset

    if dataset is not None:  # absolute and real, as load_rig resolves evidence.dataset
        path = Path(os.path.realpath(Path(dataset).absolute()))
        rig = replace(rig, evidence=replace(rig.evidence, dataset=path, actuator_logs=()))
    if rig.evidence.dataset is None:
        raise InputError(
            file=rig.source,
            field="evidence.dataset",
            expected="a LeRobot v3 dataset folder",
            got="none",
            fix="name the dataset on the command line or in rig.toml",
        )
    if not rig.model_path.is_file():
        raise InputError(
            file=rig.source,
            field="model.path",
            expected="the rig's MJCF (the null hypothesis of the identification)",
            got=str(rig.model_path),
            fix="correct model.path in rig.toml",
        )
    ctx = Context(
        rig=rig,
        evidence=EvidenceBundle(rig),
        out_dir=out_dir,
        seed=rig.seed if seed is None else int(seed),
        progress=progress or (lambda m, f: None),
        compute=compute_backend(rig, ray_address),
    )
    from simgap.branches import evidence_gate

    ctx.findings.extend(evidence_gate.assess(ctx))  # as the ladder: the gate first
    refused = evidence_gate.time_base_refusal(ctx)
    if refused is not None:
        return evidence_gate.not_run("actuator", "Actuator dynamics", refused)
    for spec in sorted(
        (s for s in LADDER if s.name in STANDALONE_BEFORE_ACTUATOR), key=lambda s: s.cost
    ):
        ctx.findings.extend(assess_for(spec)(ctx))
    return actuator_dataset.finding(ctx)
