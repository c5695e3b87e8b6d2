"""The terminal lines of ``simgap actuator``: the ladder's per joint (rungs, delay, the
--validate logs' error, what was not fitted or identified) and a dataset identification's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from simgap.cli._app import console

if TYPE_CHECKING:
    from simgap.actuator.ladder import JointResult


def print_ladder(
    result: dict[str, Any], held: bool, fits: Mapping[str, JointResult] | None = None
) -> None:
    """The actuator ladder's result (``simgap.branches.actuator.analyse``'s JSON), a block per
    joint, then the patch note, the selection note (``held``: --validate logs were given) and
    the verdict. ``fits`` (``analyse``'s JointResults) adds a line for each rung parameter
    that ended at a bound of its search range, marked "(at bound)"."""
    from simgap.report.headline import sig

    for name, j in result["joints"].items():
        rungs = ", ".join(f"{x['model']} {sig(float(x['validation_mae_rad']))}" for x in j["rungs"])
        d = j.get("delay_s")
        iv = j.get("delay_interval_s") or (result.get("delay_interval_s") or {}).get(name)
        delay = (
            "delay not identified"
            if not isinstance(d, (int, float))
            else (
                f"delay {sig(d * 1e3)} ms"
                + (
                    f" [{sig(iv[0] * 1e3)}, {sig(iv[1] * 1e3)}]"
                    if isinstance(iv, (list, tuple)) and len(iv) == 2
                    else ""
                )
            )
        )
        console.print(
            escape(f"{name}: selected {j['selected']} (held-out MAE [rad]: {rungs}); {delay}"),
            highlight=False,
        )
        if j.get("test_logs") and isinstance(j.get("test_mae_rad"), (int, float)):
            tests = ", ".join(
                f"{x['model']} {sig(float(x['test_mae_rad']))}"
                for x in j["rungs"]
                if "test_mae_rad" in x
            )
            console.print(
                escape(
                    f"  on the {len(j['test_logs'])} --validate log(s), left "
                    f"out of every fit and of the selection: selected "
                    f"{j['selected']} {sig(float(j['test_mae_rad']))} rad "
                    f"(every rung: {tests})"
                ),
                highlight=False,
            )
        for rung, why in (j.get("rungs_skipped") or {}).items():
            console.print(escape(f"  the {rung} rung was not fitted: {why}"), highlight=False)
        for x in j["rungs"]:
            ivs = (x.get("params") or {}).get("intervals") if x["model"] == "servo" else None
            for k, e in (ivs or {}).items():
                if isinstance(e, dict) and e.get("identifiable") is False:
                    console.print(
                        escape(f"  servo {k} not identifiable: {e.get('reason', '')}"),
                        highlight=False,
                    )
            late = (
                (x.get("armature_profile") or {}).get("latency_reason")
                if x["model"] == "servo"
                else None
            )
            if late:
                console.print(escape(f"  servo latency: {late}"), highlight=False)
        for line in at_bound_lines((fits or {}).get(name)):
            console.print(escape(f"  {line}"), highlight=False)
    why = (result.get("patch_proof") or {}).get("mjcf_patch_not_offered")
    if why:
        console.print(escape(f"note: {why}"), highlight=False)
    if held:
        console.print(escape(f"note: {result['selection_note']}"), highlight=False)
    console.print(f"verdict: {result['verdict']}", highlight=False)


def at_bound_lines(fit: JointResult | None) -> list[str]:
    """One line per rung parameter of ``fit`` that ended at a bound of its search range
    (``rungs.AT_BOUND`` in its estimate's reason), e.g. "delay_lag lag_s 5 s (at bound):
    the data do not bound it"; none without a fit."""
    from simgap.actuator.rung_estimate import AT_BOUND
    from simgap.report.headline import sig

    out = []
    for r in () if fit is None else fit.rungs:
        for p in () if r.estimate is None else r.estimate:
            if AT_BOUND not in p.reason:
                continue
            why = (
                "the data do not bound it"
                if p.reason.startswith(AT_BOUND) and ": " in p.reason
                else p.reason
            )
            out.append(f"{r.model} {p.name} {sig(p.value)} {p.unit} (at bound): {why}")
    return out


def print_identification(found: dict[str, Any]) -> None:
    """A LeRobot dataset's identification (``simgap actuator --format lerobot``), a line per
    joint: its verdict, delay with its interval, what was identified and what was not."""
    from simgap.figures.joint_dynamics import JointDynamicsFigures
    from simgap.finding import figures_of
    from simgap.report.headline import sig

    fig = figures_of(found, JointDynamicsFigures)
    for j, v in fig.joint_verdicts.items():
        lo, hi = fig.delay_interval_s[j]
        ivs = fig.params_interval.get(j, {})
        ids = ", ".join(
            f"{k} {sig(x)} [{sig(ivs[k][0])}, {sig(ivs[k][1])}]"
            for k, x in fig.params.get(j, {}).items()
            if k in ivs
        )
        console.print(
            escape(
                f"{j}: {v}; delay {sig(fig.delay_s[j] * 1e3)} ms "
                f"[{sig(lo * 1e3)}, {sig(hi * 1e3)}]; identified: "
                f"{ids or 'none'}; not identifiable: "
                f"{', '.join(fig.not_identifiable.get(j, {})) or 'none'}"
            ),
            highlight=False,
        )
    console.print(escape(f"patch: {fig.patch}"), highlight=False)
    console.print(f"verdict: {found['verdict']}", highlight=False)
