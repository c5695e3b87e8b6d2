"""Rung 4: an actuator network as in Hwangbo et al. 2019 (torch extra, imported lazily).

An MLP with 3 hidden layers of 32 softsign units maps the position error ``e = cmd - q``
and the velocity at t, t - d, t - 2d (d = 10 ms, rounded to samples) to the actuator's
torque: the logged torque where the logs have it (``tau_<joint>`` in the CSV), otherwise
(BAM logs, LeRobot datasets) the torque the measured motion implies through the load
model, ``tau = J * qdd - tau_gravity`` (inverse dynamics with the servo rung's
armature). Early stopping holds back a whole training trajectory type when the logs are
grouped by type (``early_stop_samples``), else 10 % of the samples. Every fold's network
trains at once (stacked weights, one batched matmul per layer), and the held-out score
comes from an open-loop rollout with the network in the loop, the same load model and,
while torque is disabled, the servo rung's passive friction. With many logs the held-out
trajectories are grouped (at most four folds, each trajectory still held out once) to
bound the fit time.

Networks are TorchScript modules ``(N, 6) -> (N, 1)``, the form Isaac Lab's
``ActuatorNetMLPCfg`` loads; ``save_torchscript``/``load_torchscript`` round-trip them.
"""

from __future__ import annotations

import importlib.util
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simgap.errors import InputError, MissingExtraError

if TYPE_CHECKING:
    from simgap.actuator.folds import Folds
    from simgap.actuator.rungs import LadderConfig, RungResult
    from simgap.actuator.servo import ServoBatch

HISTORY_SPACING_S = 0.01
"""Spacing of the input history (Hwangbo: t, t - 10 ms, t - 20 ms) [s]."""

HIDDEN = (32, 32, 32)

MAX_SAMPLES = 1500
"""Training samples drawn (at random, seeded) from the logs; bounds the fit time."""


def torch_available() -> bool:
    """Whether the ``net`` extra (torch) is installed."""
    return importlib.util.find_spec("torch") is not None


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:
        raise MissingExtraError("net", "torch", "The actuator network (rung 4)") from e
    return torch


def stride_samples(dt: float) -> int:
    """History spacing in samples of ``dt`` [s] (at least 1)."""
    return max(1, int(round(HISTORY_SPACING_S / dt)))


def features(err: np.ndarray, qd: np.ndarray, stride: int) -> np.ndarray:
    """Network inputs ``[e_t, e_t-d, e_t-2d, qd_t, qd_t-d, qd_t-2d]``.

    Args:
        err: position error cmd - q [rad], shape (..., T).
        qd: velocity [rad/s], shape (..., T).
        stride: d in samples (the first samples repeat the first value).

    Returns:
        shape (..., T, 6).
    """

    def lagged(a: np.ndarray, k: int) -> np.ndarray:
        if k == 0:
            return a
        pad = np.repeat(a[..., :1], k, axis=-1)
        return np.concatenate([pad, a[..., :-k]], axis=-1)

    return np.stack(
        [
            lagged(err, 0),
            lagged(err, stride),
            lagged(err, 2 * stride),
            lagged(qd, 0),
            lagged(qd, stride),
            lagged(qd, 2 * stride),
        ],
        axis=-1,
    )


def _build_module(
    weights: list[tuple[np.ndarray, np.ndarray]], in_scale: np.ndarray, out_scale: float
) -> Any:
    """A scripted ``nn.Sequential`` MLP with the input and output scaling folded into the
    first and last layers' weights (so Isaac Lab's pos_scale and vel_scale stay 1)."""
    torch = _torch()
    nn = torch.nn
    layers: list[Any] = []
    n = len(weights)
    for i, (w, b) in enumerate(weights):
        w = np.asarray(w, dtype=float)
        b = np.asarray(b, dtype=float)
        if i == 0:
            w = w * np.asarray(in_scale, dtype=float)[:, None]
        if i == n - 1:
            w, b = w * out_scale, b * out_scale
        lin = nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.as_tensor(w.T, dtype=torch.float32))
            lin.bias.copy_(torch.as_tensor(b, dtype=torch.float32))
        layers.append(lin)
        if i < n - 1:
            layers.append(nn.Softsign())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.script(nn.Sequential(*layers).eval())


def save_torchscript(module: Any, path: str | Path) -> Path:
    """Write a TorchScript network (scripting a plain module first)."""
    torch = _torch()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with warnings.catch_warnings():  # Isaac Lab loads TorchScript, deprecated or not
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = (
            module if isinstance(module, torch.jit.ScriptModule) else torch.jit.script(module)
        )
        torch.jit.save(scripted, str(tmp))
    tmp.replace(path)
    return path


def load_torchscript(path: str | Path) -> Any:
    """Load a TorchScript actuator network on the CPU."""
    torch = _torch()
    path = Path(path)
    if not path.is_file():
        raise InputError(file=path, expected="a TorchScript network file", got="no such file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return torch.jit.load(str(path), map_location="cpu").eval()
    except RuntimeError as e:
        raise InputError(
            file=path, expected="a TorchScript network (torch.jit.save)", got=str(e).splitlines()[0]
        ) from e


def run_net(module: Any, x: np.ndarray) -> np.ndarray:
    """Evaluate a network on inputs ``x`` of shape (N, 6); returns shape (N,)."""
    torch = _torch()
    with torch.no_grad():
        out = module(torch.as_tensor(np.asarray(x), dtype=torch.float32))
    return np.asarray(out.reshape(-1).numpy(), dtype=float)


def _numpy_mlp(x: np.ndarray, Ws: list[np.ndarray], bs: list[np.ndarray]) -> np.ndarray:
    """Stacked MLP forward: x (F, M, 6), Ws[i] (F, in, out) -> (F, M)."""
    h = x
    for i, (w, b) in enumerate(zip(Ws, bs, strict=True)):
        h = np.einsum("fmi,fio->fmo", h, w) + b[:, None, :]
        if i < len(Ws) - 1:
            h = h / (1.0 + np.abs(h))
    return h[..., 0]


MAX_NET_FOLDS = 4
"""Held-out groups of the network's leave-trajectories-out (its training is the costly
part): with more logs than this, each fold holds out every ``MAX_NET_FOLDS``-th log."""


def grouped_folds(folds: Folds) -> Folds:
    """Leave-one-out folds regrouped into at most ``MAX_NET_FOLDS`` held-out groups (row 0,
    the fit on all training logs, is kept); other fold layouts are returned unchanged."""
    from simgap.actuator.folds import Folds

    n_rows, n = folds.train.shape
    if n_rows - 1 <= MAX_NET_FOLDS or folds.scheme == "validate":
        return folds
    train0 = folds.train[0]  # the test logs (``Folds.test``) stay out of every group
    groups = (np.cumsum(train0) - 1) % MAX_NET_FOLDS
    held = np.array([train0 & (groups == g) for g in range(MAX_NET_FOLDS)])
    return Folds(
        train=np.vstack([folds.train[:1], train0 & ~held]),
        held=np.vstack([np.zeros((1, n), dtype=bool), held]),
        scheme=f"leave-trajectories-out ({MAX_NET_FOLDS} groups)",
        test=folds.test,
    )


def early_stop_samples(
    folds: Folds,
    log_of: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Which samples each fold holds back for early stopping, shape (F, N).

    With grouped folds (trajectory types) a fold stops on a whole training *type* it does
    not fit (the next group after the one it holds out; the fit on all logs stops on the
    first group), so the network stops where it still carries to an unseen type; otherwise
    10 % of the samples at random.
    """
    F = folds.train.shape[0]
    if not folds.groups or len(folds.groups) < 3:
        return rng.random((F, log_of.size)) < 0.1
    G = len(folds.groups)
    held = folds.held[1:]  # (G, L)
    out = np.zeros((F, log_of.size), dtype=bool)
    for f in range(F):
        inner = 0 if f == 0 else f % G  # row f holds out group f - 1
        out[f] = held[inner][log_of]
    return out


def rung_net(
    batch: ServoBatch, folds: Folds, servo_params: np.ndarray, config: LadderConfig
) -> tuple[RungResult, Any]:
    """Fit rung 4 on every fold at once and score it by open-loop rollout.

    The network sees the raw command and learns any delay within its 20 ms input history
    (the servo rung's delay is not passed to it).

    Returns:
        (result, the TorchScript network of the fit on all training logs).
    """
    torch = _torch()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # these small matmuls lose to thread spin-waits on shared cores
    try:
        return _rung_net(torch, batch, folds, servo_params, config)
    finally:
        torch.set_num_threads(threads)


def _rung_net(
    torch: Any, batch: ServoBatch, folds: Folds, servo_params: np.ndarray, config: LadderConfig
) -> tuple[RungResult, Any]:
    from simgap.actuator.rungs import scored

    t0 = time.perf_counter()
    folds = grouped_folds(folds)
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    dt = batch.dt
    stride = stride_samples(dt)
    arm, fc, fv = servo_params[2], servo_params[3], servo_params[4]
    J = batch.inertia + arm  # (L,)
    qd = batch.qd if batch.qd is not None else np.gradient(batch.q, dt, axis=1)
    kernel = np.ones(5) / 5.0
    qd_s = np.array([np.convolve(v, kernel, mode="same") for v in qd])
    qdd = np.gradient(qd_s, dt, axis=1)
    grav = batch.g_sin[:, None] * np.sin(batch.q) + batch.g_cos[:, None] * np.cos(batch.q)
    measured = batch.tau is not None
    tau = batch.tau if batch.tau is not None else J[:, None] * qdd - grav  # (L, T)
    X = features(batch.cmd - batch.q, qd, stride)  # (L, T, 6)
    use = (batch.mask > 0) & batch.enable
    Xf, yf = X[use], tau[use]
    log_of = np.broadcast_to(np.arange(batch.n_logs)[:, None], use.shape)[use]
    if yf.size > MAX_SAMPLES:  # every fold trains on the same random subset of samples
        keep = np.sort(rng.choice(yf.size, MAX_SAMPLES, replace=False))
        Xf, yf, log_of = Xf[keep], yf[keep], log_of[keep]
    in_scale = 1.0 / np.maximum(Xf.std(axis=0), 1e-6)
    out_scale = float(max(yf.std(), 1e-6))
    F = folds.train.shape[0]
    train_mask = folds.train[:, log_of]  # (F, N)
    early = early_stop_samples(folds, log_of, rng)
    fit_mask = train_mask & ~early
    stop_mask = train_mask & early
    xt = torch.as_tensor(Xf * in_scale, dtype=torch.float32)
    yt = torch.as_tensor(yf / out_scale, dtype=torch.float32)
    dims = (6, *HIDDEN, 1)
    Ws = [
        torch.nn.Parameter(torch.randn(F, a, b) * (1.0 / np.sqrt(a)))
        for a, b in zip(dims[:-1], dims[1:], strict=True)
    ]
    bs = [torch.nn.Parameter(torch.zeros(F, b)) for b in dims[1:]]
    opt = torch.optim.Adam([*Ws, *bs], lr=5e-3)
    fm = torch.as_tensor(fit_mask, dtype=torch.float32)
    sm = torch.as_tensor(stop_mask, dtype=torch.float32)

    def forward(x: Any) -> Any:
        h = x.unsqueeze(0).expand(F, -1, -1).contiguous()  # bmm is slow on stride-0 views
        for i, (w, b) in enumerate(zip(Ws, bs, strict=True)):
            h = torch.bmm(h, w) + b[:, None, :]
            if i < len(Ws) - 1:
                h = torch.nn.functional.softsign(h)
        return h[..., 0]

    best = [None] * F
    best_loss = np.full(F, np.inf)
    for _ in range(config.net_epochs):
        opt.zero_grad()
        err2 = (forward(xt) - yt[None]) ** 2
        loss_f = (err2 * fm).sum(1) / fm.sum(1).clamp(min=1)
        loss_f.sum().backward()
        opt.step()
        with torch.no_grad():
            val = ((err2 * sm).sum(1) / sm.sum(1).clamp(min=1)).numpy()
        for f in np.flatnonzero(val < best_loss):
            best_loss[f] = val[f]
            best[f] = (  # type: ignore[call-overload]
                [w[f].detach().numpy().copy() for w in Ws],
                [b[f].detach().numpy().copy() for b in bs],
            )
    Wn = [np.stack([best[f][0][i] for f in range(F)]) for i in range(len(Ws))]  # type: ignore[index]
    bn = [np.stack([best[f][1][i] for f in range(F)]) for i in range(len(bs))]  # type: ignore[index]
    with np.errstate(over="ignore", invalid="ignore"):
        pred = rollout(Wn, bn, in_scale, out_scale, batch, stride, J, fc, fv)
    module = _build_module([(Wn[i][0], bn[i][0]) for i in range(len(Wn))], in_scale, out_scale)
    params = {
        "hidden": list(HIDDEN),
        "activation": "softsign",
        "inputs": ["e_t", "e_t-d", "e_t-2d", "qd_t", "qd_t-d", "qd_t-2d"],
        "error": "cmd - q",
        "history_spacing_s": stride * dt,
        "target": "logged torque" if measured else "inverse-dynamics torque (J qdd - gravity)",
        "early_stop": "a held-out training type"
        if folds.groups and len(folds.groups) >= 3
        else "10 % of the samples",
        "epochs": config.net_epochs,
    }
    # its numbers (history spacing, epochs) are settings, not fitted values: none stated
    result = scored(
        "net", pred, batch, folds, params, t0, noise_floor_rad=config.noise_floor_rad, fitted=()
    )
    return result, module


def rollout(
    Ws: list[np.ndarray],
    bs: list[np.ndarray],
    in_scale: np.ndarray,
    out_scale: float,
    batch: ServoBatch,
    stride: int,
    J: np.ndarray,
    fc: float,
    fv: float,
) -> np.ndarray:
    """Open-loop rollouts with F stacked networks on every log: shape (F, L, T)."""
    F = Ws[0].shape[0]
    L, T = batch.cmd.shape
    dt = batch.dt
    q = np.broadcast_to(batch.q[:, 0], (F, L)).copy()
    qd = np.broadcast_to(batch.qd0, (F, L)).copy()
    hist = 2 * stride + 1
    e_h = np.repeat((batch.cmd[:, 0] - batch.q[:, 0])[None, :, None], hist, axis=2)
    v_h = np.repeat(np.broadcast_to(batch.qd0, (F, L))[:, :, None], hist, axis=2).copy()
    e_h = np.broadcast_to(e_h, (F, L, hist)).copy()
    out = np.empty((F, L, T))
    j_dt = J[None, :] / dt
    for k in range(T):
        out[:, :, k] = q
        e_h = np.roll(e_h, 1, axis=2)
        v_h = np.roll(v_h, 1, axis=2)
        e_h[:, :, 0] = batch.cmd[None, :, k] - q
        v_h[:, :, 0] = qd
        x = (
            np.concatenate(
                [e_h[:, :, [0, stride, 2 * stride]], v_h[:, :, [0, stride, 2 * stride]]], axis=2
            )
            * in_scale
        )
        tau_net = _numpy_mlp(x.reshape(F, L, 6), Ws, bs) * out_scale
        grav = batch.g_sin[None] * np.sin(q) + batch.g_cos[None] * np.cos(q)
        on = batch.enable[None, :, k]
        stop = j_dt * qd + grav
        passive = -np.sign(stop) * np.minimum(np.abs(stop), fc)
        qd_off = (stop + passive) / (j_dt + fv)
        qd_on = qd + (tau_net + grav) / j_dt
        qd = np.where(on, qd_on, qd_off)
        qd = np.clip(qd, -1e3, 1e3)
        q = q + dt * qd
    return out
