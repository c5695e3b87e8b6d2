"""Each branch's figures are a typed contract: outside the module that builds them, nothing
reads a figure by string key (a renamed key would silently drop a plot or a line), and every
record the registry lists belongs to one branch of the ladder.

The walk is over ``src/simgap`` with ``ast``: a subscript or ``.get`` with a string key on a
finding's ``figures``/``details`` (``f.figures["x"]``, ``d.get("figures")["x"]``, ``(f.get(
"figures") or {}).get("x")``, or a name bound to one of those in the same function).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "simgap"
PARTS = ("figures", "details")


def _is_part(node: ast.AST, bound: set[str]) -> bool:
    """Whether ``node`` evaluates to a finding's figures or details (JSON or typed)."""
    if isinstance(node, ast.BoolOp):
        return any(_is_part(v, bound) for v in node.values)
    if isinstance(node, ast.Attribute):
        return node.attr in PARTS
    if isinstance(node, ast.Name):
        return node.id in bound
    key = _str_key(node)
    return key in PARTS


def _str_key(node: ast.AST) -> str | None:
    """The string key of ``x["k"]`` or ``x.get("k", ...)``, else None."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.slice.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


def _container(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Subscript):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value
    return None


def string_key_reads(path: Path) -> list[str]:
    """Every figure read by string key in one module: 'line: code'."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hits: list[str] = []
    scopes = [
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    ] + [tree]
    seen: set[int] = set()
    for scope in scopes:
        bound: set[str] = set()
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and _is_part(node.value, bound):
                bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(scope):
            key, inner = _str_key(node), _container(node)
            if key is None or key in PARTS or inner is None or id(node) in seen:
                continue
            if _is_part(inner, bound):
                seen.add(id(node))
                hits.append(f"{node.lineno}: {ast.unparse(node)[:90]}")
    return hits


def test_the_walk_finds_what_it_looks_for(tmp_path: Path) -> None:
    p = tmp_path / "m.py"
    p.write_text(
        "def f(x, d):\n    a = x.figures['k']\n    fig = d.get('figures') or {}\n"
        "    b = fig.get('j')\n    c = (d.get('details') or {}).get('q')\n"
        "    e = x.figures.total_s\n    g = {'figures': 1}['figures']\n"
    )
    assert [h.split(":")[0] for h in string_key_reads(p)] == ["2", "4", "5"]


def test_no_figure_is_read_by_string_key_outside_its_branch() -> None:
    # finding.py holds the container; figures/ the records themselves
    allowed = {SRC / "finding.py"} | set((SRC / "figures").rglob("*.py"))
    hits = [
        f"{p.relative_to(SRC.parent)}:{h}"
        for p in sorted(SRC.rglob("*.py"))
        if p not in allowed
        for h in string_key_reads(p)
    ]
    assert not hits, "figures read by string key (read the typed record instead):\n" + "\n".join(
        hits
    )
