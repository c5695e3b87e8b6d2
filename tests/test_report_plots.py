"""The report's plots say what they draw (issue 41, plots that mislead): each test reads the
SVG a plot emits. Failures carry an x, one x per failure, and neither the simulated nor the
real runs hide the other; equal values share one position on an axis whose tick labels
differ; every title fits the plot's width; a delay drawn hollow says why; and truth values
are printed as words."""

from __future__ import annotations

import re

import numpy as np

from simgap.audit.setup import check_policy_server
from simgap.report import render_report


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
