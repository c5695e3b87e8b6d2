"""diagnose_rig: load a rig, check its evidence, run the ladder, write findings and report."""

from __future__ import annotations

from pathlib import Path

from simgap.errors import InputError
from simgap.evaluation.protocol import comparability_from_rig
from simgap.evidence.bundle import EvidenceBundle
from simgap.finding import Diagnosis
from simgap.ladder import Context, ProgressFn, run_ladder
from simgap.outputs import atomic_write_json, prepare_out_dir
from simgap.report import write_report
from simgap.rig import load_rig


def diagnose_rig(rig_path: str | Path, out_dir: str | Path, *, force: bool = False,
                 progress: ProgressFn | None = None, control_dt_s: float | None = None,
                 ) -> Diagnosis:
    """Diagnose one rig and write ``findings.json`` and ``report.html`` into ``out_dir``.

    Raises:
        InputError: the rig is invalid, or evidence paths it names do not exist (all of
            them are named at once).
        OutputExistsError: ``out_dir`` is not empty and ``force`` is False.
    """
    rig = load_rig(rig_path)
    missing = rig.evidence.missing()
    if missing:
        listed = "; ".join(f"evidence.{k} = {p}" for k, p in missing)
        raise InputError(file=rig_path, field="evidence",
                         expected="paths that exist", got=f"{len(missing)} missing: {listed}",
                         fix="correct these paths in rig.toml (relative to the rig file)")
    out = prepare_out_dir(out_dir, force=force)
    ctx = Context(rig=rig, evidence=EvidenceBundle(rig), out_dir=out, seed=rig.seed,
                  progress=progress or (lambda m, f: None),
                  options={"control_dt_s": control_dt_s} if control_dt_s else {})
    diagnosis = run_ladder(ctx, comparability=comparability_from_rig(rig))
    atomic_write_json(out / "findings.json", diagnosis.to_dict())
    write_report(diagnosis, out / "report.html")
    return diagnosis
