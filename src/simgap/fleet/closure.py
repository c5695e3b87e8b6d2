"""Every file a rig's diagnosis reads, and a digest of them all (what ``simgap fleet`` resumes
by and protects from its outputs).

A rig's inputs are its rig.toml, its model's closure and its evidence paths. The model's
closure is the MJCF file, every ``<include file>`` it pulls in (relative to the main model's
folder, as MuJoCo resolves them; the including file's folder is tried when that does not
exist), and the asset files its ``<mesh>``, ``<hfield>``, ``<skin>``, ``<texture>`` and
``<model>`` elements name, resolved through ``<compiler meshdir/texturedir/assetdir>``.

The digest frames every part: a tag, then each name and each content as a length-prefixed
field, so no two different sets of files (``{"ab": "c"}`` and ``{"a": "bc"}``) hash alike;
and it starts with simgap's version, so a new simgap diagnoses again.
"""

from __future__ import annotations

import hashlib
import os
import xml.parsers.expat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_INCLUDE_DEPTH = 20
"""Includes deeper than this are not followed (MuJoCo refuses a cycle; the digest must end)."""

_MESH_TAGS = ("mesh", "hfield", "skin")
_TEXTURE_ATTRS = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")


@dataclass(frozen=True)
class ModelClosure:
    """The files of one MJCF model.

    Attributes:
        model: the main model file.
        includes: the ``<include>`` files (found or not), in document order.
        assets: the mesh, height field, skin, texture and model files named, found or not.
        problems: what could not be read (a file missing, XML that does not parse): the
            digest still covers what was found, and the diagnosis reports the problem.
    """

    model: Path
    includes: tuple[Path, ...]
    assets: tuple[Path, ...]
    problems: tuple[str, ...]

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file of the closure, the main model first, each once."""
        return tuple(dict.fromkeys((self.model, *self.includes, *self.assets)))


def _real(p: Path) -> Path:
    try:
        return Path(os.path.realpath(p))
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(p))


def model_closure(model: str | Path) -> ModelClosure:
    """The closure of the MJCF ``model`` (never raises on a bad model: see ``problems``)."""
    model = _real(Path(model))
    root = model.parent
    includes: list[Path] = []
    named: list[tuple[str, str]] = []  # (kind, file attribute) of asset references
    dirs: dict[str, str] = {}
    problems: list[str] = []
    seen: set[Path] = set()

    def parse(path: Path, depth: int) -> None:
        if depth > MAX_INCLUDE_DEPTH or path in seen:
            problems.append(f"{path}: include depth or cycle, not followed")
            return
        seen.add(path)
        try:
            data = path.read_bytes()
        except OSError as e:
            problems.append(f"{path}: {e.strerror or e}")
            return
        parser = xml.parsers.expat.ParserCreate()
        parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
        pending: list[Path] = []

        def start(tag: str, attrs: dict[str, str]) -> None:
            if tag == "include" and attrs.get("file"):
                inc = _real(root / attrs["file"])
                if not inc.exists() and path.parent != root:
                    alt = _real(path.parent / attrs["file"])
                    inc = alt if alt.exists() else inc
                includes.append(inc)
                pending.append(inc)
            elif tag == "compiler":
                for key in ("assetdir", "meshdir", "texturedir"):
                    if key in attrs:
                        dirs[key] = attrs[key]
            elif tag in _MESH_TAGS and attrs.get("file"):
                named.append(("mesh", attrs["file"]))
            elif tag == "texture":
                named.extend(("texture", attrs[a]) for a in _TEXTURE_ATTRS if attrs.get(a))
            elif tag == "model" and attrs.get("file"):
                named.append(("model", attrs["file"]))

        parser.StartElementHandler = start
        try:
            parser.Parse(data, True)
        except xml.parsers.expat.ExpatError as e:
            problems.append(f"{path}: not well-formed XML ({e})")
        for inc in pending:
            parse(inc, depth + 1)

    parse(model, 0)
    asset = dirs.get("assetdir", "")
    base = {
        "mesh": root / dirs.get("meshdir", asset),
        "texture": root / dirs.get("texturedir", asset),
        "model": root,
    }
    assets = tuple(dict.fromkeys(_real(base[kind] / f) for kind, f in named))
    return ModelClosure(model, tuple(dict.fromkeys(includes)), assets, tuple(problems))


def rig_inputs(rig_path: str | Path) -> list[tuple[str, Path]]:
    """Every input of a rig as (role, resolved path): ``rig``, ``model``, ``include``,
    ``asset`` and ``evidence.<key>`` (folders as folders).

    Raises:
        InputError: the rig does not load.
    """
    from simgap.rig import load_rig

    rig_path = _real(Path(rig_path))
    rig = load_rig(rig_path)
    closure = model_closure(rig.model_path)
    out: list[tuple[str, Path]] = [("rig", rig_path), ("model", closure.model)]
    out += [("include", p) for p in closure.includes]
    out += [("asset", p) for p in closure.assets]
    out += [(f"evidence.{k}", _real(p)) for k, p in rig.evidence.paths()]
    return out


def _field(h: Any, data: bytes) -> None:
    h.update(len(data).to_bytes(8, "big"))
    h.update(data)


def _file_field(h: Any, f: Path) -> None:
    """The file's SHA-256 as a framed field (fixed length: its size cannot blur a boundary);
    a missing or unreadable file is a field of its own."""
    inner = hashlib.sha256()
    try:
        with f.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                inner.update(block)
    except OSError as e:
        _field(h, b"unreadable:" + str(e.strerror or e).encode("utf-8", "replace"))
        return
    _field(h, b"sha256:" + inner.digest())


def hash_path(h: Any, p: Path) -> None:
    """Frame ``p`` into ``h``: a file's content, a folder's every file (relative name and
    content, sorted), or that it is missing."""
    if p.is_dir():
        files = sorted(q for q in p.rglob("*") if q.is_file())
        _field(h, b"dir")
        _field(h, str(len(files)).encode())
        for f in files:
            _field(h, os.fsencode(f.relative_to(p)))
            _file_field(h, f)
    elif p.is_file():
        _field(h, b"file")
        _file_field(h, p)
    else:
        _field(h, b"missing")


def inputs_digest(inputs: list[tuple[str, Path]]) -> str:
    """SHA-256 over simgap's version and every (role, path) input: the role, the path's name
    relative to the rig's folder (absolute when outside it), and the content, all framed."""
    from simgap._version import __version__

    h = hashlib.sha256()
    _field(h, b"simgap-fleet-digest/2")
    _field(h, str(__version__).encode())
    base = inputs[0][1].parent if inputs else Path("/")
    for role, p in inputs:
        _field(h, role.encode())
        try:
            name = p.relative_to(base)
        except ValueError:
            name = p
        _field(h, os.fsencode(name))
        hash_path(h, p)
    return h.hexdigest()
