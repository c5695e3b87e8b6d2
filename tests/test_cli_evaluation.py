"""``simgap compare``, ``trials`` and ``rank`` from the command line: exit codes and JSON keys."""

from __future__ import annotations

import json
from pathlib import Path

from scipy import stats
from typer.testing import CliRunner

from simgap.cli import app
from tests.test_manifest import manifest_text, write

runner = CliRunner()


def test_compare_comparable_runs(tmp_path: Path) -> None:
    a = write(tmp_path, "sim.toml", manifest_text(outcomes=(True, True, True, False)))
    b = write(
        tmp_path, "real.toml", manifest_text(kind="real", outcomes=(True, False, False, False))
    )
    out = tmp_path / "c.json"
    r = runner.invoke(app, ["compare", str(a), str(b), "--json", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert {"comparable", "mismatches", "rates", "tests"} <= set(d)
    assert {"fisher_p", "barnard_p", "p_a_better"} <= set(d["tests"])
    assert d["comparable"] is True
    assert d["tests"]["fisher_p"] == stats.fisher_exact([[3, 1], [1, 3]]).pvalue
    assert all(0.0 <= v["rate"] <= 1.0 for v in d["rates"].values())


def test_compare_mismatch_exits_nonzero_unless_allowed(tmp_path: Path) -> None:
    a = write(tmp_path, "sim.toml", manifest_text())
    b = write(tmp_path, "real.toml", manifest_text(kind="real", judge="human:ana"))
    r = runner.invoke(app, ["compare", str(a), str(b)])
    assert r.exit_code == 1
    assert "different task, not a gap" in r.output
    r2 = runner.invoke(
        app, ["compare", str(a), str(b), "--allow-mismatch", "--json", str(tmp_path / "c.json")]
    )
    assert r2.exit_code == 0
    d = json.loads((tmp_path / "c.json").read_text())
    assert d["comparable"] is False
    assert [m["item"] for m in d["mismatches"] if m["must_match"]] == ["success.judge"]


def test_compare_manifest_without_hash_exits_2(tmp_path: Path) -> None:
    a = write(tmp_path, "sim.toml", manifest_text(sha=""))
    b = write(tmp_path, "real.toml", manifest_text(kind="real"))
    r = runner.invoke(app, ["compare", str(a), str(b)])
    assert r.exit_code == 2
    assert "policy.sha256" in r.stderr and "Traceback" not in r.stderr


def test_trials_json_keys(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    r = runner.invoke(
        app,
        [
            "trials",
            "--p1",
            "0.5",
            "--p2",
            "0.8",
            "--n",
            "30",
            "--sequential",
            "--sims",
            "300",
            "--json",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["n_per_arm"]["fleiss_cc"] == 45 and d["n_per_arm"]["fleiss"] == 39
    assert set(d["n_per_arm"]) == {
        "fleiss",
        "fleiss_cc",
        "arcsine",
        "fisher_exact",
        "barnard_exact",
    }
    assert all(isinstance(v, int) for v in d["n_per_arm"].values())
    assert d["sequential"]["null"]["seed"] == 1 and "for_n" in d


def test_trials_bad_alpha_and_power(tmp_path: Path) -> None:
    for args, field in (
        (["--alpha", "1.5"], "alpha"),
        (["--power", "0"], "power"),
        (["--p2", "80"], "p2"),
    ):
        base = ["trials", "--p1", "0.5", "--p2", "0.8"]
        if args[0] == "--p2":
            base = ["trials", "--p1", "0.5"]
        r = runner.invoke(app, base + args)
        assert r.exit_code == 2, r.output
        assert f"'{field}'" in r.stderr and "Traceback" not in r.stderr


def test_rank_json_keys_and_errors(tmp_path: Path) -> None:
    csv = write(
        tmp_path,
        "t.csv",
        "checkpoint,sim_success,real_success,real_trials\n"
        "a,0.9,0.5,20\nb,0.1,0.55,20\nc,0.5,0.8,20\n",
    )
    out = tmp_path / "r.json"
    r = runner.invoke(app, ["rank", str(csv), "--json", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert {"mmrv", "pearson", "kendall", "spearman", "n_checkpoints", "intervals"} <= set(d)
    assert d["n_checkpoints"] == 3
    dup = write(tmp_path, "d.csv", "checkpoint,sim_success,real_success\na,0.1,0.2\na,0.3,0.4\n")
    r2 = runner.invoke(app, ["rank", str(dup)])
    assert r2.exit_code == 2 and "listed twice" in r2.stderr
    one = write(tmp_path, "o.csv", "checkpoint,sim_success,real_success\na,0.1,0.2\n")
    r3 = runner.invoke(app, ["rank", str(one)])
    assert r3.exit_code == 2 and "at least two" in r3.stderr
