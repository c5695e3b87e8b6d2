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

VALUES = {
    "errors",
    "units",
    "series",
    "finding",
    "figures",
    "rig",
    "outputs",
    "instrument",
    "values",
    "_version",
    "validate",
    "safe_names",
}
ENGINE = {"sim", "fit"}
READERS = {"evidence", "maniskill"}
METHODS = {
    "actuator",
    "contact",
    "appearance",
    "body",
    "episodes",
    "plumbing",
    "evaluation",
    "randomize",
    "export",
    "calibration",
    "latency",
    "controller",
}
BRANCHES = {"branches", "report", "demo", "fakearm", "rig.init"}
LADDER = {"ladder", "diagnose", "fleet", "selftest"}
TOP = {"cli", "__main__", "__init__"}

LAYER = {
    **{u: 0 for u in VALUES},
    **{u: 1 for u in ENGINE},
    **{u: 2 for u in READERS | METHODS},
    **{u: 3 for u in BRANCHES},
    **{u: 4 for u in LADDER},
    **{u: 5 for u in TOP},
}
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
        importer in METHODS and imported in READERS
    )


def test_every_unit_has_a_layer() -> None:
    units = {
        p.stem if p.is_file() else p.name
        for p in SRC.iterdir()
        if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))
    }
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
            bad.append(
                f"{path}:{line} imports {name} ({importer} layer {LAYER[importer]} -> "
                f"{imported} layer {LAYER[imported]})"
            )
    assert not bad, "imports that break the layers:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", sorted(READERS | METHODS))
def test_readers_and_methods_do_not_meet(package: str) -> None:
    other = METHODS if package in READERS else READERS
    hits = [
        f"{p}:{ln} imports {n}" for p, u, ln, n in _imports() if u == package and _unit(n) in other
    ]
    assert not hits, "\n".join(hits)


# ---- one contract per branch: MuJoCo, cycles, private names, relative imports -------------


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    return ".".join(rel.parts).removesuffix(".__init__")


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}
"""Every module of the package: dotted name -> file."""


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` import names (a relative one resolved against the
    importing module's package)."""
    if node.level == 0:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements a module runs when it is imported (inside ``if`` and ``try`` too, not
    inside functions, classes or ``if TYPE_CHECKING:``)."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If) and not _type_checking(node):
            out += _module_level(node.body) + _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                out += _module_level(part)
        elif not isinstance(node, ast.If):
            out.append(node)
    return out


def _edges(module_level_only: bool) -> list[tuple[str, int, str, ast.stmt]]:
    """Every import of a ``simgap`` module, relative ones resolved: (importing module, line,
    imported module, the statement). ``from package import name`` imports the package and,
    where ``name`` is a submodule, that module too."""
    out = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = _module_level(tree.body) if module_level_only else list(ast.walk(tree))
        for node in nodes:
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                source = _resolve(module, node)
                targets = [source] + [
                    f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in MODULES
                ]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            out += [
                (module, node.lineno, t, node)
                for t in targets
                if t == "simgap" or t.startswith("simgap.")
            ]
    return out


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (its nodes in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_cycle_finder() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_between_units() -> None:
    """Module-level imports between top-level units form no cycle (an import inside a
    function runs later and is left out). The layer rule forbids cycles across layers; this
    catches the ones inside a layer, e.g. two methods importing each other."""
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for module, line, name, _ in _edges(module_level_only=True):
        a, b = _unit(module), _unit(name) if name != "simgap" else "__init__"
        if a != b:
            graph.setdefault(a, set()).add(b)
            where.setdefault((a, b), f"{MODULES[module].relative_to(SRC.parent)}:{line}")
    found = _cycle(graph)
    assert found is None, (
        "an import cycle between units: "
        + " -> ".join(found)
        + "\n"
        + "\n".join(
            f"  {a} -> {b}: {where[(a, b)]}" for a, b in zip(found, found[1:], strict=False)
        )
    )


def test_no_private_name_from_another_module() -> None:
    """``from simgap.x import _name`` reaches into another module's privates: what two
    modules share is public. A private module (``simgap.cli._app``) may be imported by the
    modules of its own package."""
    bad = []
    for module, line, name, node in _edges(module_level_only=False):
        if not isinstance(node, ast.ImportFrom) or name != _resolve(module, node):
            continue
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        for alias in node.names:
            target = f"{name}.{alias.name}"
            private_module = target in MODULES and target.rpartition(".")[0] == package
            if (
                alias.name.startswith("_")
                and not alias.name.startswith("__")
                and name != module
                and not private_module
            ):
                bad.append(
                    f"{MODULES[module].relative_to(SRC.parent)}:{line} imports "
                    f"{alias.name} from {name}"
                )
        hidden = [p for p in name.split(".")[1:] if p.startswith("_") and not p.startswith("__")]
        owner = name.rpartition(".")[0]
        inside = module == owner or module.startswith(owner + ".")
        if hidden and not inside:
            bad.append(
                f"{MODULES[module].relative_to(SRC.parent)}:{line} imports from the "
                f"private module {name}"
            )
    assert not bad, "private names imported across modules:\n" + "\n".join(bad)


def test_relative_imports_obey_the_layers() -> None:
    """``from .x import y`` is resolved and held to the same rule as an absolute import
    (``_imports`` above reads absolute ones only)."""
    bad = []
    for module, line, name, node in _edges(module_level_only=False):
        if isinstance(node, ast.ImportFrom) and node.level:
            importer = _unit(module) if module != "simgap" else "__init__"
            imported = _unit(name) if name != "simgap" else "__init__"
            if name not in MODULES and name.rpartition(".")[0] not in MODULES:
                bad.append(
                    f"{MODULES[module].relative_to(SRC.parent)}:{line}: {name} "
                    "is not a module of the package"
                )
            elif _breaks(importer, imported):
                bad.append(f"{MODULES[module].relative_to(SRC.parent)}:{line} imports {name}")
    assert not bad, "relative imports that break the layers:\n" + "\n".join(bad)


def test_relative_imports_are_resolved() -> None:
    """The resolution the test above relies on, on this package's own layout."""
    node = ast.parse("from .x import y\nfrom .. import z").body
    assert isinstance(node[0], ast.ImportFrom) and isinstance(node[1], ast.ImportFrom)
    assert _resolve("simgap.branches.latency", node[0]) == "simgap.branches.x"
    assert _resolve("simgap.branches", node[0]) == "simgap.branches.x"
    assert _resolve("simgap.branches.latency", node[1]) == "simgap"


def test_only_sim_imports_mujoco() -> None:
    """MuJoCo is imported in ``simgap/sim/`` alone: ``sim/__init__`` chooses the offscreen GL
    backend before the first ``import mujoco``, and every other layer reaches the physics
    through ``sim``'s functions (so a MuJoCo upgrade touches one package)."""
    bad = []
    for module, path in MODULES.items():
        if module == "simgap.sim" or module.startswith("simgap.sim."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            if any(n == "mujoco" or n.startswith("mujoco.") for n in names):
                bad.append(f"{path.relative_to(SRC.parent)}:{node.lineno}")
    assert not bad, "mujoco imported outside simgap/sim/:\n" + "\n".join(bad)
