"""``simgap contact pair``: a NEW MJCF that includes the original and adds one
``<contact><pair>`` with measured numbers. The original file is never edited.

MuJoCo resolves mesh and texture paths against the MAIN model's folder, so the patch
re-states the original's asset folders in its own ``<compiler>`` (after the include),
relative to the patch's own folder: no absolute path is written, so the patch and model
can move together. ``geom1`` and ``geom2`` take lists (one pair for every combination:
several finger pads in one patch), and ``pair_entries_xml`` writes pairs whose numbers
differ (a fitted patch keeps each pair's other values at the model's). Names reach it as
XML attributes and comments escaped by ``safe_names``; it is parsed before it is written
and compiled before it is reported, and a failure carries MuJoCo's message.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from simgap.errors import InputError
from simgap.outputs import atomic_write_text
from simgap.safe_names import checked_xml, xml_attr, xml_comment


def pair_xml(
    model: Path,
    out: Path,
    pairs: Sequence[tuple[str, str]],
    friction: Sequence[float],
    condim: int,
    solref: Sequence[float],
    solimp: Sequence[float],
    name: str | None = None,
) -> str:
    """The patch MJCF text: one ``<pair>`` per (geom1, geom2), same numbers (see
    ``write_pair``)."""
    if len(friction) != 5:
        raise InputError(
            field="friction",
            expected="five numbers: sliding sliding torsional rolling rolling",
            got=list(friction),
        )
    if condim not in (1, 3, 4, 6):
        raise InputError(field="condim", expected="1, 3, 4 or 6", got=condim)
    if len(solref) != 2 or len(solimp) not in (3, 5):
        raise InputError(
            field="solref/solimp", expected="2 and 3 or 5 numbers", got=(list(solref), list(solimp))
        )

    def nums(v: Sequence[float]) -> str:
        return xml_attr(" ".join(f"{x:.6g}" for x in v))

    nm = f" name={xml_attr(name)}" if name and len(pairs) == 1 else ""
    return patch_xml(
        model,
        out,
        [
            f'<pair{nm} geom1={xml_attr(g1)} geom2={xml_attr(g2)} condim="{condim}" '
            f"friction={nums(friction)} solref={nums(solref)} solimp={nums(solimp)}/>"
            for g1, g2 in pairs
        ],
    )


def _rel(target: Path, out: Path) -> str:
    try:
        return os.path.relpath(target.resolve(), out.resolve().parent).replace(os.sep, "/")
    except ValueError as e:  # another drive: no relative path exists
        raise InputError(
            file=out,
            expected="a patch folder on the model's drive",
            got=str(target),
            fix="write the patch next to the model",
        ) from e


def patch_xml(model: Path, out: Path, pairs: Sequence[str], comment: str = "") -> str:
    """The patch MJCF around ready ``<pair .../>`` elements (relative paths only)."""
    dirs = _asset_dirs(model, out)
    comp = "".join(f" {k}={xml_attr(v)}" for k, v in dirs.items())
    note = f"  <!-- {xml_comment(comment)} -->\n" if comment else ""
    return (
        f"<mujoco model={xml_attr(model.stem + '_pair')}>\n"
        f"  <!-- written by simgap contact pair; the original is included unchanged -->\n"
        + note
        + f"  <include file={xml_attr(_rel(model, out))}/>\n"
        f"  <compiler{comp}/>\n"
        f"  <contact>\n" + "".join(f"    {p}\n" for p in pairs) + "  </contact>\n</mujoco>\n"
    )


def pair_entry(
    geom1: str,
    geom2: str,
    condim: int,
    friction: Sequence[float],
    solref: Sequence[float],
    solimp: Sequence[float],
) -> str:
    """One ``<pair>`` element."""

    def nums(v: Sequence[float]) -> str:
        return xml_attr(" ".join(f"{x:.6g}" for x in v))

    return (
        f'<pair geom1={xml_attr(geom1)} geom2={xml_attr(geom2)} condim="{condim}" '
        f"friction={nums(friction)} solref={nums(solref)} solimp={nums(solimp)}/>"
    )


def _asset_dirs(model: Path, out: Path) -> dict[str, str]:
    """The original's mesh/texture folders, relative to the patch's folder."""
    from simgap.contact.lint import parse_includes, walk_elements

    base = model.resolve().parent
    found: dict[str, str] = {}
    for top in parse_includes(model, None, model.parent):
        for el in walk_elements(top):
            if el.tag == "compiler":
                for key in ("assetdir", "meshdir", "texturedir"):
                    if key in el.attrs:
                        found[key] = el.attrs[key]
    asset = found.get("assetdir", "")
    return {k: _rel(base / found.get(k, asset), out) or "." for k in ("meshdir", "texturedir")}


def _not_the_model(model: str | Path, out: str | Path) -> tuple[Path, Path]:
    """(model, out) as paths, where ``out`` is not the model itself.

    Raises:
        InputError: the patch would overwrite the model.
    """
    model, out = Path(model), Path(out)
    if out.resolve() == model.resolve():
        raise InputError(
            file=out,
            expected="a new file for the patch",
            got="the original model",
            fix="name another output file",
        )
    return model, out


def write_pair(
    model: str | Path,
    out: str | Path,
    geom1: str | Sequence[str],
    geom2: str | Sequence[str],
    *,
    friction: Sequence[float],
    condim: int = 4,
    solref: Sequence[float] = (0.02, 1.0),
    solimp: Sequence[float] = (0.9, 0.95, 0.001, 0.5, 2.0),
    name: str | None = None,
) -> Path:
    """Write the patch and check that it compiles (``geom1`` and ``geom2`` may list
    several geoms: one pair for each combination, e.g. both finger pads against the
    object).

    Raises:
        InputError: the output would overwrite the model, a geom is unknown (valid names
            listed), or the patch does not compile (MuJoCo's message, with the file).
    """
    from simgap.sim.model import load_model, names

    model, out = _not_the_model(model, out)
    base = load_model(model)
    valid = names(base, "geom")
    firsts = [geom1] if isinstance(geom1, str) else list(geom1)
    others = [geom2] if isinstance(geom2, str) else list(geom2)
    for g in [*firsts, *others]:
        if g not in valid:
            from simgap.errors import NameNotFoundError

            raise NameNotFoundError("geom", g, valid, file=model)
    text = pair_xml(
        model,
        out,
        [(a, b) for a in firsts for b in others if a != b],
        friction,
        condim,
        solref,
        solimp,
        name,
    )
    return write_checked(model, out, text)


def write_checked(model: str | Path, out: str | Path, text: str) -> Path:
    """Write patch text and check that it compiles (removed again when it does not)."""
    from simgap.sim.model import load_model

    model, out = _not_the_model(model, out)
    checked_xml(text, out.name)  # a name cannot break the file: parsed before it is written
    atomic_write_text(out, text)
    try:
        load_model(out)
    except InputError as e:
        out.unlink(missing_ok=True)
        raise InputError(
            file=out,
            expected="a pair patch that compiles",
            got=e.got,
            fix="write the patch beside the original model, so that its "
            "relative asset paths resolve",
        ) from e
    return out
