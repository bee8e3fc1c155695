"""The fast tier (make check, ``-m "not slow and not pipeline"``) leaves out a test that drives
a browser (tests/support/tiers.py, PIPELINE_FIXTURES) without its module marking it."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from support.paths import ROOT


def test_a_test_that_requests_the_browser_is_left_out_of_the_fast_tier(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["support.tiers"]\n')
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""\
        import pytest

        @pytest.fixture(scope="module")
        def browser():
            return "a browser"

        def test_in_a_browser(browser):
            assert browser

        def test_unit():
            assert True
        """))
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA",
                           "--rootdir", str(tmp_path), "-m", "not slow and not pipeline",
                           str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, check=False,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "tests"),
                               "PYTHONDONTWRITEBYTECODE": "1"})
    assert "PASSED test_inner.py::test_unit" in done.stdout
    assert "test_in_a_browser" not in done.stdout
    assert "1 passed, 1 deselected" in done.stdout
