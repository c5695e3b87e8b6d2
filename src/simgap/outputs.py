"""Writing outputs: atomically, into a folder the user names, never over the inputs.

- Files are written to a temporary sibling and renamed into place; their mode follows the
  user's umask (``0o666 & ~umask``), not ``mkstemp``'s 0600.
- A folder (``output_folder``) is built in a temporary sibling folder and renamed into place
  at the end, so a run killed half way leaves the old folder or nothing; ``force`` replaces
  the old folder only then. A lock beside the target refuses a second concurrent run.
- While a command runs (``guard_inputs``), every file it read is noted (``note_input``) and
  no output may equal an input, lie inside an input folder, or be a folder holding an input.
  The guard lives in a ``ContextVar``, which a spawned process or a Ray task does not
  inherit: work sent elsewhere carries its inputs (``protected_inputs``) and opens its own
  ``guard_inputs(those)`` (``simgap.fleet.worker.diagnose_one``).
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import fcntl
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from simgap.errors import InputError, OutputExistsError

_INPUTS: contextvars.ContextVar[list[Path] | None] = contextvars.ContextVar(
    "simgap_inputs", default=None
)


def _resolved(path: str | Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(path))


@contextlib.contextmanager
def guard_inputs(inputs: Iterable[str | Path] = ()) -> Iterator[None]:
    """While inside, ``inputs`` and the inputs noted with ``note_input`` are protected from
    every output (an enclosing guard's inputs stay protected too: a guard only adds)."""
    token = _INPUTS.set(list(_INPUTS.get() or []) + [_resolved(p) for p in inputs])
    try:
        yield
    finally:
        _INPUTS.reset(token)


def protected_inputs() -> tuple[Path, ...]:
    """The inputs the current guard protects (to hand to work that runs elsewhere)."""
    return tuple(dict.fromkeys(_INPUTS.get() or []))


def note_input(path: str | Path) -> None:
    """Record ``path`` (a file or folder read by this command) as an input."""
    seen = _INPUTS.get()
    if seen is not None:
        seen.append(_resolved(path))


def check_not_input(path: str | Path, *, folder: bool = False) -> None:
    """Refuse an output ``path`` that is an input, lies inside an input folder, or (a
    ``folder`` output) holds an input.

    Raises:
        InputError: naming the output and the input it would overwrite.
    """
    clash = input_clash(path, _INPUTS.get() or (), folder=folder)
    if clash is not None:
        what, inp = clash
        raise InputError(
            file=path,
            expected="an output path apart from every input",
            got=f"the output {what} {inp}",
            fix="write the output somewhere else (a new file or folder)",
        )


def check_output_file(path: str | Path, *, option: str, suffix: str) -> Path:
    """Refuse, before any work, an output file named by ``option`` (e.g. ``--rerun``) that
    is an existing folder, lies below a file, does not end in ``suffix`` (``.rrd``), or is
    an input. Returns the path.

    Raises:
        InputError: naming the option, what was expected and the fix.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(
            field=option,
            expected=f"a {suffix} file to write",
            got=f"the folder {path}",
            fix=f"name a file, e.g. {path / ('view' + suffix)}",
        )
    above = next((p for p in path.absolute().parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise InputError(
            field=option,
            expected=f"a {suffix} file in a folder",
            got=f"{path}, below the file {above}",
            fix="name a file in a folder",
        )
    if path.suffix.lower() != suffix:
        raise InputError(
            field=option,
            expected=f"a file name ending in {suffix}",
            got=f"'{path.name}'",
            fix=f"name it {path.with_suffix(suffix).name} ({option} writes {suffix} files only)",
        )
    check_not_input(path)
    return path


def input_clash(
    path: str | Path, inputs: Iterable[Path], *, folder: bool = False
) -> tuple[str, Path] | None:
    """The first input that the output ``path`` is, lies inside or (a ``folder`` output)
    holds, with a phrase saying which ("is an input", "lies inside the input", "holds the
    input"); None when it touches none. ``inputs`` are resolved paths."""
    out = _resolved(path)
    for inp in inputs:
        inside = out == inp or inp in out.parents
        holds = folder and out in inp.parents
        if inside or holds:
            return (
                "is an input"
                if out == inp
                else "lies inside the input"
                if inside
                else "holds the input"
            ), inp
    return None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new file gets under the user's umask (0o666 & ~umask)."""
    return 0o666 & ~_umask()


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place."""
    path = Path(path)
    check_not_input(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), file_mode())
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as e:  # a full disk's write names no file: name the one being written
        Path(tmp).unlink(missing_ok=True)
        if e.filename is None:
            raise OSError(e.errno, e.strerror or str(e), str(path)) from e
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 text atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def json_safe(obj: Any) -> Any:
    """``obj`` with NaN/Inf floats as None and numpy scalars/arrays as Python values."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, int):
        return obj
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return json_safe(obj.tolist())
    if isinstance(obj, Path):
        return str(obj)
    return obj


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    """Write pretty JSON atomically (NaN is refused: use None)."""
    return atomic_write_text(path, json.dumps(obj, indent=2, allow_nan=False) + "\n")


def prepare_out_dir(path: str | Path, *, force: bool = False) -> Path:
    """Make sure ``path`` is a usable output folder (written in place; see
    ``output_folder`` for the atomic version).

    Raises:
        OutputExistsError: it exists and is not empty, and ``force`` is False.
        InputError: it exists and is a file, or it is, holds or lies inside an input.
    """
    path = Path(path)
    _check_target(path, force)
    path.mkdir(parents=True, exist_ok=True)
    return path


def check_output_target(path: str | Path, *, force: bool = False) -> None:
    """Refuse, before any long work, an output folder that ``output_folder`` would refuse
    only at its start (a non-empty folder without ``force``, a file, an input).

    Raises:
        OutputExistsError: ``path`` is a non-empty folder and ``force`` is False.
        InputError: ``path`` is a file, or is, holds or lies inside an input.
    """
    _check_target(Path(os.path.abspath(path)), force)


def _check_target(path: Path, force: bool) -> None:
    check_not_input(path, folder=True)
    if path.exists() and not path.is_dir():
        raise InputError(
            file=path,
            expected="an output folder",
            got="an existing file",
            fix="name a folder, not a file",
        )
    if force and path.is_dir() and any(path.iterdir()):
        here = Path(os.path.abspath(os.getcwd()))
        if path == here or path in here.parents:
            raise InputError(
                file=path,
                expected="an output folder apart from the current folder",
                got="the current folder or one above it, which "
                "--force would replace with everything in it",
                fix="name a new folder (e.g. --out simgap-out)",
            )
    if path.is_dir() and any(path.iterdir()) and not force:
        raise OutputExistsError(
            f"{path}: the output folder exists and is not empty. "
            "Fix: name a new folder, or pass --force to replace it."
        )


@contextlib.contextmanager
def folder_lock(path: str | Path, *, wait: bool = False) -> Iterator[None]:
    """An exclusive lock on ``path`` (a file or folder that may not exist yet), held in a
    sibling ``.<name>.lock`` file; the kernel drops it when the process dies, and the file is
    removed when the run ends (a run that finds its lock file replaced takes the new one).

    Raises:
        OutputExistsError: another process holds it and ``wait`` is False.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.parent / f".{path.name}.lock"
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, file_mode())
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError as e:
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            raise OutputExistsError(
                f"{path}: another simgap run is writing this output now (lock {lock}). "
                "Fix: wait for it to finish, or name another output folder."
            ) from None
        # the holder before us removes the file as it lets go: a lock taken on a file no
        # longer at that path guards nothing, so take the one that is there now
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        # removed while still held, so no run is left holding a lock file nobody sees
        with contextlib.suppress(OSError):
            lock.unlink()
        os.close(fd)


def _stale_siblings(path: Path) -> list[Path]:
    return [p for p in path.parent.glob(f".{path.name}.*.tmp") if p.is_dir()]


@contextlib.contextmanager
def output_folder(path: str | Path, *, force: bool = False) -> Iterator[Path]:
    """Build an output folder atomically: yields a temporary sibling folder to write into;
    on success it is renamed to ``path`` (an old folder is replaced only then, with
    ``force``); on any error, or if the process dies, ``path`` keeps its old contents.

    Raises:
        OutputExistsError: ``path`` is a non-empty folder and ``force`` is False, or
            another run holds its lock.
        InputError: ``path`` is a file, or is, holds or lies inside an input.
    """
    path = Path(os.path.abspath(path))  # "." has no parent to build the new folder in
    _check_target(path, force)
    with folder_lock(path):
        for stale in _stale_siblings(path):  # left by a run that died (we hold the lock)
            if input_clash(stale, _INPUTS.get() or (), folder=True) is None:
                shutil.rmtree(stale, ignore_errors=True)
        check_writable(path.parent)  # a full disk or a read-only folder, before the work
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
        try:
            os.chmod(tmp, 0o777 & ~_umask())
            yield tmp
            _check_target(path, force)
            swap_into_place(tmp, path)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


MIN_FREE_BYTES = 64 << 20
"""Free space an output folder's disk must have before the long work starts [bytes]."""
PROBE_BYTES = 64 << 10


def check_writable(folder: str | Path) -> None:
    """Refuse, before any long work, a folder that cannot take the output: a probe file is
    created, written, synced and removed there, and the disk must have ``MIN_FREE_BYTES``.

    Raises:
        InputError: naming the folder, what failed (permission, full disk) and the fix.
    """
    folder = Path(folder)
    fix = "free space on that disk, or name an --out folder you may write on another disk"
    try:
        free = shutil.disk_usage(folder).free
        fd, probe = tempfile.mkstemp(prefix=".simgap-probe.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(b"\0" * PROBE_BYTES)
                fh.flush()
                os.fsync(fh.fileno())
        finally:
            Path(probe).unlink(missing_ok=True)
    except OSError as e:
        raise InputError(
            file=folder,
            expected="a folder simgap can write its output in",
            got=f"{e.strerror or e} ({e.filename or folder})",
            fix=fix,
        ) from None
    if free < MIN_FREE_BYTES:
        raise InputError(
            file=folder,
            expected=f"at least {MIN_FREE_BYTES >> 20} MB free for the output",
            got=f"{free / 1e6:.1f} MB free",
            fix=fix,
        )


def swap_into_place(new: Path, target: Path) -> None:
    """Rename the finished folder ``new`` to ``target``; an old ``target`` is moved aside
    first and removed only once the new one is in place, so a reader sees the old folder or
    the new one, never a half of either."""
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{os.getpid()}.tmp"
        os.rename(target, old)
    os.rename(new, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def relocate_paths(obj: Any, src: Path, dst: Path) -> Any:
    """``obj`` with every string path under ``src`` rewritten to lie under ``dst``."""
    if isinstance(obj, str):
        s = str(src)
        if obj == s or obj.startswith(s + os.sep):
            return str(dst) + obj[len(s) :]
        return obj
    if isinstance(obj, dict):
        return {k: relocate_paths(v, src, dst) for k, v in obj.items()}
    if isinstance(obj, list):
        return [relocate_paths(v, src, dst) for v in obj]
    return obj


def relative_paths(obj: Any, folder: str | Path) -> Any:
    """``obj`` with every absolute path in it named relative to ``folder`` (the folder of
    the file being written), with forward slashes.

    A string is taken for a path when it is absolute and lies under ``folder`` or names a
    file or folder that exists (an input: the dataset, the model, a log); other strings are
    kept. A path on another drive (no relative path exists) stays absolute.
    """
    if isinstance(obj, str):
        if not os.path.isabs(obj) or "\n" in obj:
            return obj
        base = os.path.abspath(folder)
        inside = obj == base or obj.startswith(base.rstrip(os.sep) + os.sep)
        if not inside and not os.path.exists(obj):
            return obj
        try:
            return Path(os.path.relpath(obj, base)).as_posix()
        except ValueError:
            return obj
    if isinstance(obj, dict):
        return {k: relative_paths(v, folder) for k, v in obj.items()}
    if isinstance(obj, list):
        return [relative_paths(v, folder) for v in obj]
    return obj


def resolve_paths(obj: Any, folder: str | Path) -> Any:
    """``obj`` (read from a file in ``folder``) with each relative path that
    ``relative_paths`` wrote made absolute again against ``folder``.

    A string is taken for such a path when it is relative, names something below ``folder``
    (``actuator/patch.xml``) or above it (``../data``), and that exists; an absolute path
    (a file written before paths were relative) is kept as it is, as is every other string.
    """
    if isinstance(obj, str):
        if (
            not obj
            or os.path.isabs(obj)
            or "\n" in obj
            or not ("/" in obj or os.sep in obj or Path(obj).suffix)
        ):
            return obj
        full = os.path.normpath(os.path.join(os.path.abspath(folder), obj))
        return full if os.path.exists(full) else obj
    if isinstance(obj, dict):
        return {k: resolve_paths(v, folder) for k, v in obj.items()}
    if isinstance(obj, list):
        return [resolve_paths(v, folder) for v in obj]
    return obj
