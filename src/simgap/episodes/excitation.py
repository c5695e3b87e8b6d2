"""Excitation and data: whether a recording can answer the joint fit, known before it runs.

A joint fit (``simgap.actuator.joint_id``) reads each parameter off how the joint answered
its commands. Some recordings cannot answer, and that is known from the commands alone:

- a joint whose command spans fewer than ``MIN_SPAN_COUNTS`` encoder counts over the
  fitted seconds barely moved: none of its parameters, nor its delay, is told apart from
  the encoder's quantisation (``excited`` False);
- Coulomb friction (``frictionloss``) shows where the motion reverses: fewer than
  ``MIN_REVERSALS`` reversals of the commanded direction leave it unseen;
- the inertia (``armature``) and the damping answer the command's acceleration and speed:
  a command whose spectrum (its straight line removed) stays below ``MIN_BAND_HZ`` (95 % of
  its power) moves the joint quasi-statically, where the servo's stiffness alone decides the motion.

And the figures need enough of it: the fit needs ``MIN_FIT_S`` seconds of fitted motion in
all, and a patch needs ``MIN_PROOF_S`` seconds the fit never saw to be proven on. Below
either, a joint finding is inconclusive, never implicated (issue 34: on 3 episodes of 2 s
every joint was implicated while no delay excluded 0 and no gain was identified).

Pure numpy; times [s] and commands [rad] come in as arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MIN_SPAN_COUNTS = 20
"""Fewest encoder counts a joint's command must span for the fit to see it move (20 counts
of the STS3215's 4096 per turn: 1.8 deg)."""
MIN_REVERSALS = 2
"""Fewest reversals of the commanded direction for Coulomb friction to show."""
MIN_BAND_HZ = 0.5
"""Least frequency [Hz] below which 95 % of the command's power may lie for the inertia and
damping to show (a slower command is quasi-static)."""
MIN_FIT_S = 10.0
"""Fewest seconds of fitted motion (all fitted episodes) for a joint finding to implicate."""
MIN_PROOF_S = 4.0
"""Fewest seconds the fit never saw (held-out episodes and fitted episodes' tails) for a
patch to be proven on."""
QUANT_RMS_COUNTS = 2.0
"""Motion off an episode's straight line within this many counts RMS is quantisation."""
QUANT_BIN_FACTOR = 6.0
"""A spectral bin within this many times the quantisation's white power is noise (a white
bin passes it with probability exp(-6), 0.25 %)."""
SPEED_KINDS = ("damping", "armature")
"""The parameters that need a command faster than quasi-static (``MIN_BAND_HZ``)."""


@dataclass(frozen=True)
class JointExcitation:
    """How one joint's commands excite it over the fitted seconds.

    Attributes:
        name: the model joint.
        span_counts: the command's peak-to-peak span [encoder counts].
        rms_speed_rad_s: RMS of the commanded speed [rad/s].
        reversals: reversals of the commanded direction (over all fitted episodes).
        band_hz: frequency below which 95 % of the command's power lies, its straight line
            removed [Hz].
        unseen: parameter (or ``delay``, ``all``) -> why the commands cannot show it.
    """

    name: str
    span_counts: float
    rms_speed_rad_s: float
    reversals: int
    band_hz: float
    unseen: Mapping[str, str]

    @property
    def excited(self) -> bool:
        """Whether the joint moved enough for any of its parameters to show."""
        return "all" not in self.unseen


@dataclass(frozen=True)
class Excitation:
    """The excitation and data checks of a fit's recording.

    Attributes:
        joints: one per fitted joint, model order.
        fitted_s: seconds of motion the fit replays, all fitted episodes [s].
        proof_s: seconds the fit never saw that a patch is proven on [s].
        fitted_episodes: episodes fitted.
        frames: frames fitted.
        thin: why the data are too little for a joint finding to implicate ('' when enough).
    """

    joints: tuple[JointExcitation, ...]
    fitted_s: float
    proof_s: float
    fitted_episodes: int
    frames: int
    thin: str

    def joint(self, name: str) -> JointExcitation | None:
        """The check of one joint, or None when it was not fitted."""
        return next((j for j in self.joints if j.name == name), None)

    def figures(self) -> dict[str, Any]:
        """JSON figures: the data's amounts and thresholds, and per joint its checks."""
        return {
            "fitted_s": self.fitted_s,
            "proof_s": self.proof_s,
            "fitted_episodes": self.fitted_episodes,
            "fitted_frames": self.frames,
            "min_fit_s": MIN_FIT_S,
            "min_proof_s": MIN_PROOF_S,
            "thin": self.thin,
            "min_span_counts": MIN_SPAN_COUNTS,
            "min_reversals": MIN_REVERSALS,
            "min_band_hz": MIN_BAND_HZ,
            "joints": {
                j.name: {
                    "span_counts": j.span_counts,
                    "rms_speed_rad_s": j.rms_speed_rad_s,
                    "reversals": j.reversals,
                    "band_hz": j.band_hz,
                    "excited": j.excited,
                    "unseen": dict(j.unseen),
                }
                for j in self.joints
            },
        }


def _reversals(v: np.ndarray, tol: float) -> int:
    """Sign changes of a speed, ignoring what stays within ``tol`` of zero."""
    s = np.sign(v[np.abs(v) > tol])
    return int(np.count_nonzero(s[1:] != s[:-1]))


def _band_hz(qs: Sequence[np.ndarray], fps: float, encoder_rad: float) -> float:
    """The frequency below which 95 % of the commands' power lies over the episodes, each
    with its straight line removed (a slow sweep is quasi-static however far it goes) and
    whole-count quantisation left out: an episode whose motion off its line is within
    ``QUANT_RMS_COUNTS`` counts RMS carries none, and a bin within ``QUANT_BIN_FACTOR`` x
    the quantisation's white power (a count squared over 12 per sample) counts none."""
    n = max((q.size for q in qs), default=0)
    if n < 4:
        return 0.0
    power = np.zeros(n // 2 + 1)
    for q in qs:
        x = np.arange(q.size, dtype=float)
        line = np.polyval(np.polyfit(x, q, 1), x) if q.size > 1 else q
        r = q - line
        if np.sqrt(np.mean(r**2)) < QUANT_RMS_COUNTS * encoder_rad:
            continue
        p = np.abs(np.fft.rfft(r, n=n)) ** 2
        power += np.where(p > QUANT_BIN_FACTOR * q.size * encoder_rad**2 / 12.0, p, 0.0)
    freqs = np.fft.rfftfreq(n, 1.0 / fps)
    total = float(power.sum())
    if total <= 0:
        return 0.0
    return float(freqs[int(np.searchsorted(np.cumsum(power) / total, 0.95))])


def joint_excitation(
    name: str, commands: Sequence[np.ndarray], fps: float, encoder_rad: float
) -> JointExcitation:
    """The checks of one joint from its commands [rad] of each fitted episode."""
    cs = [np.asarray(c, dtype=float) for c in commands if len(c) > 1]
    if not cs:
        return JointExcitation(name, 0.0, 0.0, 0, 0.0, {"all": "no fitted frame"})
    span = (max(float(c.max()) for c in cs) - min(float(c.min()) for c in cs)) / encoder_rad
    vs = [np.diff(c) * fps for c in cs]
    rms = float(np.sqrt(np.mean(np.concatenate(vs) ** 2)))
    tol = 0.5 * encoder_rad * fps  # half a count per frame: quantisation, not motion
    rev = sum(_reversals(v, tol) for v in vs)
    band = _band_hz(cs, fps, encoder_rad)
    unseen: dict[str, str] = {}
    if span < MIN_SPAN_COUNTS:
        unseen["all"] = (
            f"the command spans {span:.0f} encoder counts, fewer than the "
            f"{MIN_SPAN_COUNTS} the fit needs to see the joint move"
        )
    else:
        if rev < MIN_REVERSALS:
            unseen["frictionloss"] = (
                f"{rev} reversal(s) of the commanded direction, fewer "
                f"than the {MIN_REVERSALS} where Coulomb friction shows"
            )
        if band < MIN_BAND_HZ:
            for k in SPEED_KINDS:
                unseen[k] = (
                    f"95 % of the command's power lies below {band:.2g} Hz, "
                    f"slower than the {MIN_BAND_HZ:g} Hz where {k} shows"
                )
    return JointExcitation(name, float(span), rms, int(rev), band, unseen)


def assess_excitation(
    commands: Sequence[np.ndarray],
    joint_names: Sequence[str],
    fps: float,
    encoder_rad: float,
    proof_s: float,
) -> Excitation:
    """The excitation and data checks of a fit.

    Args:
        commands: the fitted episodes' commands [rad], each (T_e, J).
        joint_names: the J fitted joints.
        fps: the recording's frame rate [Hz].
        encoder_rad: one encoder count [rad].
        proof_s: seconds the fit never saw that a patch would be proven on [s].
    """
    cs = [np.asarray(c, dtype=float) for c in commands]
    joints = tuple(
        joint_excitation(j, [c[:, i] for c in cs], fps, encoder_rad)
        for i, j in enumerate(joint_names)
    )
    frames = int(sum(c.shape[0] for c in cs))
    fitted_s = float(sum(max(0, c.shape[0] - 1) for c in cs) / fps)
    why = []
    if fitted_s < MIN_FIT_S:
        why.append(
            f"the fit replays {fitted_s:.1f} s of motion ({len(cs)} episode(s), "
            f"{frames} frames), less than the {MIN_FIT_S:g} s a joint finding needs"
        )
    if proof_s < MIN_PROOF_S:
        why.append(
            f"{proof_s:.1f} s are left that the fit never saw, less than the "
            f"{MIN_PROOF_S:g} s a patch is proven on"
        )
    return Excitation(
        joints=joints,
        fitted_s=fitted_s,
        proof_s=float(proof_s),
        fitted_episodes=len(cs),
        frames=frames,
        thin="; ".join(why),
    )
