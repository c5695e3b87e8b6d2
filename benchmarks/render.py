"""Rendering throughput on CPU for the bundled demo model, and comparison cost per frame.

Run: ``MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa PYTHONPATH=src python benchmarks/render.py``
(``MUJOCO_GL=egl`` on a GPU). Prints renders per second at the render resolution, with
segmentation, and at the policy resolution (render + the policy's resampling), and the time
to compare one real frame with its render region by region (render with segmentation,
resample both, pure-pixel masks, region statistics).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from simgap.appearance.regions import compare_regions, pure_masks
from simgap.demo import demo_model_path
from simgap.sim.render import SceneRenderer, region_ids
from simgap.sim.resample import resize_bilinear

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
START = np.array([0.0, -0.6, 0.9, 0.9, 0.0, 0.6])


def _rate(fn, n: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--resolution", type=int, default=96)
    ap.add_argument("--policy", type=int, default=16)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    qs = START + rng.uniform(-0.2, 0.2, (args.n, 6))
    res, pol = (args.resolution,) * 2, (args.policy,) * 2
    with SceneRenderer(demo_model_path(), "wrist_cam", JOINTS, res, pol, object_geom="cube") as r:
        groups = region_ids(r, (), "cube")
        it = iter(range(10**9))
        rgb = _rate(lambda: r.render(qs[next(it) % args.n], segmentation=False), args.n)
        seg = _rate(lambda: r.render(qs[next(it) % args.n]), args.n)
        polr = _rate(lambda: r.render_policy(qs[next(it) % args.n], segmentation=False), args.n)
        real = r.render(START).rgb

        def compare() -> None:
            full = r.render(qs[next(it) % args.n])
            masks = pure_masks(full.seg, groups, r.n_geoms, pol)
            compare_regions(resize_bilinear(real, pol), resize_bilinear(full.rgb, pol), masks)

        cmp = _rate(compare, args.n)
    print(
        json.dumps(
            {
                "resolution": res,
                "policy_resolution": pol,
                "n": args.n,
                "renders_per_s_rgb": round(rgb, 1),
                "renders_per_s_rgb_and_segmentation": round(seg, 1),
                "renders_per_s_policy_resolution": round(polr, 1),
                "comparisons_per_s": round(cmp, 1),
                "comparison_ms_per_frame": round(1000 / cmp, 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
