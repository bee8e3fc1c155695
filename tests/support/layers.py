"""The import graph of the package: every energyrig module and the energyrig modules it imports
(also inside functions and under ``if TYPE_CHECKING:``); and the source files parsed once per
test process (:func:`parsed`, :func:`nodes`) for every test that reads the code."""
from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from functools import cache, cached_property
from pathlib import Path

from support.paths import ROOT

SRC = ROOT / "src"
PACKAGE = SRC / "energyrig"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of the Python file ``path`` (shared: do not change it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of :func:`parsed` ``(path)``, in the order :func:`ast.walk` visits them."""
    return tuple(ast.walk(parsed(path)))


def _imports(path: Path) -> set[str]:
    """The energyrig modules ``path`` imports (``from a import b`` counts ``a.b`` when that
    is a module, else ``a``)."""
    found: set[str] = set()
    for node in nodes(path):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("energyrig"))
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("energyrig"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else node.module)
    return found


class _Graph(Mapping[str, set[str]]):
    """Each module → the energyrig modules it imports, parsed on first use (not when a test
    module imports this one: collection, on each pytest-xdist worker, would pay for it)."""

    @cached_property
    def _edges(self) -> dict[str, set[str]]:
        return {name: _imports(path) - {name} for name, path in MODULES.items()}

    def __getitem__(self, module: str) -> set[str]:
        return self._edges[module]

    def __iter__(self) -> Iterator[str]:
        return iter(self._edges)

    def __len__(self) -> int:
        return len(self._edges)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH: Mapping[str, set[str]] = _Graph()
