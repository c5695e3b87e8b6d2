"""The selftest page: one self-contained HTML file (no script, no network) from
``selftest.json``: the sentence, the recovery table per family (beside what the real
diagnosis states, when one was given), per joint, and the replay gap per trial."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from simgap.outputs import atomic_write_text

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("simgap.report", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
)


def _planted(faults: Mapping[str, Any]) -> str:
    parts = []
    for k, v in faults.items():
        if k == "delay_s":
            parts.append(f"delay {float(v) * 1e3:.0f} ms")
        else:
            parts.append(f"{k} " + ", ".join(f"{j} x{float(f):.2f}" for j, f in v.items()))
    return "; ".join(parts) or "nothing (null)"


def render_selftest(doc: Mapping[str, Any]) -> str:
    """The page's HTML from ``selftest.json``'s content (every text escaped)."""
    faults = {t["name"]: t["faults"] for t in doc["plan"]["trials"]}
    trials = [{**t, "planted": _planted(faults.get(t["name"], {}))} for t in doc["trials"]]
    joints = list(dict.fromkeys(j for r in doc["families"] for j in r["joints"]))
    return _ENV.get_template("selftest.html").render(
        title=f"simgap selftest of {doc['rig']}",
        sentence=doc["sentence"],
        families=doc["families"],
        joints=joints,
        trials=trials,
        gap=doc["gap"],
        not_planted=doc["plan"]["not_planted"],
        real=doc.get("real_diagnosis") or {},
        seed=doc["seed"],
        backend=doc["backend"],
        wall_s=doc["wall_s"],
    )


def write_selftest_report(doc: Mapping[str, Any], path: str | Path) -> Path:
    """Write the selftest page to ``path`` atomically."""
    return atomic_write_text(path, render_selftest(doc))
