"""A large batch of candidates is replayed in batches of ``MAX_BATCH``: the models held at once
stay bounded (the central Jacobian over a delay grid asked for 480 copies of the SO-101, 2.0
GB of diagnose's peak) and the residuals are the same to the bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def test_a_large_batch_is_replayed_in_bounded_batches_bit_for_bit(shared_data: Path) -> None:
    import simgap.actuator.joint_id as jid
    from simgap.demo.twin import JOINTS
    from simgap.sim.replay import ReplayLog

    model = shared_data / "so101" / "so101.xml"
    t = np.arange(15) / 30.0
    rng = np.random.default_rng(0)
    cmd = 0.2 * np.sin(2 * np.pi * t[:, None] + rng.uniform(0, 6, len(JOINTS)))
    log = ReplayLog(t=t, commands=cmd, joints=JOINTS, q0=cmd[0], hold_before=cmd[0])
    prob = jid.JointProblem(model, JOINTS, [log], [cmd], ("damping", "armature"))
    try:
        m = jid.MAX_BATCH + 7
        z = prob.z0[None] + rng.normal(0.0, 0.2, (m, prob.z0.size))
        d = rng.uniform(0.0, 0.04, m)
        whole = prob.residuals(z, d)
        assert whole.shape[0] == m
        assert len(prob.pool._models) <= jid.MAX_BATCH  # never more copies than a batch
        one = np.concatenate([prob.residuals(z[i : i + 1], d[i : i + 1]) for i in (0, m - 1)])
        np.testing.assert_array_equal(one, whole[[0, m - 1]])
    finally:
        prob.close()
    assert not np.array_equal(whole[0], whole[1])  # the candidates differ: a real check
