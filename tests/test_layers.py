"""The import graph runs one way (docs/ARCHITECTURE.md): cli → rig → {instruments, results,
fixtures, calibration, lab} → the bottom (domain, capture, config, units, bounded, errors); no
circle anywhere.

Every ``import`` counts, also those inside functions (a lazy import is still a dependency);
imports under ``if TYPE_CHECKING:`` count for the layers but not for circles (they never run)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "energyrig"

# What each part may import (besides itself and the bottom).
BOTTOM = {"energyrig", "energyrig.errors", "energyrig.domain", "energyrig.capture",
          "energyrig.config", "energyrig.units", "energyrig.bounded", "energyrig.flags"}
#: What the bottom may import: the errors, the bounded reader of configuration files
#: (itself importing only the errors), which config.py reads TOML through, and the flags
#: (importing nothing), whose rules domain.py applies.
BOTTOM_BASE = ("energyrig", "energyrig.errors", "energyrig.bounded", "energyrig.flags")
ALLOWED: dict[str, set[str]] = {
    "instruments": set(),
    "results": set(),
    "fixtures": {"instruments"},
    "calibration": {"instruments", "fixtures", "results"},
    "lab": {"fixtures", "calibration"},
    "rig": {"instruments", "results", "fixtures", "calibration", "lab"},
    "cli": {"rig", "instruments", "results", "fixtures", "calibration", "lab"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    """The import nodes inside ``if TYPE_CHECKING:`` blocks."""
    return {inner for node in ast.walk(tree)
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
            for stmt in node.body for inner in ast.walk(stmt)}


def _imports(path: Path, runtime: bool = False) -> set[str]:
    """The energyrig modules ``path`` imports (``from a import b`` counts ``a.b`` when that
    is a module, else ``a``); ``runtime``: without those under ``if TYPE_CHECKING:``."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree) if runtime else set()
    for node in ast.walk(tree):
        if node in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("energyrig"))
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("energyrig"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else node.module)
    return found


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: _imports(path) - {name} for name, path in MODULES.items()}
RUNTIME = {name: _imports(path, runtime=True) - {name} for name, path in MODULES.items()}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and module not in BOTTOM else "bottom"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_run_one_way(module: str) -> None:
    part = _part(module)
    wrong = []
    for target in GRAPH[module]:
        to = _part(target)
        if to in ("bottom", part):
            if part == "bottom" and target not in BOTTOM_BASE:
                wrong.append(target)  # the bottom imports nothing above errors
            continue
        if to not in ALLOWED.get(part, set()):
            wrong.append(target)
    assert not wrong, f"{module} ({part}) must not import {sorted(wrong)}"


def test_the_energy_math_knows_no_instrument() -> None:
    assert not any(t.startswith("energyrig.instruments") for t in GRAPH["energyrig.rig.energy"])


def test_no_circle() -> None:
    """Depth-first search for a cycle among the modules."""
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(RUNTIME.get(node, ())):
            if nxt not in RUNTIME:
                continue
            if state.get(nxt) == 1:
                circle = path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
                pytest.fail(f"import circle: {' -> '.join(circle)}")
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(RUNTIME):
        if module not in state:
            visit(module, [module])
