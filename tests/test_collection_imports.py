"""Collecting the tests imports no heavy library: every `make check` worker (pytest-xdist)
collects every test file, so a module-level import of scipy.stats (~2 s), statsmodels,
matplotlib (~1 s) or Playwright is paid by each worker, even one that runs none of the tests
that use it. Those imports belong in the tests and fixtures that use them
(docs/performance.md, "The test suite's time")."""
from __future__ import annotations

import ast
from pathlib import Path

from support.paths import ROOT

#: Import prefixes a test module must not import at module level (TYPE_CHECKING aside).
HEAVY = ("scipy", "statsmodels", "matplotlib", "playwright", "support.browser",
         "energyrig.results.report.figures")


def _top_level_imports(tree: ast.Module) -> list[str]:
    """The modules a file imports when it is imported (not under ``if TYPE_CHECKING:``)."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def test_no_test_module_imports_a_heavy_library_at_collection() -> None:
    found = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(ROOT)}: {name}" for name in _top_level_imports(tree)
                  if any(name == h or name.startswith(h + ".") for h in HEAVY)]
    assert not found, "imported at collection (move into the tests that use it):\n" + \
        "\n".join(found)


def test_the_check_finds_a_module_level_import(tmp_path: Path) -> None:
    tree = ast.parse("from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
                     "import matplotlib.figure\nfrom scipy import stats\n"
                     "if TYPE_CHECKING:\n    from playwright.sync_api import Page\n"
                     "def test_x() -> None:\n    import statsmodels.api\n")
    assert [n for n in _top_level_imports(tree) if n.split(".")[0] in
            ("matplotlib", "scipy", "playwright", "statsmodels")] == \
        ["matplotlib.figure", "scipy", "scipy.stats"]
