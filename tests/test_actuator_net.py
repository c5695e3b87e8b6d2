"""Rung 4 networks: the real Go1 net round-trips through export and import; our own nets
are TorchScript modules Isaac Lab can load; the net rung trains and scores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simgap.actuator.net import (
    _build_module,
    features,
    load_torchscript,
    run_net,
    save_torchscript,
    stride_samples,
)
from simgap.export.joint_snippets import actuator_net_cfg, net_input_idx

torch = pytest.importorskip("torch")


def test_go1_net_loads_runs_and_round_trips(shared_data: Path, tmp_path: Path) -> None:
    net = load_torchscript(shared_data / "go1_actuator_net" / "unitree_go1.pt")
    rng = np.random.default_rng(0)
    x = rng.normal(0, [0.1, 0.1, 0.1, 2.0, 2.0, 2.0], (256, 6))
    y = run_net(net, x)
    assert y.shape == (256,) and np.all(np.isfinite(y))
    # trained on qerr = q - q_target: torque falls as qerr grows, about kp = 20 Nm/rad
    dx = np.zeros((2, 6))
    dx[1, :3] = 0.01
    slope = (run_net(net, dx)[1] - run_net(net, dx)[0]) / 0.01
    assert -40 < slope < -5
    path = save_torchscript(net, tmp_path / "export" / "go1.pt")
    again = load_torchscript(path)
    np.testing.assert_array_equal(run_net(again, x), y)
    cfg = actuator_net_cfg(
        ".*_calf_joint",
        path.name,
        physics_dt_s=0.02,
        history_spacing_s=0.02,
        pos_scale=-1.0,
        effort_limit=23.7,
    )
    assert "pos_scale=-1" in cfg and "input_idx=[0, 1, 2]" in cfg
    assert "saturation_effort=23.7" in cfg


def test_input_idx_counts_physics_steps() -> None:
    assert net_input_idx(0.01, 0.005) == [0, 2, 4]
    assert net_input_idx(0.01, 0.01) == [0, 1, 2]
    assert stride_samples(0.005) == 2


def test_own_net_folds_scaling_into_weights(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    dims = (6, 32, 32, 32, 1)
    weights = [
        (rng.normal(0, 0.3, (a, b)), rng.normal(0, 0.1, b))
        for a, b in zip(dims[:-1], dims[1:], strict=True)
    ]
    in_scale, out_scale = rng.uniform(0.5, 2.0, 6), 3.0
    module = _build_module(weights, in_scale, out_scale)
    x = rng.normal(size=(64, 6))
    # reference forward pass in numpy: softsign hidden layers, linear output
    h = x * in_scale
    for i, (w, b) in enumerate(weights):
        h = h @ w + b
        if i < len(weights) - 1:
            h = h / (1 + np.abs(h))
    np.testing.assert_allclose(run_net(module, x), h[:, 0] * out_scale, rtol=1e-4, atol=1e-4)
    back = load_torchscript(save_torchscript(module, tmp_path / "n.pt"))
    np.testing.assert_array_equal(run_net(back, x), run_net(module, x))


def test_features_history() -> None:
    e = np.arange(10.0)
    qd = -np.arange(10.0)
    f = features(e, qd, 2)
    np.testing.assert_array_equal(f[5], [5, 3, 1, -5, -3, -1])
    np.testing.assert_array_equal(f[0], [0, 0, 0, 0, 0, 0])


def test_net_rung_uses_logged_torque() -> None:
    """With torque logged, the network regresses it: a known P-D torque law is learned
    (its prediction on fresh inputs follows kp e - kd qd)."""
    from simgap.actuator.ladder import LadderConfig, make_folds
    from simgap.actuator.net import rung_net
    from simgap.actuator.servo import ServoBatch

    rng = np.random.default_rng(0)
    L, T, dt = 3, 600, 0.005
    t = np.arange(T) * dt
    cmd = np.array([0.5 * np.sin(2 * np.pi * (0.7 + i) * t) for i in range(L)])
    q = np.array([0.4 * np.sin(2 * np.pi * (0.7 + i) * t - 0.3) for i in range(L)])
    qd = np.gradient(q, dt, axis=1)
    tau = 2.0 * (cmd - q) - 0.1 * qd
    ones = np.ones(L)
    batch = ServoBatch(
        dt,
        cmd,
        q,
        np.ones((L, T)),
        np.ones((L, T), bool),
        qd[:, 0],
        ones,
        ones,
        np.full(L, np.inf),
        np.full(L, np.inf),
        0.01 * ones,
        0 * ones,
        0 * ones,
        qd=qd,
        tau=tau + rng.normal(0, 1e-3, tau.shape),
    )
    res, module = rung_net(
        batch,
        make_folds(L, 0),
        np.array([2.0, 0, 0, 0, 0.1, 0]),
        LadderConfig(noise_floor_rad=1e-3, net_epochs=200),
    )
    assert res.params["target"] == "logged torque"
    # inputs the logs cover, the torque law written out: kp e_t - kd qd_t
    x = features(cmd - q, qd, stride_samples(dt)).reshape(-1, 6)[::7]
    truth = 2.0 * x[:, 0] - 0.1 * x[:, 3]
    pred = run_net(module, x)
    assert np.mean(np.abs(pred - truth)) < 0.1 * np.mean(np.abs(truth))
