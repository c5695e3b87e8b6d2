"""Where each setting of a ManiSkill replay comes from: the command line, the rig's
``[training]`` (what ``simgap init --maniskill-config`` read from the training environment),
or, where neither gives it, an assumed value that the output says is assumed."""

from __future__ import annotations

from dataclasses import dataclass

from simgap.errors import InputError
from simgap.rig import Rig

ASSUMED_AGENT = "so100"
"""The agent replayed when neither ``--agent`` nor ``training.agent`` names one (ManiSkill
3.0.1's only SO arm); reported as assumed."""
ASSUMED_PHYSICS_DT_S = 0.01
"""The physics step [s] when neither ``--physics-dt`` nor ``training.physics_dt_s`` gives one
(``SO100GraspCube-v1``'s 100 Hz); reported as assumed."""


@dataclass(frozen=True)
class ReplaySettings:
    """The agent and physics step a replay runs with, and where each came from.

    Attributes:
        agent: the ManiSkill agent uid.
        physics_dt_s: the physics step [s].
        sources: ``{"agent", "physics_dt_s"}`` -> ``from the command line``, ``rig
            training.<key>, <its provenance>`` or ``assumed: ...``.
    """

    agent: str
    physics_dt_s: float
    sources: dict[str, str]

    def describe(self) -> str:
        """One line: each setting with where it came from."""
        return (
            f"agent {self.agent} ({self.sources['agent']}); physics step "
            f"{self.physics_dt_s:g} s ({self.sources['physics_dt_s']})"
        )


def _source(option: object, rig: Rig, key: str) -> str:
    if option is not None:
        return "from the command line"
    if getattr(rig.training, key) is not None:
        return f"rig training.{key}, {rig.provenance(f'training.{key}')}"
    return f"assumed: neither the option nor rig training.{key} gives it"


def replay_settings(
    rig: Rig, agent: str | None = None, physics_dt_s: float | None = None
) -> ReplaySettings:
    """The replay's agent and physics step: the option when given, else the rig's
    ``training.agent`` / ``training.physics_dt_s``, else ``ASSUMED_*`` (said so).

    Raises:
        InputError: a physics step that is not positive, or a blank agent.
    """
    a = agent if agent is not None else rig.training.agent
    dt = physics_dt_s if physics_dt_s is not None else rig.training.physics_dt_s
    if a is not None and not str(a).strip():
        raise InputError(
            file=rig.source if agent is None else None,
            field="training.agent" if agent is None else "--agent",
            expected="a ManiSkill agent uid (so100)",
            got=repr(a),
        )
    if dt is not None and not dt > 0:
        raise InputError(
            file=rig.source if physics_dt_s is None else None,
            field="training.physics_dt_s" if physics_dt_s is None else "--physics-dt",
            expected="a positive step [s]",
            got=dt,
        )
    return ReplaySettings(
        agent=str(a) if a is not None else ASSUMED_AGENT,
        physics_dt_s=float(dt) if dt is not None else ASSUMED_PHYSICS_DT_S,
        sources={
            "agent": _source(agent, rig, "agent"),
            "physics_dt_s": _source(physics_dt_s, rig, "physics_dt_s"),
        },
    )
