"""The import graph runs one way (docs/ARCHITECTURE.md): cli → rig → {instruments, results,
fixtures, calibration, lab} → energy → the bottom (domain, capture, config, units, bounded,
errors, opfamilies); no circle anywhere; only ``cli/`` draws (rich) or writes to the terminal.

Every ``import`` counts, also those inside functions (a lazy import is still a dependency)
and those under ``if TYPE_CHECKING:`` (a circle the type checker sees is a circle in the
design, even if it never runs)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.layers import GRAPH, MODULES, nodes

# What each part may import (besides itself and the bottom).
BOTTOM = {"energyrig", "energyrig.errors", "energyrig.domain", "energyrig.capture",
          "energyrig.config", "energyrig.units", "energyrig.bounded", "energyrig.opfamilies",
          "energyrig.flags"}
#: What the bottom may import: the errors, the bounded reader of configuration files
#: (itself importing only the errors), which config.py reads TOML through, and the flags
#: (importing nothing), whose rules domain.py applies.
BOTTOM_BASE = ("energyrig", "energyrig.errors", "energyrig.bounded", "energyrig.flags")
ALLOWED: dict[str, set[str]] = {
    # The energy of a window: what it needs of a bench and an instrument are its own
    # Protocols, so it imports only the bottom.
    "energy": set(),
    "instruments": set(),
    "results": {"energy"},
    "fixtures": {"instruments"},
    "calibration": {"instruments", "fixtures", "results", "energy"},
    "lab": {"fixtures", "calibration"},
    "rig": {"instruments", "results", "fixtures", "calibration", "lab", "energy"},
    "cli": {"rig", "instruments", "results", "fixtures", "calibration", "lab", "energy"},
}



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
    energy = [m for m in MODULES if m.startswith("energyrig.energy")]
    assert "energyrig.energy.windows" in energy
    assert not any(t.startswith("energyrig.instruments") for m in energy for t in GRAPH[m])


def test_no_circle() -> None:
    """Depth-first search for a cycle among the modules."""
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(GRAPH.get(node, ())):
            if nxt not in GRAPH:
                continue
            if state.get(nxt) == 1:
                circle = path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
                pytest.fail(f"import circle: {' -> '.join(circle)}")
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])


def _drawing(path: Path) -> list[str]:
    """Where ``path`` imports rich, calls ``print`` or touches ``sys.stdout``/``sys.stderr``
    (``line N: what``)."""
    found = []
    for node in nodes(path):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        found += [f"line {node.lineno}: import {n}" for n in names
                  if n == "rich" or n.startswith("rich.")]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "print":
            found.append(f"line {node.lineno}: print()")
        if isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr") and \
                isinstance(node.value, ast.Name) and node.value.id == "sys":
            found.append(f"line {node.lineno}: sys.{node.attr}")
    return found


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _part(m) != "cli"))
def test_only_the_cli_draws(module: str) -> None:
    """Presentation lives in ``cli/``: below it, code reports (events, return values,
    logging) and a program's handshake on stdout is written by its entry point in ``cli/``."""
    assert not _drawing(MODULES[module]), f"{module} draws: {_drawing(MODULES[module])}"
