"""The layers run one way: a walk over every module's imports (``ast``, no third-party tool).

values at the bottom; ``sim/`` and ``fit/`` above them; readers (``evidence/``) and the methods
above those, neither importing the other; ``branches/`` above both; the ladder and diagnose above
the branches; the CLI on top. A module may import its own package, anything in a lower layer, and
another unit of its own layer, except that a reader and a method never import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "simgap"

VALUES = {"errors", "units", "series", "finding", "figures", "rig", "outputs", "instrument",
          "values", "_version", "validate", "safe_names"}
ENGINE = {"sim", "fit"}
READERS = {"evidence", "maniskill"}
METHODS = {"actuator", "contact", "appearance", "body", "episodes", "plumbing", "evaluation",
           "randomize", "export", "calibration", "latency", "controller"}
BRANCHES = {"branches", "report", "demo", "fakearm", "rig.init"}
LADDER = {"ladder", "diagnose", "fleet", "selftest"}
TOP = {"cli", "__main__", "__init__"}

LAYER = {**{u: 0 for u in VALUES}, **{u: 1 for u in ENGINE}, **{u: 2 for u in READERS | METHODS},
         **{u: 3 for u in BRANCHES}, **{u: 4 for u in LADDER}, **{u: 5 for u in TOP}}
"""Layer of each top-level unit of the package (a module or a subpackage); a dotted key
(``rig.init``) is a sub-unit that sits at its own layer, apart from the rest of its package."""


def _unit(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 2 and ".".join(parts[1:3]) in LAYER:
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 else "__init__"


def _imports() -> list[tuple[str, str, int, str]]:
    """Every ``simgap`` import, at module level or inside a function, as
    (file, importer unit, line, imported module)."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        importer = _unit(module) if module != "simgap" else "__init__"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name == "simgap" or name.startswith("simgap."):
                    out.append((str(path.relative_to(SRC.parent)), importer, node.lineno, name))
    return out


def _breaks(importer: str, imported: str) -> bool:
    """Whether an import from unit ``importer`` of unit ``imported`` runs the wrong way."""
    if imported == importer or importer in TOP:
        return False
    if LAYER[imported] > LAYER[importer]:
        return True
    if imported == "__init__":
        return True  # the public face sits on top: nothing below may import it
    return (importer in READERS and imported in METHODS) or (
        importer in METHODS and imported in READERS)


def test_every_unit_has_a_layer() -> None:
    units = {p.stem if p.is_file() else p.name for p in SRC.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    missing = sorted(units - set(LAYER))
    assert not missing, f"give these parts of the package a layer in this test: {missing}"


def test_the_rule_itself() -> None:
    assert _breaks("sim", "actuator") and _breaks("contact", "evidence")
    assert _breaks("evidence", "plumbing") and _breaks("branches", "ladder")
    assert _breaks("demo", "__init__") and _breaks("series", "sim")
    assert not _breaks("branches", "demo") and not _breaks("series", "errors")
    assert not _breaks("actuator", "episodes") and not _breaks("cli", "diagnose")
    assert not _breaks("fit", "sim") and not _breaks("sim", "fit")
    assert _breaks("rig", "rig.init") and not _breaks("rig.init", "rig")
    assert _unit("simgap.rig.init") == "rig.init" and _unit("simgap.rig.load") == "rig"


def test_imports_run_one_way() -> None:
    bad = []
    for path, importer, line, name in _imports():
        imported = _unit(name) if name != "simgap" else "__init__"
        if _breaks(importer, imported):
            bad.append(f"{path}:{line} imports {name} ({importer} layer {LAYER[importer]} -> "
                       f"{imported} layer {LAYER[imported]})")
    assert not bad, "imports that break the layers:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", sorted(READERS | METHODS))
def test_readers_and_methods_do_not_meet(package: str) -> None:
    other = METHODS if package in READERS else READERS
    hits = [f"{p}:{ln} imports {n}" for p, u, ln, n in _imports()
            if u == package and _unit(n) in other]
    assert not hits, "\n".join(hits)
