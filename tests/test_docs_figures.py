"""The figures the docs quote from the tool agree with what the tool produces now.

docs/demo.md quotes the demo's figures (what the branches find, the truth the bench computed
for seed 0). Each quoted figure carries a marker right after it that names where the figure
comes from::

    p95 91.7 ms<!-- fig: finding:latency/Latency/figures/total_p95_s | x1000 -->

- ``finding:<branch>/<title>/<key>/...``: a finding of the demo's ``findings.json``, chosen by
  branch and title, then keys into it; ``findings:<key>/...`` is the file from its root and
  ``truth:<key>/...`` the bench's ``truth.json``. A key may be ``*`` (every item) or
  ``{a,b,c}`` (those keys); lists met on the way are flattened.
- After ``|``, operations in order: ``xN`` (multiply by N), ``deg`` (radians to degrees),
  ``min``, ``max``, ``median``, and ``null`` (the value is null; no number is checked: the doc
  says "open" or "null").

The number checked is the last one in the text between the previous marker and this one. It
must equal the source rounded to the digits the doc prints: within half a unit of its last
digit. That is the whole tolerance, and no more is needed: the bench is byte-identical per
seed (tests/test_demo_bench.py), the diagnosis is deterministic (the same findings.json,
figure for figure, on Mesa's EGL and on OSMesa with the bench built afresh), and the doc
quotes no computed figure to more digits than the tool prints (three significant digits at
most; planted constants are exact), so a figure that fails has drifted and the doc should
quote the tool's new value. Should a figure ever differ between machines in its last digit,
quote it to one digit fewer rather than widening the tolerance. In the "What `simgap demo`
finds" section every number must carry a marker, so a new unchecked figure cannot be added
there.

docs/rig.md's example MJCF (an object added to a copy of the scene) is loaded by MuJoCo, on
a minimal arm always and on the Menagerie SO-101 when ../shared/data holds it.

The demo runs once per test session (``demo_run`` in conftest.py, shared with
test_demo_truth.py), so in the default run these checks add well under a second; this file
run alone takes the demo's own minute on 2 cores.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
DEMO_MD = DOCS / "demo.md"
RIG_MD = DOCS / "rig.md"

MARKER = re.compile(r"<!--\s*fig:\s*(?P<body>.*?)\s*-->", re.S)
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w])")
GUARDED_SECTION = "## What `simgap demo` finds"
# numbers in the guarded section that are not figures of the tool's output
NOT_FIGURES = (re.compile(r"95 %"),)


@dataclass(frozen=True)
class Figure:
    """One quoted figure: where it sits in the doc, the text quoted, and its source."""

    line: int
    quoted: str
    source: str
    ops: tuple[str, ...]

    def where(self) -> str:
        return (
            f"docs/demo.md:{self.line}: {self.quoted} <!-- fig: {self.source}"
            + (f" | {' '.join(self.ops)}" if self.ops else "")
            + " -->"
        )


def _section(text: str, heading: str) -> tuple[int, int]:
    """(start, end) offsets of a '## ' section of a markdown text, heading included."""
    start = text.index(heading)
    nxt = text.find("\n## ", start + len(heading))
    return start, len(text) if nxt < 0 else nxt


def _without_code(text: str) -> str:
    """``text`` with inline code spans blanked (same length, so offsets hold)."""
    return re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group()), text)


def figures(text: str) -> Iterator[Figure]:
    """Every marked figure of a doc, in order."""
    prev = 0
    for m in MARKER.finditer(text):
        body = m.group("body")
        source, _, ops = body.partition("|")
        ops_t = tuple(ops.split())
        before = _without_code(text[prev : m.start()])
        prev = m.end()
        line = text.count("\n", 0, m.start()) + 1
        if "null" in ops_t:
            yield Figure(line, "", source.strip(), ops_t)
            continue
        nums = list(NUMBER.finditer(before))
        assert nums, f"docs/demo.md:{line}: a figure marker with no number before it: {body}"
        yield Figure(line, nums[-1].group(), source.strip(), ops_t)


def _walk(value: Any, keys: list[str]) -> list[Any]:
    """The values at ``keys`` under ``value`` (``*`` and ``{a,b}`` fan out; lists flatten)."""
    if not keys:
        return value if isinstance(value, list) else [value]
    key, rest = keys[0], keys[1:]
    if key == "*":
        items = value.values() if isinstance(value, dict) else value
        return [v for item in items for v in _walk(item, rest)]
    if key.startswith("{") and key.endswith("}"):
        return [v for k in key[1:-1].split(",") for v in _walk(value[k.strip()], rest)]
    if isinstance(value, list):
        return _walk(value[int(key)], rest)
    return _walk(value[key], rest)


def resolve(fig: Figure, findings: dict[str, Any], truth: dict[str, Any]) -> Any:
    """The source value of a figure, after its operations: a number, or None."""
    kind, _, path = fig.source.partition(":")
    keys = [k for k in path.split("/") if k]
    if kind == "finding":
        branch, title = keys[0], keys[1]
        found = [f for f in findings["findings"] if f["branch"] == branch and f["title"] == title]
        assert len(found) == 1, f"{fig.where()}: no single finding {branch}/{title}"
        values = _walk(found[0], keys[2:])
    elif kind == "findings":
        values = _walk(findings, keys)
    elif kind == "truth":
        values = _walk(truth, keys)
    else:
        raise AssertionError(f"{fig.where()}: unknown source {kind!r}")
    if "null" in fig.ops:
        return values[0] if len(values) == 1 else values
    out: Any = values
    for op in fig.ops:
        if op in ("min", "max", "median"):
            out = {"min": min, "max": max, "median": statistics.median}[op](out)
        elif op == "deg":
            out = (
                [float(np.rad2deg(v)) for v in out]
                if isinstance(out, list)
                else float(np.rad2deg(out))
            )
        elif re.fullmatch(r"x[-+]?\d+(\.\d+)?", op):
            k = float(op[1:])
            out = [v * k for v in out] if isinstance(out, list) else out * k
        else:
            raise AssertionError(f"{fig.where()}: unknown operation {op!r}")
    if isinstance(out, list):
        assert len(out) == 1, f"{fig.where()}: {len(out)} values; reduce them (min, max, ...)"
        out = out[0]
    return out


def agrees(quoted: str, value: float) -> bool:
    """Whether ``quoted`` is ``value`` rounded to the digits it prints (half a unit of the
    last digit; a hair more for the binary representation of the halfway case)."""
    digits = len(quoted.split(".")[1]) if "." in quoted else 0
    return abs(float(quoted) - value) <= 0.5 * 10.0**-digits * (1 + 1e-9) + 1e-12


@pytest.fixture(scope="module")
def demo_outputs(demo_run: tuple[Path, Path, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(findings.json, truth.json) of the session's demo run."""
    out, cache, _ = demo_run
    (truth_file,) = cache.glob("seed-*/truth.json")
    findings: dict[str, Any] = json.loads((out / "findings.json").read_text())
    truth: dict[str, Any] = json.loads(truth_file.read_text())
    return findings, truth


def test_every_marker_is_well_formed() -> None:
    text = DEMO_MD.read_text()
    opened = len(re.findall(r"<!--\s*fig", text))
    figs = list(figures(text))
    assert len(figs) == opened, "a '<!-- fig' marker does not parse as '<!-- fig: ... -->'"
    assert len(figs) >= 40, f"only {len(figs)} figures are marked in docs/demo.md"


def test_every_figure_in_what_the_demo_finds_is_marked() -> None:
    """A number in that section either carries a marker or is named in NOT_FIGURES."""
    text = DEMO_MD.read_text()
    start, end = _section(text, GUARDED_SECTION)
    body_start = text.index("\n", start)
    checked = set()
    prev = 0
    for m in MARKER.finditer(text):
        if body_start <= m.start() < end:
            before = _without_code(text[prev : m.start()])
            nums = list(NUMBER.finditer(before))
            if nums and "null" not in m.group("body"):
                checked.add(prev + nums[-1].start())
        prev = m.end()
    plain = _without_code(MARKER.sub(lambda m: " " * len(m.group()), text))
    for pattern in NOT_FIGURES:
        plain = pattern.sub(lambda m: " " * len(m.group()), plain)
    unmarked = [
        f"line {text.count(chr(10), 0, n.start()) + 1}: {n.group()}"
        for n in NUMBER.finditer(plain, body_start, end)
        if n.start() not in checked
    ]
    assert not unmarked, (
        "numbers in docs/demo.md's 'What simgap demo finds' without a "
        f"'<!-- fig: ... -->' marker: {unmarked}"
    )


def test_demo_doc_figures_match_the_demo(
    demo_outputs: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    findings, truth = demo_outputs
    wrong = []
    for fig in figures(DEMO_MD.read_text()):
        value = resolve(fig, findings, truth)
        if "null" in fig.ops:
            if value is not None:
                wrong.append(f"{fig.where()}: the tool gives {value!r}, not null")
        elif value is None or not agrees(fig.quoted, float(value)):
            wrong.append(f"{fig.where()}: the tool gives {value!r}")
    assert not wrong, "docs/demo.md quotes figures the demo no longer gives:\n" + "\n".join(wrong)


def test_figure_check_catches_a_drifted_figure(
    demo_outputs: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """The check itself: a figure off by one unit of its last digit fails, the true one
    passes."""
    findings, truth = demo_outputs
    text = "p95 91.7 ms<!-- fig: finding:latency/Latency/figures/total_p95_s | x1000 -->"
    (fig,) = figures(text)
    value = resolve(fig, findings, truth)
    assert agrees(f"{round(value, 1):.1f}", value)
    assert not agrees(f"{round(value, 1) + 0.1:.1f}", value)
    assert agrees("0.371", 0.3711) and not agrees("0.37", 0.3649) and agrees("165", 165.0)


# ---- docs/rig.md: the example of an object added to a copy of the scene ----

_MINIMAL_ARM = """<mujoco model="arm">
  <worldbody>
    <body name="base"><geom type="cylinder" size="0.04 0.03" pos="0 0 0.03"/></body>
  </worldbody>
</mujoco>"""


def _rig_doc_mjcf() -> str:
    blocks = re.findall(r"```xml\n(.*?)```", RIG_MD.read_text(), re.S)
    assert len(blocks) == 1, f"docs/rig.md has {len(blocks)} xml blocks; expected the one example"
    return blocks[0]


def _check_object(model: mujoco.MjModel) -> None:
    """The example's object is a free body with a box geom, its mass and friction, and it
    rests on the floor instead of falling through or jumping."""
    body = model.body("cube")
    jnt = model.jnt_bodyid.tolist().index(body.id)
    assert model.jnt_type[jnt] == mujoco.mjtJoint.mjJNT_FREE
    geom = model.geom("cube")
    assert geom.type[0] == mujoco.mjtGeom.mjGEOM_BOX
    assert body.mass[0] == pytest.approx(0.03)
    assert geom.friction[0] == pytest.approx(1.0)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    z0 = float(data.xpos[body.id][2])
    for _ in range(400):
        mujoco.mj_step(model, data)
    assert float(data.xpos[body.id][2]) == pytest.approx(z0, abs=1e-3)


def test_rig_doc_object_example_loads_on_a_minimal_arm() -> None:
    model = mujoco.MjModel.from_xml_string(_rig_doc_mjcf(), {"so101.xml": _MINIMAL_ARM.encode()})
    _check_object(model)


def test_rig_doc_object_example_loads_on_the_menagerie_so101(
    shared_data: Path, tmp_path: Path
) -> None:
    """Saved beside the Menagerie scene.xml, as the doc says, the copy loads with the arm."""
    so101 = shared_data / "so101"
    if not (so101 / "so101.xml").is_file():
        pytest.skip(f"{so101 / 'so101.xml'} is absent")
    for name in ("so101.xml", "assets"):
        (tmp_path / name).symlink_to(so101 / name)
    scene = tmp_path / "my_scene.xml"
    scene.write_text(_rig_doc_mjcf())
    model = mujoco.MjModel.from_xml_path(str(scene))
    assert "gripperframe" in [model.site(i).name for i in range(model.nsite)]
    _check_object(model)
