"""Offer the MJCF patch of finished identification benches again, under the current rule.

``benchmarks/identification.py --work DIR`` (without ``--engine-only``) keeps every bench's
rig, dataset, separate held-out dataset and ``diagnosis/findings.json``. This reads the
actuator finding of each faulty bench, rebuilds the patch settings the branch would write
(``branches.actuator_dataset.patch_settings``), offers the patch with today's
``sim.patch_proof.offer_patch`` on the product's own held-out episodes, and proves what it
offers on the bench's separate held-out dataset, which the product never saw. It measures
a change of the patch rule on the same identification results, without re-running them.

Run from the repository root:
    PYTHONPATH=src python benchmarks/identification_repatch.py WORK_DIR [WORK_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", type=Path, nargs="+", help="--work folders of bench runs")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    from simgap.branches.actuator_dataset import patch_settings
    from simgap.branches.joint_dynamics import dataset_logs, proof_stretches
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.figures.joint_dynamics import DelayAccount, JointDynamicsFigures
    from simgap.finding import figures_of
    from simgap.rig import load_rig
    from simgap.sim.model import compile_spec, load_spec, strip_visuals
    from simgap.sim.patch_proof import offer_patch, prove_patch

    benches = offered = passed = 0
    for work in args.work:
        for bench in sorted(work.glob("faulty-*")):
            found = bench / "diagnosis" / "findings.json"
            if not found.is_file():
                continue
            act = [
                f for f in json.loads(found.read_text())["findings"] if f["branch"] == "actuator"
            ]
            if not act:
                continue
            fig = act[0]["figures"]
            benches += 1
            typed = figures_of(act[0], JointDynamicsFigures)
            settings = patch_settings(
                fig, typed.delay_account or DelayAccount(loop_s=None, note="")
            )
            if not settings:
                print(f"{bench.name}: nothing to patch")
                continue
            rig = load_rig(bench / "rig.toml")
            assert rig.evidence.dataset is not None  # the factory's rig names its dataset
            # what the branch proves its patch on: the held-out episodes whole and what
            # the fit did not replay of the fitted ones
            held, skip = proof_stretches(
                dataset_logs(rig, read_lerobot_dataset(rig.evidence.dataset))[2],
                int(fig["fitted_episodes"]),
                float(fig["fit_seconds"]),
            )
            with tempfile.TemporaryDirectory() as tmp:
                offer = offer_patch(
                    rig.model_path,
                    Path(tmp) / "patch.xml",
                    settings,
                    held,
                    encoder_rad=rig.encoder_rad,
                    scored_from_s=skip,
                )
                if offer.path is None:
                    print(f"{bench.name}: not offered ({offer.proof.reason})")
                    continue
                offered += 1
                nominal = compile_spec(strip_visuals(load_spec(rig.model_path)))
                patched = compile_spec(strip_visuals(load_spec(offer.path)))
                proof = prove_patch(
                    nominal,
                    patched,
                    dataset_trajectories(read_lerobot_dataset(bench / "heldout"), rig),
                )
            passed += proof.passed
            left = [n for n in offer.notes if n.startswith("left as the model has them")]
            print(
                f"{bench.name}: offered"
                + (f" ({left[0].split(':')[0]}: {left[0].split(':')[1].strip()})" if left else "")
                + f"; on the bench's separate held-out: {proof.reason}"
            )
    print(
        f"\n{benches} faulty benches: patches offered {offered}, stable and better on the "
        f"bench's separate held-out dataset {passed}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
