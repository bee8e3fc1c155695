"""A Power Shield fixture the board could not run is refused before anything starts: one
line naming the file and the field, exit code 2."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.bad_input import assert_refused


@pytest.mark.parametrize(("overrides", "message"), [
    ({"instrument.format": "ascii_dec"},
     'instrument.format: ascii_dec streams at most 5000 Hz without a time limit, not 100000 '
     'Hz; use "bin_hexa" or a lower sample_rate_hz'),
    ({"instrument.supply_v": 5.0},
     "instrument.supply_v: must be between 1.8 and 3.3 V (the shield's supply range)"),
    ({"instrument.sample_rate_hz": 3000},
     "instrument.sample_rate_hz: must be one of 100000, 50000, 20000, 10000, 5000, 2000, 1000, "
     "500, 200, 100, 50, 20, 10, 5, 2, 1 Hz (the shield's freq values)"),
])
def test_a_setting_the_board_cannot_take_is_one_line(
        sim_fixture: Callable[..., Path], overrides: dict[str, object], message: str,
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    fixture = sim_fixture(base="sim-lpm01a.toml", to=tmp_path / "in" / "bench.toml",
                          **overrides)
    work = tmp_path / "work"
    work.mkdir()
    assert_refused(["run", "-f", str(fixture), "--op", "sha256"], f"{fixture}: {message}",
                   work, capsys, monkeypatch)
