"""``simgap contact pair``: a NEW MJCF that includes the original and adds one
``<contact><pair>`` with measured numbers. The original file is never edited.

MuJoCo resolves mesh and texture paths against the MAIN model's folder, so the patch
re-states the original's asset folders as absolute paths in its own ``<compiler>`` (after
the include); it can then live in any folder. It is compiled before it is reported, and a
failure carries MuJoCo's message.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import quoteattr

from simgap.errors import InputError
from simgap.outputs import atomic_write_text


def pair_xml(model: Path, out: Path, pairs: Sequence[tuple[str, str]],
             friction: Sequence[float], condim: int, solref: Sequence[float],
             solimp: Sequence[float], name: str | None = None) -> str:
    """The patch MJCF text: one ``<pair>`` per (geom1, geom2), same numbers (see
    ``write_pair``)."""
    if len(friction) != 5:
        raise InputError(field="friction", expected="five numbers: sliding sliding "
                         "torsional rolling rolling", got=list(friction))
    if condim not in (1, 3, 4, 6):
        raise InputError(field="condim", expected="1, 3, 4 or 6", got=condim)
    if len(solref) != 2 or len(solimp) not in (3, 5):
        raise InputError(field="solref/solimp", expected="2 and 3 or 5 numbers",
                         got=(list(solref), list(solimp)))
    try:
        inc = os.path.relpath(model.resolve(), out.resolve().parent)
    except ValueError:
        inc = str(model.resolve())

    def nums(v: Sequence[float]) -> str:
        return quoteattr(" ".join(f"{x:.6g}" for x in v))

    nm = f" name={quoteattr(name)}" if name and len(pairs) == 1 else ""
    dirs = _asset_dirs(model)
    comp = "".join(f" {k}={quoteattr(v)}" for k, v in dirs.items())
    return (f'<mujoco model={quoteattr(model.stem + "_pair")}>\n'
            f"  <!-- written by simgap contact pair; the original is included unchanged -->\n"
            f"  <include file={quoteattr(inc)}/>\n"
            f"  <compiler{comp}/>\n"
            f"  <contact>\n"
            + "".join(f"    <pair{nm} geom1={quoteattr(g1)} geom2={quoteattr(g2)} "
                      f'condim="{condim}" friction={nums(friction)} solref={nums(solref)} '
                      f"solimp={nums(solimp)}/>\n" for g1, g2 in pairs)
            + "  </contact>\n</mujoco>\n")


def _asset_dirs(model: Path) -> dict[str, str]:
    """The original's mesh/texture folders as absolute paths."""
    from simgap.contact.lint import _parse, _walk

    base = model.resolve().parent
    found: dict[str, str] = {}
    for top in _parse(model, None, model.parent):
        for el in _walk(top):
            if el.tag == "compiler":
                for key in ("assetdir", "meshdir", "texturedir"):
                    if key in el.attrs:
                        found[key] = el.attrs[key]
    asset = found.get("assetdir", "")
    return {k: str((base / found.get(k, asset)).resolve()) for k in ("meshdir", "texturedir")}


def write_pair(model: str | Path, out: str | Path, geom1: str, geom2: str | Sequence[str], *,
               friction: Sequence[float], condim: int = 4,
               solref: Sequence[float] = (0.02, 1.0),
               solimp: Sequence[float] = (0.9, 0.95, 0.001, 0.5, 2.0),
               name: str | None = None) -> Path:
    """Write the patch and check that it compiles (``geom2`` may list several geoms:
    one pair each, e.g. both finger pads against the object).

    Raises:
        InputError: the output would overwrite the model, a geom is unknown (valid names
            listed), or the patch does not compile (MuJoCo's message, with the file).
    """
    from simgap.sim.model import load_model, names

    model, out = Path(model), Path(out)
    if out.resolve() == model.resolve():
        raise InputError(file=out, expected="a new file for the patch",
                         got="the original model", fix="name another output file")
    base = load_model(model)
    valid = names(base, "geom")
    others = [geom2] if isinstance(geom2, str) else list(geom2)
    for g in [geom1, *others]:
        if g not in valid:
            from simgap.errors import NameNotFoundError

            raise NameNotFoundError("geom", g, valid, file=model)
    text = pair_xml(model, out, [(geom1, g) for g in others], friction, condim, solref,
                    solimp, name)
    atomic_write_text(out, text)
    try:
        load_model(out)
    except InputError as e:
        out.unlink(missing_ok=True)
        raise InputError(file=out, expected="a pair patch that compiles", got=e.got,
                         fix="write the patch beside the original model, so that its "
                             "relative asset paths resolve") from e
    return out
