"""Captures that must not end in a silent exit 0 (issue 20, items 11, 14, 15, 20, 21, 23,
24): outputs written over an input, gaps beside a window, a trigger without a window,
implausible quantities, an unreadable path, a CSV with a byte-order mark.

The rig runs in this process through its console-script entry point (``cli.app.main``), so
what is asserted is what an operator sees: the exit code and the one ``rig: error:`` line.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import DATA

from energyrig.cli.app import main
from energyrig.instruments.base import RecordedCapture

PERIOD_S = 1e-5
CSV_HEAD = "time_s,current_a,voltage_v,trigger\n"


def _rows(n: int = 4000, high: tuple[int, int] = (2000, 2500), current: str = "2e-3",
          voltage: str = "3.0", times: list[float] | None = None,
          odd: dict[int, str] | None = None) -> str:
    """CSV rows of ``n`` samples at 10 µs, the trigger high on samples ``high[0]..high[1]-1``
    (a window with 20 ms of idle before it); ``odd`` gives some samples another current."""
    times = times if times is not None else [k * PERIOD_S for k in range(n)]
    odd = odd or {}
    return "".join(f"{t!r},{odd.get(k, current)},{voltage},{int(high[0] <= k < high[1])}\n"
                   for k, t in enumerate(times))


Rig = Callable[[list], tuple[int, str, str]]


@pytest.fixture
def rig(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Rig:
    """``rig(argv)`` runs ``rig ARGV`` as the console script does (which always ends in
    ``sys.exit``): its exit code, stdout and stderr."""
    def run(argv: list) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["rig", *map(str, argv)])
        capsys.readouterr()
        with pytest.raises(SystemExit) as stop:
            main()
        out = capsys.readouterr()
        return stop.value.code if isinstance(stop.value.code, int) else 1, out.out, out.err
    return run


def _refused(rig: Rig, argv: list, *expected: str, code: int = 2) -> str:
    """Assert ``rig ARGV`` stops with ``code`` and one ``rig: error:`` line holding every
    ``expected`` text; return the line."""
    got, _, err = rig(argv)
    lines = [line for line in err.splitlines() if line.strip()]
    assert got == code, err
    assert len(lines) == 1 and lines[0].startswith("rig: error: "), err
    for text in expected:
        assert text in lines[0], lines[0]
    assert "Traceback" not in err
    return lines[0]


def _windows(rig: Rig, argv: list) -> list[dict]:
    code, out, err = rig(["analyze", *argv, "--json"])
    assert code == 0, err
    return json.loads(out)["windows"]


# -- item 24: a byte-order mark -------------------------------------------------------------

def test_a_csv_with_a_byte_order_mark_is_read(tmp_path: Path,
                                              rig: Rig) -> None:
    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    plain.write_text(CSV_HEAD + _rows(), encoding="utf-8")
    marked.write_text(CSV_HEAD + _rows(), encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    got = _windows(rig, [marked])
    assert len(got) == 1 and got == _windows(rig, [plain])


def test_a_power_profiler_export_with_a_byte_order_mark_is_read(
        tmp_path: Path, rig: Rig) -> None:
    rows = "".join(f"{k / 100:g},2000.000,{'1' if 2000 <= k < 2500 else '0'}0000000\n"
                   for k in range(4000))
    path = tmp_path / "export.csv"
    path.write_text("Timestamp(ms),Current(uA),D0-D7\n" + rows, encoding="utf-8-sig")
    got = _windows(rig, [path, "--voltage", "3.0"])
    assert len(got) == 1 and got[0]["samples"] == 500


# -- item 11: no output over an input, no existing file replaced unless --force -------------

@pytest.fixture
def capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A good capture in a fresh working directory."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "cap.csv"
    path.write_text(CSV_HEAD + _rows(), encoding="utf-8")
    return path


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "force"])
@pytest.mark.parametrize("spelling", ["same", "dotted", "hard-link"])
def test_the_csv_output_never_replaces_the_capture(capture: Path, spelling: str,
                                                   force: list[str],
                                                   rig: Rig) -> None:
    before = capture.read_bytes()
    out = {"same": capture, "dotted": Path(".") / "." / capture.name,
           "hard-link": capture.with_name("link.csv")}[spelling]
    if spelling == "hard-link":
        out.hardlink_to(capture)
    _refused(rig, ["analyze", capture, "--csv", out, *force], "--csv",
             "an input of this command")
    assert capture.read_bytes() == before


def test_an_existing_output_file_is_replaced_only_with_force(
        capture: Path, rig: Rig) -> None:
    table = capture.with_name("table.csv")
    table.write_text("mine\n", encoding="utf-8")
    _refused(rig, ["analyze", capture, "--csv", table], f"{table}: --csv: the file exists",
             "--force")
    assert table.read_text(encoding="utf-8") == "mine\n"
    data = capture.with_name("cap-w01.json")
    data.write_text("mine\n", encoding="utf-8")
    _refused(rig, ["analyze", capture, "--csv", "new.csv", "--plot", "1", "--plot-dir", "."],
             f"{data.name}: --plot: the file exists")
    assert data.read_text(encoding="utf-8") == "mine\n"
    assert not capture.with_name("new.csv").exists(), "refused, yet the --csv file was written"
    code, _, err = rig(["analyze", capture, "--csv", table, "--force"])
    assert code == 0, err
    assert table.read_text(encoding="utf-8").startswith("window,start_s,")


def test_the_json_output_is_not_appended_to_the_capture(capture: Path) -> None:
    import subprocess
    before = capture.read_bytes()
    with capture.open("ab") as out:
        proc = subprocess.run([sys.executable, "-c", "from energyrig.cli.app import main; main()",
                               "analyze", str(capture), "--json"], stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "the standard output of --json is this input file" in proc.stderr
    assert capture.read_bytes() == before


def test_a_report_never_replaces_its_run_or_other_files(tmp_path: Path,
                                                        rig: Rig
                                                        ) -> None:
    from support.synthetic import make_run
    run = tmp_path / "run"
    make_run(run, reps=1, n_windows=2)
    tables = sorted(p.name for p in run.iterdir())
    for out in (run, tmp_path, run / "windows.parquet"):
        _refused(rig, ["report", run, "--out", out, "--csv"], f"{out}: --out",
                 "would delete the run")
        assert sorted(p.name for p in run.iterdir()) == tables
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work", encoding="utf-8")
    _refused(rig, ["report", run, "--out", mine, "--csv"], "holds files that are not a "
             "report (thesis.tex)", "--force")
    assert (mine / "thesis.tex").read_text(encoding="utf-8") == "years of work"


# -- item 21: an error of the machine names its file -------------------------------------

@pytest.mark.parametrize("option", [["--csv", "{bad}"], ["--plot", "1", "--plot-dir", "{bad}"]],
                         ids=["csv", "plot"])
def test_an_output_that_cannot_be_written_is_named(capture: Path, option: list[str],
                                                   rig: Rig) -> None:
    blocker = capture.with_name("blocker")
    blocker.write_text("a file, not a directory", encoding="utf-8")
    bad = blocker / "out"
    argv = ["analyze", capture, *(a.format(bad=bad) for a in option), "--force"]
    _refused(rig, argv, f"{bad}", "cannot write", code=1)


def test_writing_proc_version_names_it(  # Linux: the kernel refuses the write with EIO
capture: Path, rig: Rig) -> None:
    _refused(rig, ["analyze", capture, "--csv", "/proc/version", "--force"],
             "/proc/version: cannot write", code=1)


# -- item 23: implausible quantities ------------------------------------------------------

def _ppk2raw(path: Path, header: str = "vdd_mv=3000 sample_rate_hz=100000",
             logic_bit: int | None = 0) -> None:
    """A raw PPK2 stream: 2000 idle samples, 500 at 3 mA with logic bit ``logic_bit`` high
    (``None``: no bit ever high), 1500 idle."""
    import numpy as np

    from energyrig.instruments.ppk2.decode import encode_words
    from energyrig.instruments.ppk2.metadata import parse_metadata
    text = (DATA / "ppk2-metadata.txt").read_text()
    t = np.arange(4000)
    high = (t >= 2000) & (t < 2500)
    logic = 0 if logic_bit is None else high.astype(np.uint8) << logic_bit
    words = encode_words(np.where(high, 3e-3, 5e-6), parse_metadata(text), 3000, logic=logic)
    path.write_bytes(text.encode() + f"energyrig-ppk2-raw 1 {header}\n".encode()
                     + words.tobytes())


PLAUSIBILITY_CASES = [
    ("current-huge", "c.csv", {"odd": {2100: "1e308"}}, [], "current 1e+308 A is not plausible"),
    ("current-huge-negative", "c.csv", {"odd": {2100: "-1e308"}}, [],
     "current -1e+308 A is not plausible"),
    ("current-1e300", "c.csv", {"odd": {2100: "1e300"}}, [], "current 1e+300 A is not plausible"),
    ("voltage-huge", "c.csv", {"voltage": "2e5"}, [], "supply voltage 200000 V is not plausible"),
    ("voltage-all-zero", "c.csv", {"voltage": "0"}, [], "the supply voltage never exceeds 0.1 V"),
    ("time-huge", "c.csv", {"times": [k * 1e-3 if k < 3000 else 1e300 for k in range(4000)]}, [],
     "line 3002: column 'time_s': time stamp 1e+300 s is not plausible"),
    ("ppk2-rate-tiny", "c.ppk2raw", "vdd_mv=3000 sample_rate_hz=1e-300", [],
     "header field sample_rate_hz=1e-300: sample period 1e+300 s is not plausible"),
    ("ppk2-rate-huge", "c.ppk2raw", "vdd_mv=3000 sample_rate_hz=1e300", [],
     "sample period 1e-300 s is not plausible"),
    ("ppk2-vdd-huge", "c.ppk2raw", "vdd_mv=1e300 sample_rate_hz=100000", [],
     "header field vdd_mv: 1e+300 mV is not a PPK2's supply"),
    ("ppk2-voltage-option", "c.ppk2raw", "vdd_mv=3000 sample_rate_hz=100000", ["--voltage", "1e6"],
     "the supply given (--voltage): 1e+09 mV"),
]


@pytest.mark.parametrize(("name", "content", "argv", "expected"),
                         [c[1:] for c in PLAUSIBILITY_CASES],
                         ids=[c[0] for c in PLAUSIBILITY_CASES])
def test_an_implausible_quantity_is_refused(tmp_path: Path, name: str, content: dict | str,
                                            argv: list[str], expected: str,
                                            rig: Rig,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / name
    if isinstance(content, str):
        _ppk2raw(path, content)
    else:
        path.write_text(CSV_HEAD + _rows(**content), encoding="utf-8")
    _refused(rig, ["analyze", path, *argv, "--json"], f"{path}: ", expected)


# -- item 15: a capture without a window says why -----------------------------------------

NO_WINDOW_CASES = [
    ("never-rose", {"high": (0, 0)}, [], "the trigger column 'trigger' never went high (it is "
     "low throughout the capture)"),
    ("always-high", {"high": (0, 4000)}, [], "the trigger column 'trigger' is high throughout "
     "the capture"),
    ("never-fell", {"high": (3000, 4000)}, [], "went high at 0.029995 s and never went low "
     "again (the capture ended inside a window): record longer"),
    ("began-high", {"high": (0, 1000)}, [], "was high when the capture began, went low at "
     "0.009995 s and never went high again"),
    ("glitches-only", {"high": (2000, 2005)}, ["--min-pulse", "1e-4"], "went high 1 time, "
     "each pulse shorter than --min-pulse 0.0001 s"),
    ("active-low-never-fell", {"high": (0, 0)}, ["--active-low"], "the trigger column "
     "'trigger' is low throughout the capture (never went high)"),
]


@pytest.mark.parametrize(("rows", "argv", "expected"), [c[1:] for c in NO_WINDOW_CASES],
                         ids=[c[0] for c in NO_WINDOW_CASES])
def test_a_csv_without_a_window_says_why(tmp_path: Path, rows: dict, argv: list[str],
                                         expected: str,
                                         rig: Rig) -> None:
    path = tmp_path / "c.csv"
    path.write_text(CSV_HEAD + _rows(**rows), encoding="utf-8")
    for json_out in ([], ["--json"]):
        _refused(rig, ["analyze", path, *argv, *json_out], f"{path}: no trigger window: ",
                 expected, "the columns are time_s, current_a, voltage_v, trigger")


@pytest.mark.parametrize(("logic_bit", "expected"), [
    (3, "the trigger D0 never went high (it is low throughout the capture); the logic "
        "channels with edges are D3: is one of them the trigger (--trigger D3)?"),
    (None, "the trigger D0 never went high (it is low throughout the capture); no logic "
           "channel of the capture has edges"),
])
def test_a_ppk2_stream_without_a_window_names_the_channels_with_edges(
        tmp_path: Path, logic_bit: int | None, expected: str,
        rig: Rig) -> None:
    path = tmp_path / "c.ppk2raw"
    _ppk2raw(path, logic_bit=logic_bit)
    _refused(rig, ["analyze", path], f"{path}: no trigger window: {expected}")
    if logic_bit is not None:
        assert len(_windows(rig, [path, "--trigger", f"D{logic_bit}"])) == 1


# -- item 14: samples lost beside a window ------------------------------------------------

def _jump(at: int, lost_s: float, n: int = 4000) -> list[float]:
    """Time stamps of ``n`` samples at 10 µs with ``lost_s`` of samples lost before sample
    ``at``."""
    return [k * PERIOD_S + (lost_s if k >= at else 0.0) for k in range(n)]


@pytest.mark.parametrize(("at", "lost_s", "flagged"), [
    (1500, 5e-3, True),     # in the baseline span (9..19 ms before the window's 20 ms)
    (1500, 1e6, True),      # a million seconds lost there
    (1950, 5e-3, True),     # in the guard between the span and the edge
    (2000, 5e-3, True),     # at the rising edge
    (2200, 5e-3, True),     # inside the window (flagged before too)
    (300, 5e-3, False),     # long before the baseline span
    (3500, 5e-3, False),    # long after the window, whose baseline is before it
])
def test_samples_lost_beside_a_window_flag_it(tmp_path: Path, at: int, lost_s: float,
                                              flagged: bool,
                                              rig: Rig) -> None:
    path = tmp_path / "c.csv"
    path.write_text(CSV_HEAD + _rows(times=_jump(at, lost_s)), encoding="utf-8")
    (window,) = _windows(rig, [path])
    assert ("dropped_samples" in window["flags"]) is flagged, window
    assert window["samples"] == 500


def test_samples_lost_in_the_baseline_span_after_a_window_flag_it(
        tmp_path: Path, rig: Rig) -> None:
    path = tmp_path / "c.csv"   # no room before the window: its baseline is taken after it
    times = _jump(1000, 5e-3)
    path.write_text(CSV_HEAD + _rows(high=(50, 500), times=times), encoding="utf-8")
    (window,) = _windows(rig, [path])
    assert set(window["flags"]) == {"baseline_after", "dropped_samples"}, window


# -- item 20: a window shorter than one sample says so, and which batch would do ----------

@pytest.mark.parametrize("instrument", ["record-without-window", "stream-never-rose"])
def test_a_window_shorter_than_a_sample_says_which_batch_would_do(instrument: str) -> None:
    from support.pipeline import POINT, ScriptedBench

    from energyrig.errors import NoTriggerWindow
    from energyrig.rig.pipeline import measure_point, reps_done

    bench = ScriptedBench()
    bench.dut.op_s = 0.1e-6        # 50 ops: 5 µs, half a sample at 100 kS/s
    if instrument == "stream-never-rose":  # a streaming instrument's collect, as the PPK2's
        def collect(timeout_s: float) -> None:
            raise NoTriggerWindow("PPK2: no complete trigger window within 1 s of arming "
                                  "(the trigger never rose on D0)")
        bench.instrument.collect = collect  # type: ignore[method-assign]
    result = measure_point(bench, POINT, until=reps_done(1), batch_n=50)
    assert result.status == "failed"
    m = bench.fixture.measure
    target = max(m.min_window_samples, 2 / m.max_edge_error)
    assert "the trigger window was shorter than one sample: the batch of 50 ops took " \
           "5 µs by the firmware's clock, the instrument samples every 10 µs" in result.reason
    got = re.search(r"a batch of (\d+) spans the (\d+) samples a window needs "
                    r"\(--batch (\d+), or --batch auto", result.reason)
    assert got is not None, result.reason
    batch = int(got[1])
    assert int(got[3]) == batch and int(got[2]) == round(target)
    # the smallest batch whose time spans the samples: 0.1 µs per op, 10 µs per sample
    assert (batch - 1) * 0.1e-6 < target * 1e-5 <= batch * 0.1e-6 * (1 + 1e-9)
    assert "never rose" not in result.reason


def test_a_window_the_instrument_missed_for_another_reason_keeps_its_error() -> None:
    from support.pipeline import POINT, ScriptedBench

    from energyrig.rig.pipeline import measure_point, reps_done

    bench = ScriptedBench()
    real = bench.instrument.collect

    def unwired(timeout_s: float) -> RecordedCapture:  # a long batch; the trigger is not seen
        record = real(timeout_s)
        return replace(record, chunk_list=tuple(replace(c, logic=c.logic * 0)
                                                for c in record.chunk_list))
    bench.instrument.collect = unwired  # type: ignore[method-assign]
    result = measure_point(bench, POINT, until=reps_done(1), batch_n=500)
    assert result.status == "failed"
    assert "is the trigger wired to the instrument?" in result.reason
