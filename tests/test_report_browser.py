"""The HTML report in headless Chromium: no console errors, no network requests, a screenshot.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: commands
on fd 3, replies and events on fd 4, NUL-separated JSON), so every request the page makes and
every console message is seen. The screenshot is saved under ``test-artifacts/``.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from simgap.figures.contact import ContactFigures
from simgap.finding import Diagnosis, Finding, Verdict
from simgap.report import write_report

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="chromium is not installed (Debian package 'chromium'; CI's .ci/run installs it)",
    ),
]


class DevTools:
    """A minimal DevTools-protocol client over Chromium's debugging pipe."""

    def __init__(self, binary: str, profile: Path) -> None:
        self._to_r, self._to_w = os.pipe()
        self._from_r, self._from_w = os.pipe()
        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-default-apps",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]

        def _fds() -> None:
            # Copies first: a pipe end may itself be fd 3 or 4 (and close on exec).
            a, b = os.dup(self._to_r), os.dup(self._from_w)
            while a in (3, 4) or b in (3, 4):
                a, b = os.dup(a), os.dup(b)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_fds,
            close_fds=False,
        )
        os.close(self._to_r)
        os.close(self._from_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from chromium")
            ready, _, _ = select.select([self._from_r], [], [], left)
            if ready:
                chunk = os.read(self._from_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        out: dict[str, Any] = json.loads(msg)
        return out

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        for ev in self.events:
            if ev.get("method") == method:
                return ev
        deadline = time.monotonic() + timeout
        while True:
            ev = self._read(deadline)
            self.events.append(ev)
            if ev.get("method") == method:
                return ev

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5.0)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_w)
        os.close(self._from_r)


def _diagnosis() -> Diagnosis:
    return Diagnosis(
        rig="simgap-demo-so101",
        seed=0,
        comparability={
            "comparable": True,
            "mismatches": [],
            "checked": ["checkpoint", "initial_states", "predicate", "judge"],
        },
        findings=(
            Finding(
                "latency",
                Verdict.IMPLICATED,
                title="Loop latency",
                summary="p95 of the loop is 90 ms against a 67 ms control period.",
                figures={
                    "total_p95_s": 0.0904,
                    "overrun_fraction": 0.5,
                    "added_delay": {"rate_per_s_min": 60.0, "rate_per_s_max": 160.0},
                },
                key_figure="total_p95_s",
                next_step="Randomise the action delay.",
                artifacts={"randomization": "randomization.json"},
            ),
            Finding(
                "contact",
                Verdict.IMPLICATED,
                title="Pad friction and cube mass",
                figures=ContactFigures(friction_best=0.5, mass_best=0.03),
                key_figure="friction_best",
                residual=0.002,
                noise_floor=0.001,
                residual_unit="m",
                next_step="Weigh the cube; set the pad friction.",
            ),
            Finding(
                "appearance",
                Verdict.NOT_MEASURED,
                title="Appearance",
                summary="Not measured.",
                next_step="Record frames.",
                needs=("evidence.frames",),
            ),
        ),
        stop={"verdict": "cause_found", "branch": "latency", "reason": "cheapest implicated"},
    )


# Every plot must name both axes: the SVGs that lack a non-empty x or y label, by title.
UNLABELLED_JS = """
Array.from(document.querySelectorAll('svg'))
 .filter(s => s.querySelector('polyline, rect, circle, line'))
 .filter(s => !['xlabel', 'ylabel'].every(c => {
    const t = s.querySelector('text.' + c); return t && t.textContent.trim().length > 0; }))
 .map(s => (s.querySelector('title') || {}).textContent || '(untitled)')
"""

VIEW_W, VIEW_H = 1280, 900

# Every plot's words (title, caption, legend, ticks, labels) inside its picture, as Chromium
# draws them (the raw figures and the extra pictures opened first: a closed <details> draws
# nothing): the texts that pass its left or right edge.
OVERFLOW_JS = """
(() => { document.querySelectorAll('details').forEach(d => { d.open = true; });
 return Array.from(document.querySelectorAll('svg.plot')).flatMap(s => {
  const box = s.getBoundingClientRect();
  return Array.from(s.querySelectorAll('text'))
   .filter(t => { const b = t.getBoundingClientRect(); return b.width === 0
                  || b.left < box.left - 0.5 || b.right > box.right + 0.5; })
   .map(t => t.textContent); }); })()
"""

# The plots of issue 41, by title: where each lies on the page and what it draws.
PLOTS_JS = """
Array.from(document.querySelectorAll('svg.plot')).map(s => {
  const r = s.getBoundingClientRect(), tick = String(240 - 44 + 14);
  return {title: s.querySelector('title').textContent, x: r.x + window.scrollX,
          y: r.y + window.scrollY, width: r.width, height: r.height,
          failures: s.querySelectorAll('.mk-failure').length,
          legend: Array.from(s.querySelectorAll('g.legend text')).map(t => t.textContent),
          xticks: Array.from(s.querySelectorAll('text'))
                  .filter(t => t.getAttribute('y') === tick).map(t => t.textContent),
          hollow: s.querySelectorAll('circle.hollow').length,
          caption: Array.from(s.querySelectorAll('text.caption')).map(t => t.textContent)
                   .join(' ')}; })
"""


def _open(dt: DevTools, page: Path) -> str:
    target = dt.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = dt.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        dt.call(f"{domain}.enable", session=session)
    dt.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": VIEW_W, "height": VIEW_H, "deviceScaleFactor": 1, "mobile": False},
        session=session,
    )
    dt.call("Page.navigate", {"url": page.as_uri()}, session=session)
    dt.wait_event("Page.loadEventFired")
    time.sleep(0.5)  # let late scripts and images run
    return session


def _eval(dt: DevTools, session: str, expr: str) -> Any:
    return dt.call(
        "Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=session
    )["result"].get("value")


def _shot(dt: DevTools, session: str, path: Path, clip: dict[str, float] | None = None) -> bytes:
    params: dict[str, Any] = {"format": "png"}
    if clip:
        params.update(clip={**clip, "scale": 1}, captureBeyondViewport=True)
    png = base64.b64decode(dt.call("Page.captureScreenshot", params, session=session)["data"])
    path.write_bytes(png)
    return png


def browse_report(report: Path, which: str, profile: Path) -> dict[str, Any]:
    """Open ``report`` in headless Chromium and measure what it draws: the first screen's
    screenshot (``first``, PNG bytes, saved as ``test-artifacts/report-<which>-*.png`` with
    one per branch card and the plots of issue 41), the title, the headline's box and text,
    the cards, unlabelled axes, text past a picture's edge, the plots drawn, the page
    height, requests off the machine and console errors."""
    assert CHROMIUM is not None
    ARTIFACTS.mkdir(exist_ok=True)
    dt = DevTools(CHROMIUM, profile)
    out: dict[str, Any] = {}
    try:
        session = _open(dt, report)
        out["title"] = _eval(dt, session, "document.title")
        out["first"] = _shot(dt, session, ARTIFACTS / f"report-{which}-first-screen.png")
        out["head"] = _eval(
            dt,
            session,
            "(() => { const h = document.querySelector("
            "'#headline'); const r = h.getBoundingClientRect(); return {top: "
            "r.top, bottom: r.bottom, text: h.innerText}; })()",
        )
        cards = _eval(
            dt,
            session,
            "Array.from(document.querySelectorAll('.card')).map(c => {"
            " const r = c.getBoundingClientRect(); return {id: c.id, x: r.x, "
            "y: r.y + window.scrollY, width: r.width, height: r.height}; })",
        )
        for c in cards:
            _shot(
                dt,
                session,
                ARTIFACTS / f"report-{which}-card-{c['id'][2:]}.png",
                clip={k: c[k] for k in ("x", "y", "width", "height")},
            )
        out["cards"] = cards
        out["unlabelled"] = _eval(dt, session, UNLABELLED_JS)
        out["height"] = _eval(dt, session, "document.documentElement.scrollHeight")
        out["overflow"] = _eval(dt, session, OVERFLOW_JS)
        drawn = {p["title"]: p for p in _eval(dt, session, PLOTS_JS)}
        for name, key in ISSUE_41_PLOTS.items():
            p = next((v for t, v in drawn.items() if t.startswith(key)), None)
            if p is not None:
                _shot(
                    dt,
                    session,
                    ARTIFACTS / f"report-{which}-plot-{name}.png",
                    clip={
                        "x": p["x"] - 12,
                        "y": p["y"] - 4,
                        "width": p["width"] + 24,
                        "height": p["height"] + 8,
                    },
                )
        out["drawn"] = drawn
    finally:
        dt.close()
    requests = [
        e["params"]["request"]["url"]
        for e in dt.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    out["external"] = [
        u for u in requests if not u.startswith(("file:", "data:", "about:", "blob:"))
    ]
    out["errors"] = [
        e
        for e in dt.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (
            e.get("method") == "Runtime.consoleAPICalled"
            and e["params"].get("type") in ("error", "assert")
        )
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error")
    ]
    return out


def check_report_page(seen: dict[str, Any]) -> None:
    """What every report must be in the browser (``browse_report``'s measurements): a
    screenshot, a title, the headline with the stop whole on the first screen, every plot
    with both axis labels and no text past its edge, nothing fetched off the machine, no
    console error."""
    first, head = seen["first"], seen["head"]
    assert first[:8] == b"\x89PNG\r\n\x1a\n" and len(first) > 1000
    assert seen["title"]
    assert head["top"] < VIEW_H and head["bottom"] <= VIEW_H, head  # all of it on screen 1
    assert "Stop:" in head["text"]
    assert seen["unlabelled"] == []
    assert seen["overflow"] == []  # the delay plot's title was cut at "hollow = no i"
    assert seen["external"] == []
    assert seen["errors"] == []


@pytest.mark.parametrize("which", ["small", "demo"])
def test_report_loads_without_errors_or_network(
    which: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The first screen shows the headline and the stop; one screenshot per branch card;
    no console error, no request off the machine, every plot with both axis labels."""
    if which == "demo":  # the full report of the bundled demo, every branch in it
        report = request.getfixturevalue("demo_run")[0] / "report.html"
    else:
        report = write_report(_diagnosis(), tmp_path / "report.html")
    seen = browse_report(report, which, tmp_path / "profile")
    check_report_page(seen)
    assert ("Fix first: latency" if which == "small" else "Fix first") in seen["head"]["text"]
    branches = {c["id"][2:] for c in seen["cards"]}
    if which == "small":
        assert branches == {"latency", "contact", "appearance"}
    else:
        assert {"plumbing", "latency", "contact", "actuator", "appearance"} <= branches
    if which == "demo":
        assert seen["height"] < 6000  # was 17,800 px: the raw figures are collapsed
        _check_issue_41_plots(seen["drawn"], request.getfixturevalue("demo_run")[0])


ISSUE_41_PLOTS = {
    "placements": "Initial object placements",
    "decision-intervals": "Real decision intervals",
    "delays": "Identified command-to-motion delay",
}
"""The demo's plots that misled (issue 41), by the name of their screenshot."""


def _check_issue_41_plots(drawn: dict[str, Any], out: Path) -> None:
    """What Chromium drew of the demo's plots of issue 41 against its findings: one x per
    failed placement and a failure in the legend only then, distinct ticks under the
    decision intervals, and a caption for hollow delays."""
    doc = json.loads((out / "findings.json").read_text())
    by_title = {f["title"]: f for f in doc["findings"]}

    def plot(key: str) -> dict[str, Any]:
        p = next(v for t, v in drawn.items() if t.startswith(key))
        assert p["width"] > 100 and p["height"] > 100, p
        return p

    place = plot(ISSUE_41_PLOTS["placements"])
    details = by_title["Initial states"]["details"]
    fails = sum(s == 0 for k in ("real", "sim") for s in details[k]["success"])
    assert place["failures"] == fails and fails > 0
    assert "failure" in place["legend"]
    ticks = plot(ISSUE_41_PLOTS["decision-intervals"])["xticks"]
    assert len(ticks) >= 3 and len(set(ticks)) == len(ticks), ticks
    delays = plot(ISSUE_41_PLOTS["delays"])
    assert delays["hollow"] == 0 or delays["caption"].startswith("Hollow:"), delays


def test_axis_label_check_catches_an_unlabelled_plot(tmp_path: Path) -> None:
    """The instrument: a page with one labelled and one unlabelled SVG plot names the second."""
    assert CHROMIUM is not None
    from simgap.report.svg.lines import lines

    good = lines([0, 1, 2], {"a": [1, 2, 3]}, xlabel="t [s]", ylabel="q [rad]", title="labelled")
    bad = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><title>bare'
        '</title><polyline points="0,0 10,10"/><text class="xlabel">t [s]</text></svg>'
    )
    page = tmp_path / "plots.html"
    page.write_text(f"<html><body>{good}{bad}</body></html>")
    dt = DevTools(CHROMIUM, tmp_path / "profile")
    try:
        session = _open(dt, page)
        unlabelled = _eval(dt, session, UNLABELLED_JS)
    finally:
        dt.close()
    assert unlabelled == ["bare"]


def test_overflow_check_catches_a_title_past_the_edge(tmp_path: Path) -> None:
    """The instrument: the delay plot's old one-line title (81 characters from x = 60 on a
    560 px picture) is named; the same title through ``svg`` (two lines) is not."""
    assert CHROMIUM is not None
    from simgap.report.svg.bars import bars

    long = "Identified command-to-motion delay per joint (95% interval; hollow = no interval)"
    good = bars(["a", "b"], {"x": [1.0, 2.0]}, xlabel="joint", ylabel="delay [ms]", title=long)
    bad = (
        '<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="560" height="240" '
        f'viewBox="0 0 560 240"><text class="ptitle" x="60" y="16" font-size="12" '
        f'font-weight="600">{long}</text></svg>'
    )
    page = tmp_path / "plots.html"
    page.write_text(
        '<html><body style="font: 14px system-ui, sans-serif">'  # the report's
        f"{good}{bad}</body></html>"
    )
    dt = DevTools(CHROMIUM, tmp_path / "profile")
    try:
        session = _open(dt, page)
        overflow = _eval(dt, session, OVERFLOW_JS)
    finally:
        dt.close()
    assert overflow == [long]


def test_devtools_client_sees_console_errors_and_requests(tmp_path: Path) -> None:
    """The instrument itself: a page with an error and an external image is caught."""
    assert CHROMIUM is not None
    page = tmp_path / "bad.html"
    page.write_text(
        "<html><body><img src='http://example.invalid/x.png'>"
        "<script>console.error('boom')</script></body></html>"
    )
    dt = DevTools(CHROMIUM, tmp_path / "profile")
    try:
        target = dt.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = dt.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Network"):
            dt.call(f"{domain}.enable", session=session)
        dt.call("Page.navigate", {"url": page.as_uri()}, session=session)
        dt.wait_event("Page.loadEventFired")
    finally:
        dt.close()
    urls = [
        e["params"]["request"]["url"]
        for e in dt.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert any(u.startswith("http://example.invalid") for u in urls)
    assert any(
        e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error"
        for e in dt.events
    )
