"""Build the self-contained HTML report from a Diagnosis (its JSON form).

The page answers "what do I fix first?": a headline (the cheapest implicated finding, its key
number against its threshold, its next step, then the other implicated findings in ladder
order), one card per branch with its verdict and the one picture that proves it, and the raw
figures collapsed at the bottom. Plots are inline SVG or base64 PNG; there is no script and
no external resource, so the page opens offline. A finding's plots are its branch's report
section, ``Branch.plots`` (``simgap.branches.ladder_list``): one ``plots_<branch>`` module of
this package per branch that draws any.

The report is built section by section: a section that fails (a branch's plots, a finding's
key line or figures, the headline, the comparability block) is logged and shows its failure
text in its place; the other sections are drawn, so one bad figure never costs the report.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import jinja2

from simgap.figures.registry import kind_of
from simgap.finding import Diagnosis
from simgap.outputs import atomic_write_text
from simgap.report.headline import (
    RANK,
    contradictions,
    headline,
    is_bool,
    key_line,
    shown_unit,
    sig,
    with_unit,
    yes_no,
)

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("simgap.report", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
)
_LOG = logging.getLogger(__name__)
T = TypeVar("T")


def failure_html(section: str, error: BaseException) -> str:
    """What a failed section shows in its place: which section, and the error."""
    return (
        '<div class="section-error note"><strong>This section could not be drawn'
        f"</strong> ({html.escape(section)}): {html.escape(type(error).__name__)}: "
        f"{html.escape(str(error)[:300])}. The figures in findings.json are complete; "
        "please report this with the findings file.</div>"
    )


def guarded(
    section: str, build: Callable[[], T], fallback: T, failures: list[str] | None = None
) -> T:
    """``build()``, or ``fallback`` when it raises: the failure is logged and its text
    (``failure_html``) appended to ``failures``."""
    try:
        return build()
    except Exception as e:  # a section's bug must not take the run down
        _LOG.warning(
            "report section %s failed: %s: %s", section, type(e).__name__, e, exc_info=True
        )
        if failures is not None:
            failures.append(failure_html(section, e))
        return fallback


def _fmt(value: Any, depth: int = 0) -> str:
    """A figure's value as the page prints it: None as "-", a truth value as yes/no, a float
    to 4 significant digits, a list or object by its first 8 items (2 levels deep at most,
    200 characters), each item the same way."""
    if value is None:
        return "-"
    if is_bool(value):
        return yes_no(value)
    if isinstance(value, float):
        return sig(value, 4)
    if isinstance(value, (list, tuple, Mapping)):
        n = len(value)
        if depth >= 2:
            return f"({n} items)"
        items = (
            [f"{k}: {_fmt(v, depth + 1)}" for k, v in list(value.items())[:8]]
            if isinstance(value, Mapping)
            else [_fmt(v, depth + 1) for v in value[:8]]
        )
        more = f", ... ({n} in all)" if n > 8 else ""
        ends = "{}" if isinstance(value, Mapping) else "[]"
        return (ends[0] + ", ".join(items) + more + ends[1])[:200]
    return str(value)


def _unit_of(path: str, units: Mapping[str, str]) -> str | None:
    """The declared unit of a figure's dotted path (``*`` in ``units`` matches one key)."""
    if path in units:
        return units[path]
    parts = path.split(".")
    for pattern, unit in units.items():
        pat = pattern.split(".")
        if len(pat) == len(parts) and all(a in ("*", b) for a, b in zip(pat, parts, strict=True)):
            return unit
    return None


def _flat_figures(
    figures: Mapping[str, Any], units: Mapping[str, str] | None = None, prefix: str = ""
) -> list[tuple[str, str]]:
    """The figures as (dotted name, value with its unit) rows: the declared unit where the
    finding lists one (``units``), else the one its name carries."""
    rows: list[tuple[str, str]] = []
    for k, v in figures.items():
        if isinstance(v, Mapping) and len(rows) < 80:
            rows.extend(_flat_figures(v, units, f"{prefix}{k}."))
        elif not (isinstance(v, list) and len(v) > 8):
            unit = _unit_of(f"{prefix}{k}", units or {})
            rows.append(
                (
                    f"{prefix}{k}",
                    _fmt(v)
                    if not isinstance(v, (int, float)) or is_bool(v)
                    else with_unit(str(k), v, unit),
                )
            )
    return rows


def _cards(findings: list[dict[str, Any]], notes: Mapping[str, str]) -> list[dict[str, Any]]:
    """One card per branch, in ladder order: its verdict (the most telling of its findings),
    its findings, the one picture that proves the verdict and the other pictures."""
    by_branch: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        by_branch.setdefault(str(f["branch"]), []).append(f)
    cards = []
    for branch, fs in by_branch.items():
        best = min(fs, key=lambda f: RANK.get(str(f["verdict"]), 9))
        ordered = sorted(fs, key=lambda f: RANK.get(str(f["verdict"]), 9))
        pictures = [p for f in ordered for p in f["plots"]]
        cards.append(
            {
                "branch": branch,
                "anchor": f"b-{branch}",
                "verdict": best["verdict"],
                "findings": fs,
                "proof": pictures[:1],
                "more": pictures[1:],
                "note": notes.get(branch, ""),
            }
        )
    return cards


def _comparability(c: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The comparability check in one line (and its details, collapsed)."""
    if not c:
        return None
    rates = []
    for name, r in (c.get("rates") or {}).items():
        w = r.get("wilson") or [None, None]
        if isinstance(r.get("rate"), (int, float)) and None not in w:
            rates.append(
                f"{name} {r.get('successes')}/{r.get('trials')} = "
                f"{100 * r['rate']:.0f}% (95% {100 * w[0]:.0f}-{100 * w[1]:.0f}%)"
            )
    tests = c.get("tests") or {}
    p = tests.get("barnard_p", tests.get("fisher_p"))
    line = "; ".join(rates)
    if isinstance(p, (int, float)):
        which = "Barnard" if "barnard_p" in tests else "Fisher"
        line += f"; {which} p = {sig(float(p), 2)}"
    must = [m for m in c.get("mismatches") or [] if m.get("must_match")]
    return {
        "comparable": bool(c.get("comparable")),
        "line": line,
        "must": must,
        "message": str(c.get("message") or ""),
        "raw": c,
    }


_WORDS = ("branch", "verdict", "title", "summary", "next_step", "residual_unit")
"""A finding's fields the page prints as words."""


def _text(value: Any, limit: int = 4000) -> str:
    """A value shown as words: a string (cut at ``limit``), a number, or the name of its
    type; a list or object where words are due is not printed (it may nest without end)."""
    if isinstance(value, str):
        return value[:limit]
    if value is None:
        return ""
    if is_bool(value):
        return yes_no(value)
    if isinstance(value, (int, float)):
        try:
            return str(value)[:limit]
        except ValueError:  # an integer of more digits than Python prints
            return "(a huge number)"
    return f"({type(value).__name__})"


def branch_plots(finding: Mapping[str, Any]) -> list[str]:
    """The plots of one finding (its JSON form): its branch's ``Branch.plots``, or none."""
    # the branches import this package's plots modules, so their list is read when a page
    # is drawn, not when the report is imported
    from simgap.branches.ladder_list import branch_named

    branch = branch_named(str(finding.get("branch", "")))
    if branch is None or branch.plots is None:
        return []
    return [p for p in branch.plots(finding) if p]


def _finding_view(i: int, f: Mapping[str, Any]) -> dict[str, Any]:
    """One finding as the template reads it; each derived part built on its own."""
    f = {
        "title": "",
        "summary": "",
        "next_step": "",
        "figures": {},
        "artifacts": {},
        "residual": None,
        "noise_floor": None,
        "residual_unit": "",
        **f,
    }
    f.update({k: _text(f.get(k)) for k in _WORDS})
    f["kind"] = kind_of(f)  # inferred where an older file names none
    f["residual_unit"] = shown_unit(f["residual_unit"])  # a plain number: no "1"
    branch = f["branch"]
    where = f"{branch}: {f.get('title', '')}"
    failures: list[str] = []
    key_text = guarded(f"key figure of {where}", lambda: key_line(f).text, "", failures)
    rows: list[tuple[str, str]] = guarded(
        f"figures of {where}",
        lambda: _flat_figures(f.get("figures") or {}, f.get("units")),
        [],
        failures,
    )
    pictures: list[str] = guarded(f"plots of {where}", lambda: branch_plots(f), [], failures)
    return {
        **f,
        "branch": branch,
        "anchor": f"f{i}-{branch}",
        "key_text": key_text,
        "figure_rows": rows,
        "plots": failures + pictures,
    }


def render_report(
    diagnosis: Diagnosis | Mapping[str, Any],
    *,
    title: str = "simgap report",
) -> str:
    """The report as one HTML string; a section that fails shows its failure instead."""
    d = diagnosis.to_dict() if isinstance(diagnosis, Diagnosis) else dict(diagnosis)
    raw = d.get("findings")
    findings = [
        _finding_view(i, f)
        for i, f in enumerate(raw if isinstance(raw, list) else [])
        if isinstance(f, Mapping)
    ]
    stop: Mapping[str, Any] = d["stop"] if isinstance(d.get("stop"), Mapping) else {}
    failures: list[str] = []
    no_headline: tuple[Mapping[str, Any] | None, list[Mapping[str, Any]]] = (None, [])
    first, then = guarded("headline", lambda: headline(findings, stop), no_headline, failures)
    notes: dict[str, str] = guarded(
        "contradictions", lambda: contradictions(findings), {}, failures
    )
    comp = guarded("comparability", lambda: _comparability(d.get("comparability")), None, failures)
    cards: list[dict[str, Any]] = guarded(
        "branch cards", lambda: _cards(findings, notes), [], failures
    )
    page = {
        "title": title,
        "rig": _text(d.get("rig")),
        "version": _text(d.get("simgap_version")),
        "seed": _text(d.get("seed", 0)),
        "comparability": comp,
        "first": first,
        "then": then,
        "cards": cards,
        "findings": findings,
        "stop": stop,
        "fmt": _fmt,
        "failures": failures,
    }
    try:
        return _ENV.get_template("report.html").render(**page)
    except Exception as e:  # the page itself: a bare page with every finding's words
        _LOG.warning("report page failed: %s: %s", type(e).__name__, e, exc_info=True)
        return _bare_page(d, failure_html("report page", e))


def _bare_page(d: Mapping[str, Any], failure: str) -> str:
    """The fallback page: the failure, then each finding's verdict, title and summary."""
    raw = d.get("findings")
    items = "".join(
        f"<li><strong>{html.escape(_text(f.get('verdict')))}</strong> "
        f"{html.escape(_text(f.get('branch')))}: {html.escape(_text(f.get('title')))}. "
        f"{html.escape(_text(f.get('summary')))}</li>"
        for f in (raw if isinstance(raw, list) else [])
        if isinstance(f, Mapping)
    )
    rig = html.escape(_text(d.get("rig")))
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>simgap '
        f"report — {rig}</title></head><body><h1>simgap diagnosis: {rig}</h1>{failure}"
        f"<ul>{items}</ul></body></html>"
    )


def write_report(diagnosis: Diagnosis | Mapping[str, Any], path: str | Path, **kw: Any) -> Path:
    """Render and write the report atomically."""
    return atomic_write_text(path, render_report(diagnosis, **kw))
