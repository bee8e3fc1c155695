"""The window of an Otii 3 project marked in its UART log (``rx``): ``events.db``, the SQLite
table ``event(id, time, data)`` with the time in µs from the recording's start, as a published
analysis reads it from real Otii Arc projects (github.com/nreinoso23/floodnet-energy-cadence,
``scripts/common_otii.py``). `rig analyze --uart-start TEXT --uart-stop TEXT` finds the
windows between the marks, energies equal to numpy on the same samples to 1e-9; the GPI
channels (``digital``, no stated layout) and a CSV export are refused saying what to do."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.cli import rig_streams
from support.otii3 import uart_log_measurement, write_otii3, write_uart_log

from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture

RATE = 50_000
VOLT = 3.3
#: The windows the log marks, µs from the recording's start (between samples, 20 µs apart).
WINDOWS_US = ((160_010, 310_010), (500_007, 624_689), (888_883, 1_040_001))
START, STOP = "BENCH START", "BENCH STOP"
#: The log as a board prints it: the marks among other lines, a stop before any start and a
#: second start inside a window (both ignored), control characters, a line stored as text,
#: bytes that are not UTF-8, a lower-case look-alike.
ROWS: list[tuple[int, bytes | str]] = [
    (5_000, b"*** Booting Zephyr OS ***\r\n"), (100_000, b"BENCH STOP\r\n"),
    (160_010, b"BENCH START n=100\r\n"), (200_000, b"\r\n"), (250_000, b"BENCH START n=100"),
    (310_010, b"BENCH STOP\r\n"), (500_007, b"\tBENCH START n=100\r\n"),
    (624_689, b"BENCH STOP"), (700_000, b"bench start n=100"), (888_883, "BENCH START n=100"),
    (1_040_001, b"BENCH STOP \xff\r\n"),
]


def _high(n: int, offset_us: float = 0.0) -> np.ndarray:
    """Sample k (at k / RATE s) lies inside a marked window: start <= t < stop."""
    t_us = np.arange(n) * (1e6 / RATE)
    high = np.zeros(n, dtype=bool)
    for a, b in WINDOWS_US:
        high |= (t_us >= a + offset_us) & (t_us < b + offset_us)
    return high


def _signals(n: int = 60_000) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    high = _high(n)
    mc = np.where(high, 7.25e-3, 0.3e-3) + rng.normal(0, 5e-6, n)
    mv = VOLT + rng.normal(0, 1e-4, n)
    return {"mc": mc.astype("<f4"), "mv": mv.astype("<f4")}


def _project(tmp_path: Path, rows: list[tuple[int, bytes | str]] = ROWS,
             offset_us: float = 0.0) -> Path:
    stub = write_otii3(tmp_path, _signals(), RATE, extra=[uart_log_measurement(offset_us)])
    write_uart_log(tmp_path, rows).close()
    return stub


def _numpy_windows(signals: dict[str, np.ndarray]) -> list[float]:
    """Each marked window's energy by numpy alone: v * i summed over the samples at or after
    the start mark and before the stop mark, times the period."""
    power = signals["mc"].astype(np.float64) * signals["mv"].astype(np.float64)
    first = [(-(-a * RATE // 1_000_000), -(-b * RATE // 1_000_000)) for a, b in WINDOWS_US]
    return [float(np.sum(power[a:b])) / RATE for a, b in first]


def test_rig_analyze_takes_the_windows_the_uart_log_marks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    stub = _project(tmp_path)
    code, out, err = rig_streams(monkeypatch, capsys, "analyze", str(stub), "--uart-start",
                                 START, "--uart-stop", STOP, "--json")
    assert code == 0, err
    windows = json.loads(out)["windows"]
    assert [w["energy_j"] for w in windows] == pytest.approx(_numpy_windows(_signals()),
                                                             rel=1e-9)


def test_the_marks_become_the_trigger_of_every_sample_in_any_chunking(tmp_path: Path) -> None:
    """Chunks of 999 samples carry the same trigger as one chunk: the level at each sample's
    time on the project's timeline (the log's offset, 100 µs here, moves its marks)."""
    stub = _project(tmp_path, offset_us=100.0)
    for block in (999, 1 << 20):
        capture = open_capture(stub, CaptureOptions(uart_start=START, uart_stop=STOP,
                                                    chunk_samples=block))
        logic = np.concatenate([c.logic for c in capture.chunks()])
        np.testing.assert_array_equal(logic, _high(60_000, offset_us=100.0).astype(np.uint8))


def test_lines_still_in_the_write_ahead_log_are_read_and_the_project_left_alone(
        tmp_path: Path) -> None:
    """Otii leaves its log in WAL mode: a project copied before a checkpoint holds its lines
    in ``events.db-wal`` only. They are read (from a copy: the project's files are unchanged)."""
    stub = write_otii3(tmp_path, _signals(), RATE, extra=[uart_log_measurement()])
    writer = write_uart_log(tmp_path, ROWS)
    try:
        folder = tmp_path / "data" / "data" / "project" / "blob-rx"
        before = {p.name: p.read_bytes() for p in folder.iterdir()}
        assert before["events.db-wal"]
        capture = open_capture(stub, CaptureOptions(uart_start=START, uart_stop=STOP))
        logic = np.concatenate([c.logic for c in capture.chunks()])
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    finally:
        writer.close()
    np.testing.assert_array_equal(logic, _high(60_000).astype(np.uint8))


@pytest.mark.parametrize(("rows", "extra", "options", "error", "message"), [
    (ROWS, None, {"uart_start": "NO SUCH LINE", "uart_stop": STOP}, ChannelError,
     r"trigger: no line of the UART log \(rx, 11 rows\) starts with 'NO SUCH LINE'"),
    (None, [], {"uart_start": START, "uart_stop": STOP}, ChannelError,
     r"trigger: no UART log 'rx' in the recording \(channels: mc, mv\): enable the UART"),
    (None, None, {"uart_start": START, "uart_stop": STOP}, CaptureError,
     r"the UART log \(rx\) has no events.db in .*blob-rx"),
    (ROWS, None, {"trigger": "rx"}, ChannelError,
     r"trigger: the UART log \('rx'\) is a log of text: mark the windows in it with "
     r"--uart-start TEXT --uart-stop TEXT"),
    (ROWS, None, {}, ChannelError,
     r"trigger: name the analog input wired to the trigger GPIO, e.g. --trigger av "
     r"--trigger-level 1.65 or mark the windows in the UART log with --uart-start TEXT "
     r"--uart-stop TEXT \(channels: mc, mv, rx\)"),
    (None, [{"measurement": {"id": "g", "source": {"name": "gpi1", "type": "digital",
                                                    "device": "dev-1"}}, "offset": 0}],
     {}, ChannelError,
     r"trigger: GPI1 \('gpi1'\) is stored as 'digital', whose layout no published source "
     r"documents .*\(--trigger av --trigger-level 1.65\), or print a line at each window "
     r"edge on the UART Otii logs \(--uart-start TEXT --uart-stop TEXT\); the channels read "
     r"as samples here: mc, mv"),
])
def test_what_it_cannot_mark_is_one_error_naming_the_file(
        tmp_path: Path, rows: list[tuple[int, bytes | str]] | None,
        extra: list[dict[str, object]] | None, options: dict[str, str],
        error: type[Exception], message: str) -> None:
    stub = write_otii3(tmp_path, _signals(2000), RATE,
                       extra=[uart_log_measurement()] if extra is None else extra)
    if rows is not None:
        write_uart_log(tmp_path, rows).close()
    with pytest.raises(error, match=message) as err:
        open_capture(stub, CaptureOptions(**options))
    assert str(stub) in str(err.value)


def test_a_damaged_log_database_is_refused(tmp_path: Path) -> None:
    stub = write_otii3(tmp_path, _signals(2000), RATE, extra=[uart_log_measurement()])
    folder = tmp_path / "data" / "data" / "project" / "blob-rx"
    folder.mkdir(parents=True)
    (folder / "events.db").write_bytes(b"not a database" * 100)
    with pytest.raises(CaptureError, match=r"is not the table event\(id, time, data\) Otii "
                                           r"writes"):
        open_capture(stub, CaptureOptions(uart_start=START, uart_stop=STOP))


def test_both_texts_are_needed() -> None:
    with pytest.raises(ValueError, match="give both --uart-start and --uart-stop"):
        CaptureOptions(uart_start=START)
    with pytest.raises(ValueError, match="must hold text other than spaces"):
        CaptureOptions(uart_start=" ", uart_stop=STOP)


def test_a_csv_export_asked_for_uart_marks_says_to_analyse_the_project(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "Main current - Arc.csv"
    export.write_text('"Timestamp","Value"\n0.000000,0.001\n0.000250,0.001\n')
    code, out, err = rig_streams(monkeypatch, capsys, "analyze", str(export), "--uart-start",
                                 START, "--uart-stop", STOP)
    assert code == 2 and not out
    assert err.startswith(f"rig: error: {export}: trigger: the UART log is read from the "
                          "saved project") and err.count("\n") == 1
    assert "--uart-start/--uart-stop" in err


def test_a_csv_export_without_a_trigger_names_the_channels_exported_beside_it(
        tmp_path: Path) -> None:
    """Otii's CSV export holds no trigger of its own: the refusal lists what is there."""
    for label in ("Main current", "Main voltage", "ADC voltage"):
        (tmp_path / f"{label} - Arc.csv").write_text('"Timestamp","Value"\n0.000000,0.001\n')
    (tmp_path / "Main current - Ace.csv").write_text('"Timestamp","Value"\n0.000000,0.001\n')
    with pytest.raises(ChannelError, match=r"--trigger 'ADC voltage' --trigger-level 1.65 "
                                           r"\(channels exported beside it: ADC voltage, "
                                           r"Main current, Main voltage\)$"):
        open_capture(tmp_path / "Main current - Arc.csv", CaptureOptions())


def test_a_log_copied_without_its_write_ahead_log_says_so(tmp_path: Path) -> None:
    """A 4 KB events.db whose table and rows Otii left in the WAL, copied without it."""
    stub = write_otii3(tmp_path, _signals(2000), RATE, extra=[uart_log_measurement()])
    writer = write_uart_log(tmp_path, ROWS)
    folder = tmp_path / "data" / "data" / "project" / "blob-rx"
    shell = (folder / "events.db").read_bytes()
    writer.close()
    for name in ("events.db-wal", "events.db-shm"):
        (folder / name).unlink(missing_ok=True)
    (folder / "events.db").write_bytes(shell)
    with pytest.raises(CaptureError, match=r"no such table: event \(no events.db-wal beside "
                                           r"it: Otii may keep the whole log there"):
        open_capture(stub, CaptureOptions(uart_start=START, uart_stop=STOP))
