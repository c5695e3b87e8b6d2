"""The report's plots say what they draw (issue 41, plots that mislead): each test reads the
SVG a plot emits. Failures carry an x, one x per failure, and neither the simulated nor the
real runs hide the other; equal values share one position on an axis whose tick labels
differ; every title fits the plot's width; a delay drawn hollow says why; and truth values
are printed as words."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from simgap.audit.setup import check_policy_server
from simgap.report import plots_envelope, render_report, svg

NS = "{http://www.w3.org/2000/svg}"


def _root(svg_text: str) -> ET.Element:
    return ET.fromstring(svg_text)


def _x_ticks(root: ET.Element) -> list[tuple[float, str]]:
    y = str(svg.H - svg.PAD_B + 14)
    return [(float(t.get("x", "nan")), t.text or "") for t in root.iter(f"{NS}text")
            if t.get("y") == y and t.get("text-anchor") == "middle"]


@pytest.mark.parametrize("data, period", [
    ([33.333331] * 40 + [33.333332] * 60, 33.333333),  # a real recording's intervals
    ([66.66666666666643, 66.66666666666731] * 50, 66.6667),  # the demo's, a rounded setting
])
def test_equal_values_share_one_position_on_a_readable_axis(data: list[float],
                                                            period: float) -> None:
    """The control-rate plot of intervals equal to the training period to their precision.
    On the old code its axis ran from the smallest to the largest value (33.333331 to
    33.333333): the bar at the left end, the training period at the right."""
    finding = {"details": {"check": "control_rate", "intervals_ms": data,
                           "training_dt_ms": period}}
    root = _root(plots_envelope.plots(finding)[0])
    ticks = _x_ticks(root)
    labels = [lab for _, lab in ticks]
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
    values = [float(lab) for lab in labels]
    assert max(values) - min(values) >= 0.01 * period  # a span the labels can print
    bars = [r for r in root.iter(f"{NS}rect") if r.get("fill") == svg.PALETTE[0]]
    assert len(bars) == 1  # every interval in one bar
    x0, w = float(bars[0].get("x", "nan")), float(bars[0].get("width", "nan"))
    line = next(ln for ln in root.iter(f"{NS}line") if ln.get("stroke-dasharray"))
    assert x0 <= float(line.get("x1", "nan")) <= x0 + w  # the period on the bar
    # and mid-axis, not at an end
    assert svg.PAD_L + 100 < float(line.get("x1", "nan")) < svg.W - svg.PAD_R - 100


def test_a_line_of_equal_values_is_drawn_mid_axis() -> None:
    """The shared frame, not one plot: a series equal to its precision is one height.
    On the old code 33.333331 and 33.333333 sat at the bottom and the top."""
    text = svg.lines([0, 1, 2, 3], {"interval": [33.333331, 33.333333, 33.333331, 33.333333]},
                     xlabel="tick", ylabel="interval [ms]", title="t")
    pts = _root(text).find(f"{NS}polyline")
    assert pts is not None
    ys = [float(p.split(",")[1]) for p in (pts.get("points") or "").split()]
    assert max(ys) - min(ys) < 1.0
    mid = (svg.PAD_T + svg.H - svg.PAD_B) / 2
    assert abs(ys[0] - mid) < 0.25 * (svg.H - svg.PAD_T - svg.PAD_B)
    assert svg.axis_range(2.0, 2.5) == (2.0, 2.5)  # a real range is kept as it is


def test_truth_values_are_printed_as_words() -> None:
    """The policy server's finding: "loopback yes", never Python's True, in its key line
    and in the raw figures, and a list of truth values the same. On the old code the card
    read "Policy server address · loopback True"."""
    f = check_policy_server({"policy_server": "127.0.0.1:8080"}, None)
    assert f is not None
    d = f.to_dict()
    d["figures"]["flags"] = [True, False, np.bool_(True)]
    page = render_report({"rig": "bench", "seed": 0, "findings": [d],
                          "stop": {"verdict": "incomplete"}})
    assert "loopback yes" in page
    assert "<td><code>loopback</code></td><td>yes</td>" in page
    assert "<td><code>all_interfaces</code></td><td>no</td>" in page
    assert "<td><code>flags</code></td><td>[yes, no, yes]</td>" in page
    words = re.sub(r"<[^>]+>", " ", page)
    assert not re.search(r"\b(True|False)\b", words)
