"""Shared fixtures: paths to the shared reference data and the bundled demo model.

Rendering tests use the offscreen OpenGL backend simgap itself would use: the one named in
``MUJOCO_GL`` when it works, else EGL, else OSMesa. Each is tried once, in a subprocess, by
making a MuJoCo context; when none works, ``MUJOCO_GL`` is set to ``disable`` (so ``import
mujoco`` still succeeds) and every test that needs a context is skipped with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

_PROBE = (
    "import mujoco; m = mujoco.MjModel.from_xml_string('<mujoco><worldbody/></mujoco>'); "
    "r = mujoco.Renderer(m, 8, 8); r.render(); r.close()"
)


def _probe(backend: str) -> str | None:
    """None when a MuJoCo offscreen context can be made with ``backend``, else why not."""
    env = {**os.environ, "MUJOCO_GL": backend, "PYOPENGL_PLATFORM": backend}
    try:
        p = subprocess.run(
            [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        return "timed out"
    if p.returncode == 0:
        return None
    last = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
    return last[:160]


def _choose_gl() -> tuple[str | None, str]:
    """(working backend or None, what was tried).

    ``SIMGAP_TEST_GL_BACKENDS`` (comma-separated, or ``none``) narrows the backends tried:
    CI sets it to ``egl`` and to ``none`` to prove that the tests behave on a machine without
    OSMesa, or without any backend (they pass or skip; none errors).
    """
    asked = os.environ.get("MUJOCO_GL", "").strip().lower()
    allowed = os.environ.get("SIMGAP_TEST_GL_BACKENDS", "egl,osmesa").lower().split(",")
    order = [
        b
        for b in dict.fromkeys([asked, "egl", "osmesa"])
        if b in ("egl", "osmesa") and b in allowed
    ]
    tried = []
    for backend in order:
        why = _probe(backend)
        if why is None:
            return backend, ""
        tried.append(f"{backend}: {why}")
    return None, "; ".join(tried) or "none allowed by SIMGAP_TEST_GL_BACKENDS"


GL_BACKEND, GL_TRIED = _choose_gl()
if GL_BACKEND is None:
    os.environ["MUJOCO_GL"] = "disable"
    os.environ.pop("PYOPENGL_PLATFORM", None)
else:
    os.environ["MUJOCO_GL"] = GL_BACKEND
    os.environ["PYOPENGL_PLATFORM"] = GL_BACKEND
GL_SKIP_REASON = (
    "no offscreen OpenGL backend works on this machine, so rendering is not "
    f"tested (tried {GL_TRIED}); install libosmesa6 (software) or a GPU driver "
    "with EGL"
)


def pytest_report_header(config: pytest.Config) -> str:
    return f"simgap rendering backend: {GL_BACKEND or 'none (rendering tests skip)'}"


_GL_CODE = ("/mujoco/rendering/", "/mujoco/egl/", "/mujoco/osmesa/", "/mujoco/glfw/", "/OpenGL/")


def _needs_gl(exc: BaseException | None) -> bool:
    """Whether an exception (or its cause chain) is a failure to make a GL context: simgap's
    RenderBackendError, or one raised inside MuJoCo's or PyOpenGL's GL code (tests that use
    ``mujoco.Renderer`` directly)."""
    from simgap.sim.render import RenderBackendError

    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, RenderBackendError):
            return True
        tb = exc.__traceback__
        while tb is not None:
            if any(part in tb.tb_frame.f_code.co_filename for part in _GL_CODE):
                return True
            tb = tb.tb_next
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, Any, None]:
    """With no working GL backend, a test that failed only for want of a context is skipped."""
    outcome = yield
    rep = outcome.get_result()
    if (
        GL_BACKEND is None
        and rep.failed
        and call.excinfo is not None
        and _needs_gl(call.excinfo.value)
    ):
        rep.outcome = "skipped"
        rep.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {GL_SKIP_REASON}")


@pytest.fixture(scope="session")
def gl_backend() -> str:
    """The working offscreen backend; tests that render skip with the reason when none works."""
    if GL_BACKEND is None:
        pytest.skip(GL_SKIP_REASON)
    return GL_BACKEND


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``; tests that need it skip with the reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            "the reference data folder ../shared/data is absent (see the README: it "
            "holds real third-party recordings and lies beside the repository)"
        )
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
    if (
        result.exit_code != 0
        and GL_BACKEND is None
        and "offscreen rendering could not start" in result.output
    ):
        pytest.skip(GL_SKIP_REASON)
    assert result.exit_code == 0, result.output
    return out, cache, result.output


# Hypothesis profiles: the default is small and deterministic (CI); run many fresh cases
# by hand with ``pytest tests/test_fuzz_inputs.py --hypothesis-profile=long``.
try:
    from hypothesis import HealthCheck, settings

    _quiet = [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ]
    settings.register_profile(
        "default",
        max_examples=int(os.environ.get("SIMGAP_FUZZ_N", 120)),
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=_quiet,
        print_blob=True,
    )
    settings.register_profile(
        "long",
        max_examples=3000,
        derandomize=False,
        deadline=None,
        suppress_health_check=_quiet,
        print_blob=True,
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
except ImportError:  # hypothesis is a test dependency; without it the fuzz suite is skipped
    pass


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run the tests marked slow (real-log fits, benches, fleets; "
        "tens of minutes on 2 cores)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked slow run only with --run-slow (or SIMGAP_RUN_SLOW=1), or when chosen
    with -m; the default run stays within a few minutes on 2 cores."""
    if (
        config.getoption("--run-slow")
        or os.environ.get("SIMGAP_RUN_SLOW") == "1"
        or config.getoption("-m")
    ):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (or SIMGAP_RUN_SLOW=1)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def findings_follow_the_published_schema() -> Any:
    """Every findings.json simgap writes during the session is held, as it is written, to the
    published schema (docs/findings.schema.json): a figure a branch adds without declaring
    it, an absolute path, a unit-less key figure fail the test that wrote it."""
    try:
        import jsonschema
    except ImportError:  # a test dependency; without it nothing is checked
        yield []
        return
    import json as _json

    import simgap.diagnose as diagnose

    schema = _json.loads(
        (Path(__file__).resolve().parents[1] / "docs" / "findings.schema.json").read_text(
            encoding="utf-8"
        )
    )
    validator = jsonschema.Draft202012Validator(schema)
    original = diagnose.atomic_write_json
    checked: list[Path] = []

    def write(path: Any, data: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(path).name == "findings.json":
            errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
            if errors:
                raise AssertionError(
                    "findings.json breaks docs/findings.schema.json:\n"
                    + "\n".join(
                        f"  {'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
                        for e in errors[:10]
                    )
                )
            checked.append(Path(path))
        return original(path, data, *args, **kwargs)

    patch = pytest.MonkeyPatch()
    patch.setattr(diagnose, "atomic_write_json", write)
    yield checked
    patch.undo()
