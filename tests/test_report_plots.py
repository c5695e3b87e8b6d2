"""The report's plots say what they draw (issue 41, plots that mislead): each test reads the
SVG a plot emits. Failures carry an x, one x per failure, and neither the simulated nor the
real runs hide the other; equal values share one position on an axis whose tick labels
differ; every title fits the plot's width; a delay drawn hollow says why; and truth values
are printed as words."""

from __future__ import annotations

import re
import string
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simgap.episodes.placements import placements_check
from simgap.figures.envelope import PlacementDetails
from simgap.plumbing.setup import check_policy_server
from simgap.report import plots_actuator, plots_envelope, render_report
from simgap.report.svg import frame
from simgap.report.svg.bars import bars as bar_chart
from simgap.report.svg.lines import lines
from simgap.report.svg.scale import axis_range
from simgap.report.svg.scatter import scatter
from simgap.report.svg.text import text_width

NS = "{http://www.w3.org/2000/svg}"
TRAIN_X, TRAIN_Y = (0.14, 0.34), (-0.1, 0.1)
# twelve placements, the same for both runs (one manifest); three real ones fail
XY = np.array(
    [
        [0.166, 0.050],
        [0.288, -0.004],
        [0.295, 0.081],
        [0.21, 0.08],
        [0.19, 0.05],
        [0.20, 0.087],
        [0.176, 0.006],
        [0.31, 0.043],
        [0.233, 0.073],
        [0.174, -0.01],
        [0.294, -0.075],
        [0.207, 0.048],
    ]
)
REAL_FAILS = (0, 5, 10)


def _root(svg_text: str) -> ET.Element:
    return ET.fromstring(svg_text)


def _placements(real_ok: list[bool], sim_ok: list[bool]) -> str:
    """The placements plot of the envelope check, from trials as the branch reads them
    (its details give each placement's success as the fraction of trials that succeeded)."""
    check = placements_check(
        {"real": (XY, list(enumerate(real_ok))), "sim": (XY, list(enumerate(sim_ok)))},
        TRAIN_X,
        TRAIN_Y,
    )
    return plots_envelope.placements_plot(
        PlacementDetails.from_mapping({"check": check.check, **check.details}, where="details")
    )


def _in_plot(x: float, y: float) -> bool:
    return frame.PAD_L <= x <= frame.W - frame.PAD_R and frame.PAD_T <= y <= frame.H - frame.PAD_B


def _x_marks(root: ET.Element) -> list[tuple[float, float, float]]:
    """(cx, cy, half size) of every x drawn in the plot area: a group of two lines that
    cross at their midpoints, one rising and one falling."""
    out = []
    for g in root.iter(f"{NS}g"):
        lines = [c for c in g if c.tag == f"{NS}line"]
        if len(lines) != 2:
            continue
        (a, b) = [[float(ln.get(k, "nan")) for k in ("x1", "y1", "x2", "y2")] for ln in lines]
        mid_a, mid_b = (
            ((a[0] + a[2]) / 2, (a[1] + a[3]) / 2),
            ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2),
        )
        crossed = (a[2] - a[0]) * (a[3] - a[1]) * (b[2] - b[0]) * (b[3] - b[1]) < 0
        if crossed and np.allclose(mid_a, mid_b, atol=0.2) and _in_plot(*mid_a):
            out.append((mid_a[0], mid_a[1], abs(a[2] - a[0]) / 2))
    return out


def test_every_failure_is_drawn_as_an_x() -> None:
    """On the old code a failed placement (success 0.0, the fraction the branch writes)
    was a plain dot: no x at all under a legend that promised "x = failure"."""
    real = [i not in REAL_FAILS for i in range(len(XY))]
    root = _root(_placements(real, [True] * len(XY)))
    marks = _x_marks(root)
    assert len(marks) == len(REAL_FAILS)
    # each x sits on a failed placement
    want = sorted(i for i in REAL_FAILS)
    tips = [
        t.text or ""
        for g in root.iter(f"{NS}g")
        for t in g.findall(f"{NS}title")
        if "failure" in (t.text or "")
    ]
    assert len(tips) == len(want) and all(t.startswith("real (") for t in tips)
    # a failure in both runs: one x each; plain booleans count the same as fractions
    sim = [i != 10 for i in range(len(XY))]
    assert len(_x_marks(_root(_placements(real, sim)))) == len(REAL_FAILS) + 1
    groups = {"real": (XY[:4], [False, True, None, 0.5])}
    assert len(_x_marks(_root(scatter(groups, xlabel="x [m]", ylabel="y [m]", title="t")))) == 1


def _marks_by_placement(root: ET.Element) -> dict[str, dict[str, tuple[int, float, bool]]]:
    """{"(x, y)": {series: (drawing order, extent [px], solid)}} from each mark's tooltip
    (``<series> (x, y)...``), its radius or half size, and its fill."""
    out: dict[str, dict[str, tuple[int, float, bool]]] = {}
    for order, el in enumerate(root.iter()):
        tip = el.find(f"{NS}title")
        m = re.match(r"(\w+) (\([-\d.]+, [-\d.]+\))", (tip.text or "") if tip is not None else "")
        if not m or el.tag not in (f"{NS}circle", f"{NS}g", f"{NS}polygon", f"{NS}rect"):
            continue
        if el.tag == f"{NS}circle":
            extent = float(el.get("r", "0"))
            solid = (
                el.get("fill", "none") not in ("none", "#fff", "white")
                and float(el.get("fill-opacity", "1")) > 0.5
            )
        else:
            lines = el.findall(f"{NS}line")
            extent = (
                abs(float(lines[0].get("x2", "0")) - float(lines[0].get("x1", "0"))) / 2
                if lines
                else 0.0
            )
            solid = True  # an x hides what lies under its strokes
        out.setdefault(m.group(2), {})[m.group(1)] = (order, extent, solid)
    return out


def test_neither_series_hides_the_other() -> None:
    """At a placement both runs share, the one drawn first must show around the one on top.
    On the old code the simulated dot (r 3) lay under the real one (r 4.5, opaque)."""
    real = [i not in REAL_FAILS for i in range(len(XY))]
    root = _root(_placements(real, [True] * len(XY)))
    shared = _marks_by_placement(root)
    assert len(shared) == len(XY)
    for where, by in shared.items():
        assert set(by) == {"real", "sim"}, where
        (_, under), (_, over) = sorted(by.items(), key=lambda kv: kv[1][0])
        visible = under[1] >= over[1] + 1.5 or not over[2]
        assert visible, (where, by)


def _legend_words(root: ET.Element) -> list[str]:
    """The legend's words: text above the plot area that is not the title."""
    return [
        t.text or ""
        for t in root.iter(f"{NS}text")
        if t.get("class") != "ptitle" and float(t.get("y", "1e9")) < frame.PAD_T
    ]


def test_the_legend_names_only_the_marks_drawn() -> None:
    """Without a failure there is no failure in the legend; with one, the legend names it.
    On the old code each series read "(x = failure)" whatever was drawn."""
    quiet = _legend_words(_root(_placements([True] * len(XY), [True] * len(XY))))
    assert not any("failure" in w for w in quiet), quiet
    assert {"sim", "real", "success", "training square"} <= set(quiet)
    real = [i not in REAL_FAILS for i in range(len(XY))]
    loud = _legend_words(_root(_placements(real, [True] * len(XY))))
    assert "failure" in loud and "some trials failed" not in loud


def _x_ticks(root: ET.Element) -> list[tuple[float, str]]:
    y = str(frame.H - frame.PAD_B + 14)
    return [
        (float(t.get("x", "nan")), t.text or "")
        for t in root.iter(f"{NS}text")
        if t.get("y") == y and t.get("text-anchor") == "middle"
    ]


@pytest.mark.parametrize(
    "data, period",
    [
        ([33.333331] * 40 + [33.333332] * 60, 33.333333),  # a real recording's intervals
        ([66.66666666666643, 66.66666666666731] * 50, 66.6667),  # the demo's, a rounded setting
    ],
)
def test_equal_values_share_one_position_on_a_readable_axis(
    data: list[float], period: float
) -> None:
    """The control-rate plot of intervals equal to the training period to their precision.
    On the old code its axis ran from the smallest to the largest value (33.333331 to
    33.333333): the bar at the left end, the training period at the right."""
    finding = {
        "branch": "envelope",
        "kind": "control_rate",
        "details": {"check": "control_rate", "intervals_ms": data, "training_dt_ms": period},
    }
    root = _root(plots_envelope.plots(finding)[0])
    ticks = _x_ticks(root)
    labels = [lab for _, lab in ticks]
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
    values = [float(lab) for lab in labels]
    assert max(values) - min(values) >= 0.01 * period  # a span the labels can print
    bars = [r for r in root.iter(f"{NS}rect") if r.get("fill") == frame.PALETTE[0]]
    assert len(bars) == 1  # every interval in one bar
    x0, w = float(bars[0].get("x", "nan")), float(bars[0].get("width", "nan"))
    line = next(ln for ln in root.iter(f"{NS}line") if ln.get("stroke-dasharray"))
    assert x0 <= float(line.get("x1", "nan")) <= x0 + w  # the period on the bar
    # and mid-axis, not at an end
    assert frame.PAD_L + 100 < float(line.get("x1", "nan")) < frame.W - frame.PAD_R - 100


def test_a_line_of_equal_values_is_drawn_mid_axis() -> None:
    """The shared frame, not one plot: a series equal to its precision is one height.
    On the old code 33.333331 and 33.333333 sat at the bottom and the top."""
    text = lines(
        [0, 1, 2, 3],
        {"interval": [33.333331, 33.333333, 33.333331, 33.333333]},
        xlabel="tick",
        ylabel="interval [ms]",
        title="t",
    )
    pts = _root(text).find(f"{NS}polyline")
    assert pts is not None
    ys = [float(p.split(",")[1]) for p in (pts.get("points") or "").split()]
    assert max(ys) - min(ys) < 1.0
    mid = (frame.PAD_T + frame.H - frame.PAD_B) / 2
    assert abs(ys[0] - mid) < 0.25 * (frame.H - frame.PAD_T - frame.PAD_B)
    assert axis_range(2.0, 2.5) == (2.0, 2.5)  # a real range is kept as it is


def _titles(svg_text: str) -> list[tuple[float, str]]:
    return [
        (float(t.get("x", "nan")), t.text or "")
        for t in _root(svg_text).iter(f"{NS}text")
        if t.get("class") == "ptitle"
    ]


def _actuator_finding(intervals: bool) -> dict[str, Any]:
    """An actuator finding as the branch writes it: the ladder's (per joint delay_s, no
    interval: the demo's) or the joint dynamics' (delay_interval_s, one joint on a ridge)."""
    names = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
    delays = dict(zip(names, (0.0082, 0.0081, 0.0085, 0.0123, 0.0121, 0.0), strict=True))
    rungs = [
        {"model": "ideal", "train_mae_rad": 0.0115, "validation_mae_rad": 0.0115},
        {"model": "delay_lag", "train_mae_rad": 0.0013, "validation_mae_rad": 0.0012},
    ]
    joints = {n: {"delay_s": d, "selected": "delay_lag", "rungs": rungs} for n, d in delays.items()}
    fig: dict[str, Any] = {"noise_floor_rad": 0.0015, "worst_ideal_mae_rad": 0.0115}
    details: dict[str, Any] = {"joints": joints, "noise_floor_rad": 0.0015}
    kind = "ladder"
    if intervals:
        kind, details = "joint_dynamics", {}
        fig = dict(
            delay_s=delays,
            delay_interval_s={n: [max(0.0, d - 0.002), d + 0.002] for n, d in delays.items()},
            delay_ridge={"wrist_flex": "delay and the servo's own lag trade off"},
        )
    return {
        "branch": "actuator",
        "kind": kind,
        "verdict": "implicated",
        "title": "Actuator dynamics",
        "key_figure": "worst_ideal_mae_rad",
        "figures": fig,
        "summary": "; ".join(f"{n}: delay_lag, delay {d * 1e3:.1f} ms" for n, d in delays.items()),
        "details": details,
    }


def test_every_title_fits_the_plot_width() -> None:
    """Each visible title line fits between its start and the picture's right edge. On the
    old code the delay plot's one-line title ran 551 px from x = 60 on a 560 px picture
    ("... (95% interval; hollow = no i" was what showed)."""
    page = render_report(
        {
            "rig": "bench",
            "seed": 0,
            "findings": [_actuator_finding(False)],
            "stop": {"verdict": "cause_found", "branch": "actuator"},
        }
    )
    plots = re.findall(r'<svg class="plot".*?</svg>', page, flags=re.S)
    long = "Identified command-to-motion delay per joint (95% interval; hollow = no interval)"
    plots.append(
        bar_chart(
            ["a", "b"],
            {"x": [1.0, 2.0]},
            xlabel="j",
            ylabel="v",
            title=long + " and yet more words than two lines hold " * 3,
        )
    )
    plots.append(bar_chart(["a", "b"], {"x": [1.0, 2.0]}, xlabel="j", ylabel="v", title=long))
    assert len(plots) >= 5
    room = [
        (float(_root(p).get("width", "nan")) - x, line) for p in plots for x, line in _titles(p)
    ]
    assert all(1 <= len(_titles(p)) <= 2 for p in plots)
    for width, line in room:
        assert len(line) * 6.86 <= width, line  # DejaVu Sans Bold's mean advance at 12 px
    for width, line in room:
        assert text_width(line, frame.TITLE_SIZE) <= width, line  # and its widest
    # a title that needs two lines keeps every word; the full one stays the tooltip
    two = _titles(plots[-1])
    assert len(two) == 2 and " ".join(t for _, t in two) == long
    assert _root(plots[-1]).findtext(f"{NS}title") == long


DEJAVU_BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")


@pytest.mark.skipif(not DEJAVU_BOLD.exists(), reason="DejaVu Sans Bold is not installed")
def test_the_width_estimate_is_an_upper_bound_of_the_font_drawn() -> None:
    """``text_width`` is never below what DejaVu Sans Bold (headless Chromium's sans on
    Linux, the widest usual fallback) advances, for any printable character."""
    from PIL import ImageFont

    font = ImageFont.truetype(str(DEJAVU_BOLD), 120)
    for c in string.printable[:95]:
        assert text_width(c, 120) >= font.getlength(c), c
    title = "Identified command-to-motion delay per joint (95% interval; hollow = no i"
    assert text_width(title, 12) >= ImageFont.truetype(str(DEJAVU_BOLD), 12).getlength(title)


def _delay_plot(finding: dict[str, Any]) -> ET.Element:
    text = next(p for p in plots_actuator.plots(finding) if "command-to-motion" in p)
    return _root(text)


def test_a_hollow_delay_says_why_beside_the_delay_the_text_states() -> None:
    """The demo's six delays have no interval (the actuator ladder gives none) while the
    summary states "delay 8.2 ms": every point is hollow and the caption says it is a best
    fit without an interval. On the old code the points were hollow with no caption (the
    only key was cut off the title). Where the joint dynamics give intervals only the joint
    on a ridge is hollow, and the caption speaks of the ridge only."""
    finding = _actuator_finding(False)
    assert "delay 8.2 ms" in finding["summary"]
    root = _delay_plot(finding)
    points = list(root.iter(f"{NS}circle"))
    assert len(points) == 6 and all(p.get("fill") == "#fff" for p in points)
    caption = " ".join(t.text or "" for t in root.iter(f"{NS}text") if t.get("class") == "caption")
    assert caption.startswith("Hollow: a delay without an interval"), caption
    assert "best fit of the joint's selected rung" in caption
    assert all(
        "no interval: the best fit of the delay_lag rung" in (p.findtext(f"{NS}title") or "")
        for p in points
    )
    root = _delay_plot(_actuator_finding(True))
    hollow = [
        p.findtext(f"{NS}title") or "" for p in root.iter(f"{NS}circle") if p.get("fill") == "#fff"
    ]
    assert len(hollow) == 1 and hollow[0].startswith("wrist_flex") and "ridge" in hollow[0]
    caption = " ".join(t.text or "" for t in root.iter(f"{NS}text") if t.get("class") == "caption")
    assert "Bars: 95% intervals." in caption and "on a ridge" in caption
    assert "without an interval" not in caption
    assert len([ln for ln in root.iter(f"{NS}line") if ln.get("stroke-width") == "2"]) == 6


def test_truth_values_are_printed_as_words() -> None:
    """The policy server's finding: "loopback yes", never Python's True, in its key line
    and in the raw figures, and a list of truth values the same. On the old code the card
    read "Policy server address · loopback True"."""
    f = check_policy_server({"policy_server": "127.0.0.1:8080"}, None)
    assert f is not None
    d = f.to_dict()
    d["figures"]["flags"] = [True, False, np.bool_(True)]
    page = render_report(
        {"rig": "bench", "seed": 0, "findings": [d], "stop": {"verdict": "incomplete"}}
    )
    assert "loopback yes" in page
    assert "<td><code>loopback</code></td><td>yes</td>" in page
    assert "<td><code>all_interfaces</code></td><td>no</td>" in page
    assert "<td><code>flags</code></td><td>[yes, no, yes]</td>" in page
    words = re.sub(r"<[^>]+>", " ", page)
    assert not re.search(r"\b(True|False)\b", words)
