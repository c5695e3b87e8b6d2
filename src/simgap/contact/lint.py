"""``simgap contact lint MODEL``: contact settings that do nothing, defaults, overrides.

The MJCF text is parsed with line numbers (``<include>`` files followed, relative to the
main file's folder, as MuJoCo does), default classes are resolved (an element's ``class``,
else its nearest body's ``childclass``, up the class tree), and each collidable geom and
each ``<pair>`` is checked for:

- friction coefficients that do nothing because of ``condim`` (torsional needs condim >= 4,
  rolling needs condim 6);
- contact parameters left at MuJoCo's defaults (friction 1 0.005 0.0001, solref 0.02 1,
  solimp 0.9 0.95 0.001 0.5 2);
- pairs that override their geoms' own settings (the geoms' values are ignored there);
- a geom friction its partners make inert: MuJoCo mixes two colliding geoms by priority
  (the higher one's values alone), then, at equal priority, takes the LARGER friction, so
  a pad set to 0.35 against a default 1.0 object acts as 1.0 (fix: an explicit pair);
- implausible values (sliding outside [0.05, 2], torsional > 0.05 m, rolling > 0.01 m,
  solref time constant under two physics steps, solimp outside (0, 1) or dmin > dmax).
"""

from __future__ import annotations

import math
import xml.parsers.expat
from dataclasses import dataclass, field
from pathlib import Path

from simgap.errors import InputError

DEFAULT_FRICTION = (1.0, 0.005, 0.0001)
DEFAULT_SOLREF = (0.02, 1.0)
DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)
DEFAULT_TIMESTEP = 0.002


@dataclass
class Element:
    """One parsed XML element with where it came from."""

    tag: str
    attrs: dict[str, str]
    file: Path
    line: int
    parent: Element | None = None
    children: list[Element] = field(default_factory=list)


@dataclass(frozen=True)
class Problem:
    """One lint finding: where, what and how to fix it."""

    file: str
    line: int
    element: str
    problem: str
    fix: str

    def to_dict(self) -> dict[str, object]:
        """``{"file", "line", "element", "problem", "fix"}``."""
        return {
            "file": self.file,
            "line": self.line,
            "element": self.element,
            "problem": self.problem,
            "fix": self.fix,
        }


def parse_includes(
    path: Path, parent: Element | None, root_dir: Path, depth: int = 0
) -> list[Element]:
    """The top elements of an MJCF file with its ``<include>`` files read in place (paths
    relative to ``root_dir``, at most 20 deep)."""
    if depth > 20:
        raise InputError(file=path, expected="includes that end", got="an include cycle")
    if not path.is_file():
        raise InputError(
            file=path,
            expected="an MJCF file",
            got="no such file",
            fix="check the path (includes are relative to the main model)",
        )
    parser = xml.parsers.expat.ParserCreate()
    stack: list[Element] = []
    tops: list[Element] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        el = Element(
            tag, dict(attrs), path, parser.CurrentLineNumber, stack[-1] if stack else parent
        )
        if stack:
            stack[-1].children.append(el)
        else:
            tops.append(el)
        stack.append(el)
        if tag == "include" and "file" in attrs:
            inc = parse_includes(root_dir / attrs["file"], el, root_dir, depth + 1)
            for top in inc:  # the included <mujoco>'s children join the includer
                for ch in top.children:
                    ch.parent = el
                    el.children.append(ch)

    def end(tag: str) -> None:
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(path.read_bytes(), True)
    except xml.parsers.expat.ExpatError as e:
        raise InputError(
            file=path, field=f"line {e.lineno}", expected="well-formed XML", got=str(e)
        ) from e
    return tops


def walk_elements(el: Element) -> list[Element]:
    """``el`` and every element below it, depth first."""
    out = [el]
    for ch in el.children:
        out.extend(walk_elements(ch))
    return out


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in text.split())


class _Defaults:
    def __init__(self, root: Element) -> None:
        self.classes: dict[str, tuple[str | None, dict[str, dict[str, str]]]] = {}
        for el in walk_elements(root):
            if el.tag == "default":
                name = el.attrs.get("class", "main")
                parent = el.parent
                pname = (
                    parent.attrs.get("class", "main")
                    if parent is not None and parent.tag == "default"
                    else None
                )
                tags = {ch.tag: ch.attrs for ch in el.children if ch.tag != "default"}
                self.classes[name] = (pname, tags)

    def lookup(self, el: Element, attr: str) -> tuple[str | None, Element | None]:
        """(value, where it was set) of an attribute, following classes; None if unset."""
        if attr in el.attrs:
            return el.attrs[attr], el
        cls = el.attrs.get("class")
        p = el.parent
        while cls is None and p is not None:
            if p.tag == "body" and "childclass" in p.attrs:
                cls = p.attrs["childclass"]
            p = p.parent
        cls = cls or "main"
        seen = set()
        while cls is not None and cls not in seen:
            seen.add(cls)
            parent, tags = self.classes.get(cls, (None, {}))
            if attr in tags.get(el.tag, {}):
                return tags[el.tag][attr], None
            cls = parent if parent is not None else ("main" if cls != "main" else None)
        return None, None


def _name(el: Element) -> str:
    n = el.attrs.get("name")
    if el.tag == "pair" and n is None:
        n = f"{el.attrs.get('geom1', '?')}|{el.attrs.get('geom2', '?')}"
    return f"{el.tag} '{n}'" if n else el.tag


def lint_model(path: str | Path) -> list[Problem]:
    """Lint the contacts of an MJCF file; see the module docstring. Never edits the file."""
    path = Path(path)
    tops = parse_includes(path, None, path.parent)
    if not tops or tops[0].tag != "mujoco":
        raise InputError(
            file=path,
            expected="an MJCF file with a <mujoco> root",
            got=tops[0].tag if tops else "nothing",
        )
    root = tops[0]
    defaults = _Defaults(root)
    timestep = DEFAULT_TIMESTEP
    for el in walk_elements(root):
        if el.tag == "option" and "timestep" in el.attrs:
            timestep = float(el.attrs["timestep"])
    problems: list[Problem] = []
    geoms = {}
    collidable: list[Element] = []
    for el in walk_elements(root):
        if el.tag == "geom" and el.parent is not None and el.parent.tag != "default":
            if "name" in el.attrs:
                geoms[el.attrs["name"]] = el
            contype, _ = defaults.lookup(el, "contype")
            conaff, _ = defaults.lookup(el, "conaffinity")
            if (contype or "1") == "0" and (conaff or "1") == "0":
                continue
            collidable.append(el)
            problems.extend(_check(el, defaults, timestep))
        elif el.tag == "pair":
            problems.extend(_check(el, defaults, timestep))
            problems.extend(_override(el, geoms, defaults))
    paired = {
        frozenset((el.attrs.get("geom1", ""), el.attrs.get("geom2", "")))
        for el in walk_elements(root)
        if el.tag == "pair"
    }
    problems.extend(_inert(collidable, defaults, paired))
    return problems


def _body(el: Element) -> Element | None:
    p = el.parent
    while p is not None and p.tag != "body":
        if p.tag == "worldbody":
            return None
        p = p.parent
    return p


def _can_touch(a: Element, b: Element, defaults: _Defaults) -> bool:
    """Whether MuJoCo's dynamic filter lets two geoms collide (bitmasks, bodies)."""
    ba, bb = _body(a), _body(b)
    if ba is bb or (ba is not None and _body(ba) is bb) or (bb is not None and _body(bb) is ba):
        return False  # same body, world-world, or parent-child (filtered by default)

    def bits(el: Element, attr: str) -> int:
        v, _ = defaults.lookup(el, attr)
        return int(v) if v is not None else 1

    return bool(
        bits(a, "contype") & bits(b, "conaffinity") or bits(b, "contype") & bits(a, "conaffinity")
    )


def _inert(geoms: list[Element], defaults: _Defaults, paired: set[frozenset[str]]) -> list[Problem]:
    """A set geom friction that every partner it can touch makes inert (see docstring)."""
    out = []

    def prio(el: Element) -> int:
        v, _ = defaults.lookup(el, "priority")
        return int(v) if v is not None else 0

    def fric(el: Element) -> float:
        v, _ = defaults.lookup(el, "friction")
        return _floats(v)[0] if v else DEFAULT_FRICTION[0]

    for g in geoms:
        fs, _ = defaults.lookup(g, "friction")
        if fs is None:
            continue
        name = g.attrs.get("name", "")
        why = []
        partners = [
            h
            for h in geoms
            if h is not g
            and _can_touch(g, h, defaults)
            and frozenset((name, h.attrs.get("name", ""))) not in paired
        ]
        for h in partners:
            hn = h.attrs.get("name", "?")
            if prio(h) > prio(g):
                why.append(f"'{hn}' (priority {prio(h)} > {prio(g)}: its values alone)")
            elif prio(h) == prio(g) and fric(h) > fric(g):
                why.append(f"'{hn}' ({fric(h):g}: equal priority takes the larger)")
        if partners and len(why) == len(partners):
            out.append(
                _p(
                    g,
                    f"sliding friction {fric(g):g} is inert: every geom it can "
                    f"touch overrides it: "
                    + ", ".join(why[:3])
                    + (f" and {len(why) - 3} more" if len(why) > 3 else ""),
                    "declare an explicit <contact><pair> for the surfaces that "
                    "matter (simgap contact pair), or raise this geom's priority",
                )
            )
    return out


def _p(el: Element, problem: str, fix: str) -> Problem:
    return Problem(str(el.file), el.line, _name(el), problem, fix)


def _check(el: Element, defaults: _Defaults, timestep: float) -> list[Problem]:
    out: list[Problem] = []
    condim_s, _ = defaults.lookup(el, "condim")
    condim = int(condim_s) if condim_s else 3
    fric_s, _ = defaults.lookup(el, "friction")
    fric = _floats(fric_s) if fric_s else None
    if fric is not None and any(not (v >= 0 and math.isfinite(v)) for v in fric):
        out.append(
            _p(
                el,
                f"negative or non-finite friction {' '.join(f'{v:g}' for v in fric)}"
                " (MuJoCo takes it as given; no material has it)",
                "give every friction coefficient as a number >= 0",
            )
        )
    if fric is not None:
        tor = (
            fric[2]
            if el.tag == "pair" and len(fric) > 2
            else (fric[1] if el.tag != "pair" and len(fric) > 1 else None)
        )
        roll = (
            fric[3]
            if el.tag == "pair" and len(fric) > 3
            else (fric[2] if el.tag != "pair" and len(fric) > 2 else None)
        )
        if tor is not None and condim < 4 and tor != DEFAULT_FRICTION[1]:
            out.append(
                _p(
                    el,
                    f"torsional friction {tor:g} does nothing with condim={condim}",
                    'set condim="4" (or 6) to use it, or drop the coefficient',
                )
            )
        if roll is not None and condim < 6 and roll != DEFAULT_FRICTION[2]:
            out.append(
                _p(
                    el,
                    f"rolling friction {roll:g} does nothing with condim={condim}",
                    'set condim="6" to use it, or drop the coefficient',
                )
            )
        if not 0.05 <= fric[0] <= 2.0:
            out.append(
                _p(
                    el,
                    f"implausible sliding friction {fric[0]:g} (materials lie in about 0.05..2)",
                    "measure it: tilt until it slips, mu = tan(theta) (simgap.contact.converters)",
                )
            )
        if tor is not None and tor > 0.05:
            out.append(
                _p(
                    el,
                    f"implausible torsional friction {tor:g} m (a lever arm; patches are mm to cm)",
                    "torsional = mu * patch diameter / 3",
                )
            )
        if roll is not None and roll > 0.01:
            out.append(
                _p(
                    el,
                    f"implausible rolling friction {roll:g} m",
                    "rolling ~ the pad's deformation depth in metres",
                )
            )
    left = []
    n_f = 5 if el.tag == "pair" else 3
    pair_default = (1.0, 1.0, 0.005, 0.0001, 0.0001)
    if (
        fric is None
        or fric == (pair_default if el.tag == "pair" else DEFAULT_FRICTION)[: len(fric)]
        and len(fric) <= n_f
    ):
        left.append("friction 1 0.005 0.0001")
    sr_s, _ = defaults.lookup(el, "solref")
    si_s, _ = defaults.lookup(el, "solimp")
    if sr_s is None or _floats(sr_s) == DEFAULT_SOLREF:
        left.append("solref 0.02 1")
    if si_s is None or _floats(si_s) == DEFAULT_SOLIMP[: len(_floats(si_s))]:
        left.append("solimp 0.9 0.95 0.001 0.5 2")
    if left:
        out.append(
            _p(
                el,
                "contact left at MuJoCo's defaults: " + ", ".join(left),
                "measure and set them (e.g. 'simgap contact pair' with bench values)",
            )
        )
    if sr_s is not None:
        sr = _floats(sr_s)
        if sr and sr[0] > 0 and sr[0] < 2 * timestep:
            out.append(
                _p(
                    el,
                    f"solref time constant {sr[0]:g} s is under two physics steps "
                    f"({2 * timestep:g} s): the contact is stiffer than the "
                    "integrator can resolve",
                    f"use solref >= {2 * timestep:g}",
                )
            )
    if si_s is not None:
        si = _floats(si_s)
        if len(si) >= 2 and (not all(0 < v < 1 for v in si[:2]) or si[0] > si[1]):
            out.append(
                _p(
                    el,
                    f"implausible solimp {si_s}: dmin, dmax must lie in (0, 1) with dmin <= dmax",
                    'e.g. solimp="0.9 0.95 0.001"',
                )
            )
    return out


def _override(pair: Element, geoms: dict[str, Element], defaults: _Defaults) -> list[Problem]:
    out = []
    for attr in ("friction", "condim", "solref", "solimp"):
        if attr not in pair.attrs:
            continue
        for key in ("geom1", "geom2"):
            g = geoms.get(pair.attrs.get(key, ""))
            if g is None:
                continue
            val, _ = defaults.lookup(g, attr)
            if val is not None and val.split() != pair.attrs[attr].split():
                out.append(
                    _p(
                        pair,
                        f"overrides {attr} of geom '{g.attrs.get('name')}' "
                        f"({val} at {g.file.name}:{g.line} is ignored for this "
                        f"pair; the pair uses {pair.attrs[attr]})",
                        "keep one source of truth: set the value on the pair only, "
                        "or make the geom's match",
                    )
                )
    return out
