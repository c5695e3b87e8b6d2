"""Build the self-contained HTML report from a Diagnosis (its JSON form).

Plots are inline SVG or base64 PNG; there is no script and no external resource, so the
page opens offline. A branch adds its own plots by providing a module
``simgap.report.plots_<branch>`` with ``plots(finding: dict) -> list[str]`` (HTML snippets).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from simgap.finding import Diagnosis
from simgap.outputs import atomic_write_text

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("simgap.report", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
)


def _branch_plots(finding: Mapping[str, Any]) -> list[str]:
    name = str(finding.get("branch", ""))
    try:
        module = importlib.import_module(f"simgap.report.plots_{name}")
    except ModuleNotFoundError as e:
        if e.name == f"simgap.report.plots_{name}":
            return []
        raise
    return list(module.plots(finding))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)) and len(value) <= 8:
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return json.dumps(value)[:200]
    return str(value)


def _flat_figures(figures: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for k, v in figures.items():
        if isinstance(v, Mapping) and len(rows) < 80:
            rows.extend(_flat_figures(v, f"{prefix}{k}."))
        elif not (isinstance(v, list) and len(v) > 8):
            rows.append((f"{prefix}{k}", _fmt(v)))
    return rows


def render_report(diagnosis: Diagnosis | Mapping[str, Any], *, title: str = "simgap report",
                  ) -> str:
    """The report as one HTML string."""
    d = diagnosis.to_dict() if isinstance(diagnosis, Diagnosis) else dict(diagnosis)
    findings = []
    for i, f in enumerate(d["findings"]):
        key = f.get("key_figure")
        key_val = f["figures"].get(key) if key else None
        findings.append({
            **f, "anchor": f"f{i}-{f['branch']}",
            "key_text": f"{key} = {_fmt(key_val)}" if key is not None and key_val is not None
            else "",
            "figure_rows": _flat_figures(f.get("figures") or {}),
            "plots": _branch_plots(f),
        })
    return _ENV.get_template("report.html").render(
        title=title, rig=d.get("rig", ""), version=d.get("simgap_version", ""),
        seed=d.get("seed", 0), comparability=d.get("comparability"), findings=findings,
        stop=d.get("stop") or {}, fmt=_fmt)


def write_report(diagnosis: Diagnosis | Mapping[str, Any], path: str | Path, **kw: Any) -> Path:
    """Render and write the report atomically."""
    return atomic_write_text(path, render_report(diagnosis, **kw))
