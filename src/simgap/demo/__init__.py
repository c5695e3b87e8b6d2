"""The bundled demo rig: an SO-101-like arm from primitive geoms and a synthetic bench.

The bench is a twin of the simulated arm with planted faults, so a new user can see what
each branch finds and check it against the truth. It is generated on first use, from a
seed, into a cache folder: ``$SIMGAP_CACHE/demo/seed-<seed>`` when ``SIMGAP_CACHE`` is set,
else ``~/.cache/simgap/demo/seed-<seed>``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path

import simgap.sim  # noqa: F401  (chooses an offscreen GL backend before mujoco loads)
from simgap._version import __version__
from simgap.outputs import swap_into_place

MODEL_FILE = "so101_demo.xml"
RIG_FILE = "rig.toml"
_MARKER = ".complete"


def demo_model_path() -> Path:
    """The bundled demo MJCF (primitive geoms; safe to render on CPU)."""
    return Path(str(resources.files("simgap.demo").joinpath(MODEL_FILE)))


def demo_cache_dir(cache: str | Path | None = None, seed: int = 0) -> Path:
    """Where the demo bench for ``seed`` lives."""
    if cache is not None:
        return Path(cache) / f"seed-{seed}"
    root = os.environ.get("SIMGAP_CACHE")
    base = Path(root) / "demo" if root else Path.home() / ".cache" / "simgap" / "demo"
    return base / f"seed-{seed}"


_SOURCES = (
    "__init__.py",
    "bench.py",
    "recorder.py",
    "script.py",
    "timing.py",
    "truth.py",
    "twin.py",
    "writers.py",
    MODEL_FILE,
    RIG_FILE,
)


def _stamp() -> str:
    """The simgap version and a digest of the bench's sources: a change rebuilds the cache."""
    h = hashlib.sha256()
    sources = [(resources.files("simgap.demo"), name) for name in _SOURCES]
    sources.append((resources.files("simgap.sim"), "scene.py"))  # the bench's MuJoCo calls
    for pkg, name in sources:
        f = pkg.joinpath(name)
        if f.is_file():
            h.update(name.encode() + b"\0" + f.read_bytes())
    return f"{__version__} {h.hexdigest()[:16]}"


def cached_demo(cache: str | Path | None = None, seed: int = 0) -> Path | None:
    """The ``rig.toml`` of the bench for ``seed`` when it is recorded and current (this
    version of simgap and of the bench's sources, ``prepare_demo``'s own test), else None:
    ``prepare_demo`` would record it. ``simgap demo`` says which of the two it is about to
    do."""
    folder = demo_cache_dir(cache, seed)
    marker = folder / _MARKER
    if marker.is_file() and marker.read_text().strip() == _stamp():
        return folder / RIG_FILE
    return None


def _build(folder: Path, seed: int) -> None:
    from simgap.demo.recorder import record_bench

    shutil.copyfile(demo_model_path(), folder / MODEL_FILE)
    rig_text = resources.files("simgap.demo").joinpath("rig.toml").read_text(encoding="utf-8")
    (folder / RIG_FILE).write_text(rig_text.replace("@SEED@", str(seed)), encoding="utf-8")
    record_bench(folder, seed)


def prepare_demo(cache: str | Path | None = None, seed: int = 0) -> Path:
    """Generate the demo bench (once per seed and version) and return its ``rig.toml``.

    The bench is recorded by ``simgap.demo.recorder.record_bench`` into a temporary folder
    beside the cache folder and renamed into place, so a half-built bench is never used.
    Deterministic from ``seed``: the same seed gives byte-identical files.

    Args:
        cache: the folder holding ``seed-<seed>/``; default ``$SIMGAP_CACHE/demo`` or
            ``~/.cache/simgap/demo``.
        seed: seed of everything random on the bench.
    """
    from simgap.outputs import folder_lock

    folder = demo_cache_dir(cache, seed)
    marker = folder / _MARKER
    stamp = _stamp()
    if marker.is_file() and marker.read_text().strip() == stamp:
        return folder / RIG_FILE
    folder.parent.mkdir(parents=True, exist_ok=True)
    with folder_lock(folder, wait=True):  # a concurrent demo builds it once; we wait
        if marker.is_file() and marker.read_text().strip() == stamp:
            return folder / RIG_FILE
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            _build(tmp, seed)
            (tmp / _MARKER).write_text(stamp)
            swap_into_place(tmp, folder)  # a stale bench is moved aside, then removed
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return folder / RIG_FILE
