"""The joint-block Jacobian of ``fit.profile.block_jacobian``: exact where joints do not
interact."""

import numpy as np

from simgap.fit.profile import block_jacobian


def _decoupled(z: np.ndarray, delays: np.ndarray) -> np.ndarray:
    """J=3 joints, K=2 kinds; joint j's residual depends on its own two parameters only."""
    t = np.linspace(0.0, 1.0, 40)
    zz = z.reshape(z.shape[0], 3, 2)
    return np.exp(zz[:, :, :1]) * np.sin(3 * t) + zz[:, :, 1:] ** 2 * t + delays[:, None, None]


def test_block_jacobian_matches_full_on_decoupled_joints_with_fewer_candidates():
    rng = np.random.default_rng(3)
    z = rng.normal(0, 0.3, (2, 6))
    d = np.array([0.0, 0.02])
    r = _decoupled(z, d).reshape(2, -1)
    lo, hi = np.full(6, -2.0), np.full(6, 2.0)

    def flat(x: np.ndarray, dd: np.ndarray) -> np.ndarray:
        return _decoupled(x, dd).reshape(x.shape[0], -1)

    full, n_full = block_jacobian(flat, z, r, d, 0.05, lo, hi, True)
    block, n_block = block_jacobian(flat, z, r, d, 0.05, lo, hi, True, blocks=3)
    assert np.allclose(block, full, atol=1e-12)
    assert n_block * 3 == n_full


def test_block_jacobian_drops_cross_joint_rows():
    z = np.zeros((1, 4))

    def coupled(x: np.ndarray, dd: np.ndarray) -> np.ndarray:
        xx = x.reshape(x.shape[0], 2, 2)
        own = xx.sum(axis=2)
        return np.stack([own[:, 0] + 0.5 * own[:, 1], own[:, 1]], axis=1)[:, :, None] * np.ones(
            (1, 1, 5)
        )

    r = coupled(z, np.zeros(1)).reshape(1, -1)
    block, _ = block_jacobian(
        lambda x, dd: coupled(x, dd).reshape(x.shape[0], -1),
        z,
        r,
        np.zeros(1),
        0.1,
        np.full(4, -1.0),
        np.full(4, 1.0),
        False,
        blocks=2,
    )
    assert np.allclose(block[0, 5:, :2], 0.0)  # joint 1's rows, joint 0's columns
    assert np.allclose(block[0, :5, 0], 1.5)  # own slope plus joint 1's pull (same kind)
