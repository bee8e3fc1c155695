"""Captures that must not end in a silent exit 0 (issue 20, items 11, 14, 15, 20, 21, 23,
24): outputs written over an input, gaps beside a window, a trigger without a window,
implausible quantities, an unreadable path, a CSV with a byte-order mark.

The rig runs in this process through its console-script entry point (``cli.app.main``), so
what is asserted is what an operator sees: the exit code and the one ``rig: error:`` line.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from energyrig.cli.app import main

PERIOD_S = 1e-5
CSV_HEAD = "time_s,current_a,voltage_v,trigger\n"


def _rows(n: int = 4000, high: tuple[int, int] = (2000, 2500), current: str = "2e-3",
          voltage: str = "3.0", times: list[float] | None = None) -> str:
    """CSV rows of ``n`` samples at 10 µs, the trigger high on samples ``high[0]..high[1]-1``
    (a window with 20 ms of idle before it)."""
    times = times if times is not None else [k * PERIOD_S for k in range(n)]
    return "".join(f"{t!r},{current},{voltage},{int(high[0] <= k < high[1])}\n"
                   for k, t in enumerate(times))


def _rig(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``rig ARGV`` as the console script does: exit code, stdout, stderr."""
    capsys.readouterr()
    old_argv = sys.argv
    sys.argv = ["rig", *map(str, argv)]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = old_argv
    out = capsys.readouterr()
    return code, out.out, out.err


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *expected: str,
             code: int = 2) -> str:
    """Assert ``rig ARGV`` stops with ``code`` and one ``rig: error:`` line holding every
    ``expected`` text; return the line."""
    got, _, err = _rig(argv, capsys)
    lines = [line for line in err.splitlines() if line.strip()]
    assert got == code, err
    assert len(lines) == 1 and lines[0].startswith("rig: error: "), err
    for text in expected:
        assert text in lines[0], lines[0]
    assert "Traceback" not in err
    return lines[0]


def _windows(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict]:
    code, out, err = _rig(["analyze", *argv, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)["windows"]


# -- item 24: a byte-order mark -------------------------------------------------------------

def test_a_csv_with_a_byte_order_mark_is_read(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    plain.write_text(CSV_HEAD + _rows(), encoding="utf-8")
    marked.write_text(CSV_HEAD + _rows(), encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    got = _windows([marked], capsys)
    assert len(got) == 1 and got == _windows([plain], capsys)


def test_a_power_profiler_export_with_a_byte_order_mark_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "".join(f"{k / 100:g},2000.000,{'1' if 2000 <= k < 2500 else '0'}0000000\n"
                   for k in range(4000))
    path = tmp_path / "export.csv"
    path.write_text("Timestamp(ms),Current(uA),D0-D7\n" + rows, encoding="utf-8-sig")
    got = _windows([path, "--voltage", "3.0"], capsys)
    assert len(got) == 1 and got[0]["samples"] == 500
