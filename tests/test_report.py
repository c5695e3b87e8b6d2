"""The HTML report without a browser: what it says first, its plots' labels and ticks, and
findings JSON with or without the newer keys."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from simgap.report import render_report
from simgap.report.headline import key_line, sig, with_unit
from simgap.report.svg.bars import bars
from simgap.report.svg.distribution import histogram
from simgap.report.svg.lines import lines
from simgap.report.svg.scale import ticks


def _latency(verdict: str = "implicated") -> dict[str, Any]:
    return {
        "branch": "latency",
        "verdict": verdict,
        "title": "Latency",
        "summary": "p95 over the period.",
        "next_step": "Cut inference.",
        "key_figure": "total_p95_s",
        "figures": {
            "total_p95_s": 0.0917,
            "control_dt_s": 0.0666667,
            "overrun_fraction": 0.518,
            "ticks": 300,
            "stages": {
                "camera": {"p50_s": 0.018, "p95_s": 0.024},
                "inference": {"p50_s": 0.028, "p95_s": 0.037},
            },
        },
        "details": {"total_quantiles_s": list(np.linspace(0.05, 0.12, 300))},
    }


def _actuator(new_keys: bool) -> dict[str, Any]:
    """The ladder's finding (bench logs), or with ``new_keys`` the joint identification's
    (intervals, a ridge, the delay profile and a held-out trace)."""
    rng = np.random.default_rng(3)
    t = np.linspace(0, 2, 200)
    joints: dict[str, Any] = {
        n: {
            "selected": "delay_lag",
            "delay_s": 0.01 + 0.002 * i,
            "rungs": [
                {
                    "model": "ideal",
                    "train_mae_rad": 0.012,
                    "validation_mae_rad": 0.013,
                    "validation_per_log_rad": [0.01, 0.02],
                },
                {
                    "model": "delay_lag",
                    "train_mae_rad": 0.0012,
                    "validation_mae_rad": 0.0014,
                    "validation_per_log_rad": [0.001, 0.002],
                },
            ],
        }
        for i, n in enumerate(("shoulder_pan", "elbow_flex"))
    }
    if not new_keys:
        return {
            "branch": "actuator",
            "kind": "ladder",
            "verdict": "implicated",
            "title": "Actuator dynamics",
            "key_figure": "worst_ideal_mae_rad",
            "figures": {"worst_ideal_mae_rad": 0.013, "noise_floor_rad": 0.0015},
            "details": {"joints": joints, "noise_floor_rad": 0.0015},
        }
    q = np.sin(3 * t)
    traces = {
        "shoulder_pan": {
            "selected": "identified",
            "traces": {
                "t_s": list(t),
                "real_rad": list(q + rng.normal(0, 1e-3, t.size)),
                "before_rad": list(np.sin(3 * (t + 0.03))),
                "after_rad": list(q),
            },
        }
    }
    fig = {
        "delay_s": {n: j["delay_s"] for n, j in joints.items()},
        "delay_interval_s": {"shoulder_pan": [0.008, 0.012]},
        "not_identifiable": {"elbow_flex": {"delay": "flat profile: 4 of 5 delays within 1%"}},
        "worst_nominal_rms_rad": 0.013,
    }
    details = {
        "joints": traces,
        "delay_profile": {
            "shoulder_pan": {
                "delays_s": [0.0, 0.01, 0.02, 0.03],
                "ssr_rad2": [0.01, 0.002, 0.006, 0.011],
            }
        },
    }
    return {
        "branch": "actuator",
        "kind": "joint_dynamics",
        "verdict": "implicated",
        "title": "Actuator dynamics",
        "key_figure": "worst_nominal_rms_rad",
        "figures": fig,
        "details": details,
    }


def _diag(findings: list[dict[str, Any]], stop_branch: str | None = None) -> dict[str, Any]:
    implicated = [f["branch"] for f in findings if f["verdict"] == "implicated"]
    return {
        "rig": "bench",
        "seed": 0,
        "simgap_version": "0.1.0",
        "findings": findings,
        "comparability": None,
        "stop": {
            "verdict": "cause_found" if implicated else "incomplete",
            "branch": stop_branch or (implicated[0] if implicated else None),
            "reason": "cheapest implicated",
            "implicated": implicated,
        },
    }


def _plots(page: str) -> list[str]:
    return re.findall(r'<svg class="plot".*?</svg>', page, flags=re.S)


def _label(svg_text: str, cls: str) -> str:
    m = re.search(rf'<text class="{cls}"[^>]*>([^<]*)</text>', svg_text)
    return m.group(1).strip() if m else ""


@pytest.mark.parametrize("new_keys", [False, True])
def test_every_plot_has_a_title_and_both_axis_labels(new_keys: bool) -> None:
    page = render_report(_diag([_latency(), _actuator(new_keys)]))
    plots = _plots(page)
    assert len(plots) >= 4
    for p in plots:
        assert _label(p, "xlabel") and _label(p, "ylabel"), p[:200]
        assert re.search(r"<title>[^<]+</title>", p)
    titles = " ".join(re.findall(r"<title>([^<]+)</title>", page))
    assert ("delay profile" in titles) is new_keys
    assert ("real vs simulated trajectory" in titles) is new_keys
    assert ("residual after the fit" in titles) is new_keys
    assert "Identified command-to-motion delay per joint" in titles  # ladder or identification
    assert ("shoulder_pan: actuator ladder" in titles) is not new_keys  # the joint is named


def test_headline_first_then_the_others_in_ladder_order_and_raw_figures_collapsed() -> None:
    contact = {
        "branch": "contact",
        "verdict": "implicated",
        "title": "Contact",
        "residual": 0.006,
        "noise_floor": 0.002,
        "residual_unit": "m",
        "next_step": "Weigh the cube.",
        "figures": {"friction_best": 0.5},
    }
    elim = {
        "branch": "body",
        "kind": "zero_offsets",
        "verdict": "eliminated",
        "title": "Zero offsets",
        "figures": {"largest_offset_deg": 0.2},
    }
    page = render_report(_diag([_latency(), contact, _actuator(False), elim]))
    head = page.index('id="headline"')
    assert head < page.index('class="cards"') < page.index('id="raw"')
    assert page.index("Fix first: latency") == page.find("Fix first")
    block = page[head : page.index("</section>", head)]
    assert "loop p95 91.7 ms against the control period 66.7 ms" in block
    assert block.index("contact: Contact") < block.index("actuator: Actuator dynamics")
    assert "body" not in block  # an eliminated branch is not something to fix
    raw = page[page.index('id="raw"') :]
    assert "<details>" in raw and "<details open" not in page


def test_no_implicated_branch_says_so() -> None:
    page = render_report(_diag([_latency("eliminated")]))
    assert "No branch is implicated" in page and "Fix first" not in page


def test_a_contradiction_between_phases_and_a_measurement_is_resolved_in_words() -> None:
    from simgap.figures.phases import PhaseComparison, PhasesFigures

    figs = PhasesFigures(
        comparison=PhaseComparison(None, None, {}, (), 0.05),
        branch_map={},
        evaluation="real",
        dominant_phase="grasp",
        departs=(),
        points_at=("contact",),
        eliminates=("appearance",),
        failures=2,
        episodes=4,
    )
    phases = {
        "branch": "phases",
        "verdict": "inconclusive",
        "title": "Failure phases",
        "figures": figs.to_dict(),
    }
    app = {
        "branch": "appearance",
        "kind": "exposure",
        "verdict": "implicated",
        "title": "Exposure",
        "figures": {"jaw_gain_by_recording": {"a": 1.5, "b": 1.0}, "jaw_gain": 1.25},
    }
    page = render_report(_diag([phases, app]))
    assert "the measurement wins" in page
    assert "a 1.50, b 1.00" in page  # per-recording gains lead, not their median


def test_nothing_but_zeros_or_nothing_at_all_is_not_drawn() -> None:
    assert bars(["a", "b"], {"x": [0.0, 0.0]}, xlabel="j", ylabel="deg", title="t") == ""
    assert lines([], {"x": []}, xlabel="t", ylabel="y", title="t") == ""
    assert histogram([np.nan], xlabel="t", title="t") == ""
    torque = {
        "branch": "plumbing",
        "kind": "torque_jump",
        "verdict": "eliminated",
        "title": "Torque on before goal",
        "figures": {"distance_deg": {"a": 0.0, "b": 0.0}, "joints_far": 0},
    }
    page = render_report(_diag([torque]))
    assert _plots(page) == []


def test_tick_labels_never_repeat_on_a_narrow_range() -> None:
    for lo, hi in ((66.6, 66.8), (0.0, 0.0123), (-2.5, 3.0), (1e-13, 1e-12), (998.0, 1003.0)):
        labels = [lab for _, lab in ticks(lo, hi)]
        assert len(labels) >= 2 and len(set(labels)) == len(labels), (lo, hi, labels)


def test_findings_missing_optional_keys_still_render() -> None:
    page = render_report(
        _diag(
            [
                {"branch": "mystery", "verdict": "implicated"},
                {"branch": "latency", "verdict": "not_measured"},
            ]
        )
    )
    assert "Fix first: mystery" in page


def test_numbers_carry_units_and_sensible_digits() -> None:
    assert with_unit("total_p95_s", 0.0917) == "91.7 ms"
    assert with_unit("overrun_fraction", 0.518) == "51.8%"
    assert with_unit("camera_offset_px", 1.0334) == "1.03 px"
    assert sig(458.3012, 3) == "458" and sig(0.0041465, 2) == "0.0041"
    line = key_line(
        {"branch": "x", "figures": {"max_distance_deg": 0.0}, "key_figure": "max_distance_deg"}
    )
    assert line.text == "max distance 0 deg"
