"""The recorder's clock: when a frame's read and its command's arrival happen against the
physics steps (``CLOCKS``), and the logged commands expanded onto the physics steps under it
(``expand_commands``) with each log time's place between steps (``sample_weights``). The
replay (``simgap.sim.replay.Replayer``) steps with them."""

from __future__ import annotations

import numpy as np

from simgap.errors import InputError

CLOCKS: tuple[str, ...] = ("exact", "step")
"""When a frame's read and its command's arrival happen relative to the physics steps:
``exact`` at their own times (a sample between two steps is interpolated, an arrival inside a
step averaged over it); ``step`` on the first physics step at or after them (a recorder that
steps a simulator on a fixed grid)."""


def check_clock(clock: str) -> str:
    """``clock`` if it is one of ``CLOCKS``.

    Raises:
        InputError: it is not, with the valid names.
    """
    if clock not in CLOCKS:
        raise InputError(
            field="control.clock",
            expected=f"one of {list(CLOCKS)} (or 'auto' "
            "in rig.toml: identified from the recording)",
            got=clock,
        )
    return clock


def _on_grid(rel: np.ndarray, clock: str) -> np.ndarray:
    """Times in physics steps from the start: within 1e-6 of a step of a boundary they are
    on it; under the ``step`` clock every time moves up to the next boundary."""
    r = np.rint(rel)
    rel = np.where(np.abs(rel - r) < 1e-6, r, rel)
    return np.ceil(rel) if clock == "step" else rel


def expand_commands(
    t: np.ndarray,
    commands: np.ndarray,
    physics_dt: float,
    nstep: int,
    interp: str = "hold",
    delay_s: float = 0.0,
    hold_before: np.ndarray | None = None,
    clock: str = "exact",
) -> np.ndarray:
    """Commands at the physics steps, shape (nstep, J).

    Step ``i`` runs over ``[s_i, s_i + physics_dt)`` with ``s_i = t[0] + i * physics_dt``.
    ``hold``: the command logged at ``t[k]`` acts over ``[t[k] + delay_s, t[k+1] + delay_s)``
    and each step applies the time average of that piecewise-constant signal over the
    step (an onset inside a step is not moved to a step boundary). ``linear``: the linear
    interpolation at ``s_i - delay_s``. Before ``t[0] + delay_s`` the command is
    ``hold_before`` (default: the first command). Under the ``step`` clock (``CLOCKS``) a held
    command's onset moves up to the next step boundary.

    ``linear`` is the interpolation of ``simgap.fit.delay.shift`` evaluated at other times:
    that one delays a uniformly sampled signal by whole or fractional samples on its own
    grid (and holds the first sample before the start); this one reads irregular stamps at
    the physics steps and holds ``hold_before`` before the start (the module docstring of
    ``fit.delay`` says why they stay two routines).
    """
    first = commands[0] if hold_before is None else hold_before
    check_clock(clock)
    if interp == "hold" and clock == "step":
        # every onset on a step boundary: each step holds one command whole (no averaging,
        # so the controls are the recorder's own values to the bit)
        on = _on_grid((t + delay_s - t[0]) / float(physics_dt), clock).astype(int)
        k = np.searchsorted(on, np.arange(nstep), side="right") - 1
        return np.where((k >= 0)[:, None], commands[np.maximum(k, 0)], first[None, :])
    if interp == "hold":
        h = float(physics_dt)
        # an onset within 1e-6 of a step of a boundary is on it (float32 timestamps)
        onsets = t[0] + _on_grid((t + delay_s - t[0]) / h, clock) * h
        edges = t[0] + np.arange(nstep + 1) * h
        lo = min(float(edges[0]), float(onsets[0])) - h
        hi = max(float(edges[-1]), float(onsets[-1])) + h
        knots = np.concatenate([[lo], onsets, [hi]])
        vals = np.vstack([first[None, :], commands])  # value on [knot_k, knot_k+1)
        seg = np.diff(knots)[:, None] * vals
        cum = np.vstack([np.zeros((1, commands.shape[1])), np.cumsum(seg, axis=0)])
        out = np.empty((nstep, commands.shape[1]))
        for j in range(commands.shape[1]):
            f = np.interp(edges, knots, cum[:, j])
            out[:, j] = np.diff(f) / h
        return out
    if interp == "linear":
        tau = t[0] + np.arange(nstep) * physics_dt - delay_s
        out = np.stack(
            [np.interp(tau, t, commands[:, j]) for j in range(commands.shape[1])], axis=1
        )
        out[tau < t[0] - 0.501 * physics_dt] = first
        return out
    raise InputError(field="control.command_interp", expected="'hold' or 'linear'", got=interp)


def sample_weights(
    t: np.ndarray,
    physics_dt: float,
    clock: str = "exact",
) -> tuple[np.ndarray, np.ndarray]:
    """Where each log time lies between physics steps: (step index i (T,), weight w (T,)).

    The state at ``t[k]`` is ``(1 - w) * state_i + w * state_{i+1}``; a time within 1e-6
    of a step of a step boundary is on it (w = 0). Under the ``step`` clock the sample is
    the state at the first step boundary at or after ``t[k]`` (w = 0).
    """
    rel = _on_grid((np.asarray(t, dtype=float) - t[0]) / physics_dt, check_clock(clock))
    i = np.floor(rel).astype(int)
    return i, rel - i
