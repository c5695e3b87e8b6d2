"""What a new user's first session showed (issue: the newcomer trial): the demo says whether
it records or reuses its bench, a root option given after the command says where it goes,
``simgap --version`` exists, the summary's key figure is each finding's headline (the
report's), ``init`` lists paths and wrapped items readably, and a branch not measured says
what to add."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from simgap.cli import _progress, app
from simgap.cli import diagnose as cli_diagnose
from tests.factories import write_so101_info

runner = CliRunner()


# 1. the demo's bench: recorded or reused, and said which


@pytest.fixture
def talkative(monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress on, whatever SIMGAP_QUIET says in the environment of the test run."""
    monkeypatch.setitem(_progress._state, "quiet", False)


def _no_diagnosis(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_diagnose, "_run", lambda *a, **k: None)


def test_the_demo_says_it_reuses_a_recorded_bench(
    demo_run: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch, talkative: None
) -> None:
    _no_diagnosis(monkeypatch)
    _, cache, first = demo_run
    # the session's first run recorded it (and said so unless a test before made it quiet)
    assert "preparing the demo bench" not in first and ") (about" not in first
    r = runner.invoke(app, ["demo", "--cache", str(cache)])
    assert r.exit_code == 0, r.output
    bench = str((cache / "seed-0").absolute())
    assert (
        f"demo: reusing the bench recorded at {bench} (delete it or pass --cache DIR to "
        "record it again)."
    ) in r.stderr
    assert "preparing" not in r.stderr and "recording" not in r.stderr
    assert "done in" not in r.stderr  # no step ran, so no time for it


def test_the_demo_says_it_records_a_new_bench_about_as_long_as_it_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, talkative: None
) -> None:
    import simgap.demo

    _no_diagnosis(monkeypatch)
    monkeypatch.setattr(
        simgap.demo, "prepare_demo", lambda cache, seed: Path(cache) / f"seed-{seed}" / "rig.toml"
    )
    r = runner.invoke(app, ["demo", "--cache", str(tmp_path / "c"), "--seed", "3"])
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.stderr.splitlines() if ln.startswith("demo:"))
    where = str((tmp_path / "c" / "seed-3").absolute())
    assert (
        line == f"demo: recording the demo bench into {where}, once: later runs reuse it "
        "(about 10 s)."
    ), line
    assert ") (" not in line  # one pair of parentheses
    assert cli_diagnose.BUILD_S <= 15  # 6 to 12 s measured on 2 cores, where it said 40


def test_the_cache_help_says_what_the_code_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from simgap.demo import demo_cache_dir

    r = runner.invoke(app, ["demo", "--help"])
    text = " ".join(r.output.split())
    assert (
        "default: $SIMGAP_CACHE/demo when SIMGAP_CACHE is set, else ~/.cache/simgap/demo" in text
    ), text
    assert "DIR/seed-<seed>" in text
    monkeypatch.setenv("SIMGAP_CACHE", str(tmp_path))
    assert demo_cache_dir(None, 0) == tmp_path / "demo" / "seed-0"
    monkeypatch.delenv("SIMGAP_CACHE")
    assert demo_cache_dir(None, 0) == Path.home() / ".cache" / "simgap" / "demo" / "seed-0"
    assert demo_cache_dir(tmp_path / "d", 2) == tmp_path / "d" / "seed-2"


# 2. a root option after the command


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["diagnose", "rig", "--quiet", "--out", "x"], "simgap --quiet diagnose rig --out x"),
        (["diagnose", "rig", "-q"], "simgap -q diagnose rig"),
        (["contact", "lint", "--quiet", "m.xml"], "simgap --quiet contact lint m.xml"),
        (["contact", "--quiet", "lint", "m.xml"], "simgap --quiet contact lint m.xml"),
        (["diagnose", "rig", "--version"], "simgap --version"),
    ],
)
def test_a_root_option_after_the_command_says_to_put_it_before(argv: list[str], line: str) -> None:
    r = runner.invoke(app, argv)
    assert r.exit_code == 2, r.output
    opt = next(a for a in argv if a.startswith("-"))
    err = " ".join(r.stderr.split())
    assert f"{opt} is an option of simgap itself" in err and line in err, err
    assert "No such option" not in err


def test_an_option_nobody_has_keeps_clicks_error() -> None:
    r = runner.invoke(app, ["diagnose", "rig", "--nope"])
    assert r.exit_code == 2 and "No such option: --nope" in r.stderr
    assert "itself" not in r.stderr


# 3. --version


def test_version_prints_the_package_version(monkeypatch: pytest.MonkeyPatch) -> None:
    import simgap._version
    from simgap._version import __version__

    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout == f"simgap {__version__}\n"
    monkeypatch.setattr(simgap._version, "__version__", "9.8.7")  # read, not copied
    assert runner.invoke(app, ["--version"]).stdout == "simgap 9.8.7\n"
    assert "--version" in runner.invoke(app, ["--help"]).stdout


# 4. the summary's key figure is the finding's headline figure, the report's


def _summary_rows(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, out: Path
) -> list[list[str]]:
    """The console summary of ``out/findings.json``: [verdict, branch, finding, key] rows."""
    from simgap.finding import load_diagnosis

    monkeypatch.delenv("COLUMNS", raising=False)  # piped: a row is one line
    cli_diagnose.print_summary(load_diagnosis(out / "findings.json"))
    lines = capsys.readouterr().out.splitlines()
    verdicts = ("implicated", "eliminated", "inconclusive", "not_measured")
    return [
        (re.split(r"\s{2,}", ln.strip(), maxsplit=3) + [""])[:4]
        for ln in lines
        if ln.startswith(verdicts)
    ]


def _report_keys(out: Path) -> dict[int, str]:
    """Each finding's key figure on its report card: {index in findings.json: text}."""
    page = (out / "report.html").read_text(encoding="utf-8")
    keys = {}
    for m in re.finditer(
        r'<div class="frow" id="f(\d+)-[^"]*">.*?<strong>.*?</strong>'
        r'(?: · <span class="key">(.*?)</span>)?',
        page,
        flags=re.S,
    ):
        keys[int(m.group(1))] = html.unescape(m.group(2) or "")
    return keys


def test_the_demo_summary_shows_the_contact_friction_change(
    demo_run: tuple[Path, Path, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = _summary_rows(capsys, monkeypatch, demo_run[0])
    (contact,) = [r for r in rows if r[1] == "contact"]
    assert contact[3].startswith("friction 2.00 -> 0.371"), contact
    assert "residual" not in contact[3]
    (controller,) = [r for r in rows if r[1] == "controller"]
    assert "m + rad/2" not in controller[3] and "pose loss" in controller[3]
    (actuator,) = [r for r in rows if r[1] == "actuator"]
    assert "0.0301" not in actuator[3]  # the gripper's ideal error, not the headline
    assert actuator[3].startswith("elbow_flex: ideal actuator 0.0123 -> delay_lag 0.00213 rad")


def test_the_console_key_figure_is_the_report_headline_figure_for_every_finding(
    demo_run: tuple[Path, Path, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = demo_run[0]
    findings = json.loads((out / "findings.json").read_text())["findings"]
    rows = _summary_rows(capsys, monkeypatch, out)
    keys = _report_keys(out)
    assert len(rows) == len(findings) == len(keys)
    for i, (f, row) in enumerate(zip(findings, rows, strict=True)):
        assert row[:3] == [f["verdict"], f["branch"], f["title"]]
        # a not-measured card has no figure; the terminal names the evidence to add there
        from simgap.cli._app import key_text

        want = keys[i] or (key_text(f) if f["verdict"] == "not_measured" else "")
        assert row[3] == want, (f["branch"], f["title"])
    page = (out / "report.html").read_text(encoding="utf-8")
    head = page[page.index('id="headline"') :]
    head = html.unescape(head[: head.index("</section>")])
    first = next(r for r in rows if r[1] == "plumbing" and r[0] == "implicated")
    assert first[3] in head  # the report's headline prints the same figure


def _actuator(joints: dict[str, tuple[str, float, float]]) -> dict[str, Any]:
    figs: dict[str, Any] = {
        "noise_floor_rad": 0.0015,
        "joints": {
            j: {"selected": sel, "ideal_mae_rad": ideal, "selected_mae_rad": fitted}
            for j, (sel, ideal, fitted) in joints.items()
        },
    }
    figs["worst_ideal_mae_rad"] = max(v[1] for v in joints.values())
    return {
        "branch": "actuator",
        "kind": "ladder",
        "verdict": "implicated",
        "figures": figs,
        "key_figure": "worst_ideal_mae_rad",
        "residual": max(v[2] for v in joints.values()),
        "noise_floor": 0.0015,
        "residual_unit": "rad",
    }


def test_the_actuator_headline_names_the_worst_fitted_joint() -> None:
    from simgap.report.headline import key_line

    line = key_line(
        _actuator(
            {
                "elbow": ("delay_lag", 0.012, 0.002),
                "gripper": ("servo", 0.030, 0.0018),
                "wrist": ("ideal", 0.0016, 0.0016),
            }
        )
    )
    assert line.text == (
        "elbow: ideal actuator 0.0120 -> delay_lag 0.00200 rad (worst of 2 "
        "joints, held out) against the encoder noise floor 0.00150 rad"
    )
    assert (line.value, line.threshold) == (0.002, 0.0015)
    healthy = key_line(
        _actuator({"elbow": ("ideal", 0.0016, 0.0016), "gripper": ("ideal", 0.002, 0.002)})
    )
    assert healthy.text.startswith("an ideal actuator misses by 0.00200 rad (gripper")


def test_the_contact_headline_is_the_identified_friction() -> None:
    from simgap.report.headline import key_line

    base = {
        "branch": "contact",
        "verdict": "implicated",
        "residual": 0.006,
        "noise_floor": 0.002,
        "residual_unit": "m",
        "key_figure": "friction_best",
    }
    pinned = key_line(
        {
            **base,
            "figures": {
                "friction_nominal": 1.0,
                "friction_best": 0.5,
                "friction_interval": [0.4, None],
                "friction_status": "fitted",
            },
        }
    )
    assert pinned.text == "friction 1.00 -> 0.500 (95 % 0.400..open)"
    unfitted = key_line(
        {
            **base,
            "figures": {
                "friction_nominal": 1.0,
                "friction_best": None,
                "friction_status": "not identifiable",
            },
        }
    )
    assert unfitted.text == "residual 0.00600 m against the noise floor 0.00200 m"


# 5. init: paths that do not climb, wrapped items indented under their bullet

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


def _dataset(root: Path) -> Path:
    ds = root / "ds"
    write_so101_info(ds)
    return ds


def test_init_at_100_columns_indents_wrapped_items_and_prints_no_climbing_path(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = _dataset(tmp_path)
    here = tmp_path / "work" / "a"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    r = runner.invoke(
        app,
        ["init", str(ds), "--model", str(demo_model), "--out", "../../rig.toml"],
        env={"COLUMNS": "100"},
    )
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    # a listed line is at most 100 columns, or one word no line can hold (a long path stays
    # whole); the path written and the command to run next stay one line, to copy
    assert all(
        len(ln) <= 100 or len(ln.split()) == 1
        for ln in lines
        if not ln.startswith(("wrote ", "next: "))
    ), lines
    assert "../" not in r.stdout
    rig = str((tmp_path / "rig.toml").absolute())
    assert (
        lines[0] == f"wrote {rig}" and lines[-1] == f"next: simgap diagnose {rig} --out simgap-out"
    )
    inside = [i for i, ln in enumerate(lines) if ln.startswith("  - ")]
    units = next(i for i in inside if "units:" in lines[i])
    assert lines[units + 1].startswith("    ") and lines[units + 1][4] != " "  # wrapped
    for i, ln in enumerate(lines):
        if not ln.startswith(("  - ", "wrote", "guessed", "still", "next")):
            assert ln.startswith("    ") and lines[i - 1].startswith(("  - ", "    ")), ln


def test_init_prints_a_path_inside_the_current_folder_relative_to_it(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = _dataset(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(
        app,
        [
            "init",
            str(ds),
            "--model",
            str(demo_model),
            "--out",
            str(tmp_path / "sub" / ".." / "rig.toml"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0] == "wrote rig.toml"


# 6. a branch not measured says what to add


def test_not_measured_rows_name_the_evidence_to_add(tmp_path: Path, demo_model: Path) -> None:
    from simgap.branches.ladder_list import LADDER
    from tests.factories import write_rig

    rig = write_rig(tmp_path, demo_model)  # no evidence: every branch is not measured
    r = runner.invoke(
        app, ["diagnose", str(rig), "--out", str(tmp_path / "out")], env={"COLUMNS": ""}
    )
    assert r.exit_code == 0, r.output
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("not_measured")]
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())["findings"]
    assert {f["branch"] for f in findings} == {s.name for s in LADDER}
    assert len(rows) == len(findings)
    for f, row in zip(findings, rows, strict=True):
        assert f["verdict"] == "not_measured" and f["needs"]
        more = len(f["needs"]) - 1
        assert row.rstrip().endswith(
            f"add {f['needs'][0]}" + (f" (and {more} more: see findings.json)" if more else "")
        ), row


# the second trial: a doc's command that fails after the quick start, a stale CI sentence

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("page", ["README.md", "docs/demo.md", "docs/rerun.md"])
def test_a_doc_demo_command_into_the_quick_starts_folder_passes_force(page: str) -> None:
    """The README's quick start writes simgap-demo, so a later doc command writing there
    (by --out or by default) without --force is refused: each such line passes --force."""
    lines = [
        ln
        for ln in (ROOT / page).read_text().splitlines()
        if re.search(r"\bsimgap demo\b(?!`)", ln) and not ln.lstrip().startswith("|")
    ]
    assert lines, f"{page} has no 'simgap demo' command"
    for ln in lines:
        out = re.search(r"--out\s+(\S+)", ln)
        if out is None or out.group(1) == "simgap-demo":
            assert "--force" in ln, f"{page}: {ln.strip()}"


def test_the_rerun_page_says_what_ci_installs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    page = " ".join((ROOT / "docs" / "rerun.md").read_text().split())
    installs = re.search(r"pip install[^\n]*\[[^\]]*\brerun\b", ci) is not None
    assert ("CI does not install it" in page) is not installs
    assert ("CI installs the `rerun` extra" in page) is installs
