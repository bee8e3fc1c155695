"""Collecting the tests imports no heavy library: every `make check` worker (pytest-xdist)
collects every test file, so a module-level import of scipy.stats (~2 s), statsmodels,
matplotlib (~1 s) or Playwright is paid by each worker, even one that runs none of the tests
that use it. Those imports belong in the tests and fixtures that use them
(docs/performance.md, "The test suite's time")."""
from __future__ import annotations

import re

from support.paths import ROOT

#: Import prefixes a test module must not import at module level (TYPE_CHECKING aside).
HEAVY = ("scipy", "statsmodels", "matplotlib", "playwright", "support.browser",
         "energyrig.results.report.figures")
#: A module-level import (at column 0: one under ``if TYPE_CHECKING:`` or in a function is
#: indented) of a name of :data:`HEAVY`. A line scan, not a parse: ~200 files in a few ms.
_HEAVY_IMPORT = re.compile(r"^(?:import|from) ((?:%s)(?:\.[\w.]+)?)\b" %
                           "|".join(re.escape(h) for h in HEAVY), re.M)


def _top_level_heavy(text: str) -> list[str]:
    """The heavy modules a file's text imports when the file is imported."""
    return _HEAVY_IMPORT.findall(text)


def test_no_test_module_imports_a_heavy_library_at_collection() -> None:
    found = [f"{path.relative_to(ROOT)}: {name}"
             for path in sorted((ROOT / "tests").rglob("test_*.py"))
             for name in _top_level_heavy(path.read_text(encoding="utf-8"))]
    assert not found, "imported at collection (move into the tests that use it):\n" + \
        "\n".join(found)


def test_the_check_finds_a_module_level_import_only() -> None:
    text = ("from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
            "import matplotlib.figure\nfrom scipy import stats\nimport scipyx\n"
            "from support.browser import chromium\nfrom support.synthetic import make_run\n"
            "if TYPE_CHECKING:\n    from playwright.sync_api import Page\n"
            "def test_x() -> None:\n    import statsmodels.api\n")
    assert _top_level_heavy(text) == ["matplotlib.figure", "scipy", "support.browser"]
