"""What a new user's first session showed (issue: the newcomer trial): the demo says whether
it records or reuses its bench, a root option given after the command says where it goes,
``simgap --version`` exists, the summary's key figure is each finding's headline (the
report's), ``init`` lists paths and wrapped items readably, and a branch not measured says
what to add."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from simgap.cli import app

runner = CliRunner()


# 2. a root option after the command

@pytest.mark.parametrize(("argv", "line"), [
    (["diagnose", "rig", "--quiet", "--out", "x"], "simgap --quiet diagnose rig --out x"),
    (["diagnose", "rig", "-q"], "simgap -q diagnose rig"),
    (["contact", "lint", "--quiet", "m.xml"], "simgap --quiet contact lint m.xml"),
    (["contact", "--quiet", "lint", "m.xml"], "simgap --quiet contact lint m.xml"),
    (["diagnose", "rig", "--version"], "simgap --version"),
])
def test_a_root_option_after_the_command_says_to_put_it_before(argv: list[str],
                                                               line: str) -> None:
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
