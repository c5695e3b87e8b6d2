"""Shared fixtures: paths to the shared reference data and the bundled demo model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``; tests that need it skip with the reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"reference data not found at {SHARED_DATA} (the workplace's ../shared/data)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def demo_model() -> Path:
    """The bundled SO-101-like demo model (primitive geoms)."""
    from simgap.demo import demo_model_path

    return demo_model_path()


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """``simgap demo`` run once per test session: (out folder, cache folder, terminal output).

    Several tests read the same diagnosis (the CLI's output, the planted-truth check, the
    report in a browser); the whole demo takes about half a minute, so it runs once.
    """
    from typer.testing import CliRunner

    from simgap.cli import app

    root = tmp_path_factory.mktemp("demo")
    out, cache = root / "out", root / "cache"
    result = CliRunner().invoke(app, ["demo", "--out", str(out), "--cache", str(cache)])
    assert result.exit_code == 0, result.output
    return out, cache, result.output


# Hypothesis profiles: the default is small and deterministic (CI); run many fresh cases
# by hand with ``pytest tests/test_fuzz_inputs.py --hypothesis-profile=long``.
try:
    from hypothesis import HealthCheck, settings

    _quiet = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
              HealthCheck.function_scoped_fixture]
    settings.register_profile("default", max_examples=int(os.environ.get("SIMGAP_FUZZ_N", 120)),
                              derandomize=True, deadline=None, database=None,
                              suppress_health_check=_quiet, print_blob=True)
    settings.register_profile("long", max_examples=3000, derandomize=False, deadline=None,
                              suppress_health_check=_quiet, print_blob=True)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
except ImportError:  # hypothesis is a test dependency; without it the fuzz suite is skipped
    pass
