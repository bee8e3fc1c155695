"""The bad-input harness (issue 11): run ``rig ARGV`` in this process as the console script
does, and assert it refused with exit code 2 and one ``rig: error:`` line, changing no file;
a good fixture and plan the cases spoil."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.fixtures import fixture_text

from energyrig.cli.app import main

GOOD_FIXTURE = fixture_text()
GOOD_PLAN = """seed = 1
fixture = "{fixture}"
[adaptive]
min_windows = 2
max_windows = 3
[[factors]]
op = ["sha256"]
payload_bytes = [64]
"""


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def run_rig(argv: list[str], capsys: pytest.CaptureFixture[str], cwd: Path) -> tuple[int, str]:
    """Run ``rig ARGV`` in ``cwd`` as the console script does; its exit code and stderr."""
    capsys.readouterr()
    old_argv = sys.argv
    sys.argv = ["rig", *argv]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = old_argv
    return code, capsys.readouterr().err


def assert_refused(argv: list[str], expected: str, tmp_path: Path,
                    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    code, err = run_rig(argv, capsys, tmp_path)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("rig: error: "), err
    assert expected in lines[0], lines[0]
    assert "Traceback" not in err
    assert snapshot(tmp_path) == before, "a refused command changed files"

