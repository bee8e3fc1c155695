"""`rig analyze --json` streams (issue 24, part 2): its windows go out while the capture is
still being read, none is held beyond one batch, the bytes are those of ``json.dumps(...,
indent=1)`` of the whole result, the summary equals the one computed from a table of all
the windows, and the command loads neither pandas nor scipy.stats."""
from __future__ import annotations

import gc
import io
import json
import math
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from support.jls import write_js220
from support.paths import DATA

import energyrig.rig.analysis as analysis
from energyrig.cli import analyze as cli_analyze
from energyrig.cli.app import main
from energyrig.domain import Window, windows_frame
from energyrig.instruments.fileopts import DEFAULT_CHUNK_SAMPLES
from energyrig.results.stats import describe, describe_finite
from energyrig.rig.analysis import FIGURES, PER_OP_FIGURES, analyze_file

RATE = 1_000_000
PERIOD, HIGH = 1000, 300          # a window every 1 ms, 0.3 ms long
CHUNK = DEFAULT_CHUNK_SAMPLES     # samples the reader delivers at a time (2^18)
SAMPLES = 12 * CHUNK              # 3.1 M samples: 3 146 windows, more than 8 batches
OPTIONS = ["--trigger", "TRIG", "--current", "SHUNT", "--shunt-ohms", "1", "--voltage",
           "3.3", "--baseline", "1e-4", "--guard", "1e-5", "--json"]


def write_sr(path: Path) -> int:
    """A libsigrok session of :data:`SAMPLES` samples at 1 MS/s: logic TRIG, analog SHUNT
    (volts across 1 ohm, varying from window to window). Returns its whole windows."""
    k = np.arange(SAMPLES)
    high = (k % PERIOD >= 500) & (k % PERIOD < 500 + HIGH)
    shunt = np.where(high, 0.01 + 1e-4 * (k // PERIOD % 7), 0.001 + 1e-5 * (k % 3))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("version", "2")
        archive.writestr("metadata", "[global]\nsigrok version=0.5.2\n\n[device 1]\n"
                         "capturefile=logic-1\ntotal probes=8\nsamplerate=1 MHz\n"
                         "total analog=1\nprobe1=TRIG\nanalog9=SHUNT\nunitsize=1\n")
        archive.writestr("logic-1-1", high.astype(np.uint8).tobytes())
        archive.writestr("analog-1-9-1", shunt.astype("<f4").tobytes())
    return int(np.count_nonzero(np.diff(high.astype(np.int8)) == -1))  # it starts low


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("streaming") / "many-windows.sr"
    return path, write_sr(path)


class Recorder(io.StringIO):
    """stdout that notes, at each write, the samples the reader had delivered so far and
    the :class:`Window` objects alive."""

    def __init__(self, delivered: list[int]) -> None:
        super().__init__()
        self.delivered = delivered
        self.writes: list[tuple[int, int]] = []

    def write(self, text: str) -> int:
        if "start_s" in text:
            alive = sum(1 for o in gc.get_objects() if type(o) is Window)
            self.writes.append((self.delivered[0], alive))
        return super().write(text)


def run_recorded(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> Recorder:
    """``rig ARGV`` in this process, its stdout a :class:`Recorder`, the samples the reader
    delivers counted as they pass the plausibility limits."""
    delivered = [0]
    passing = analysis.plausible_chunks

    def counted(chunks, source):  # type: ignore[no-untyped-def]
        for chunk in passing(chunks, source):
            delivered[0] += len(chunk)
            yield chunk

    monkeypatch.setattr(analysis, "plausible_chunks", counted)
    out = Recorder(delivered)
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "argv", ["rig", *argv])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None)
    return out


def test_windows_are_written_while_the_capture_is_read_and_none_is_held(
        capture: tuple[Path, int], monkeypatch: pytest.MonkeyPatch) -> None:
    path, windows = capture
    out = run_recorded(monkeypatch, ["analyze", str(path), *OPTIONS])
    result = json.loads(out.getvalue())
    assert result["summary"]["count"] == len(result["windows"]) == windows > 8 * 256
    first_write = out.writes[0][0]
    assert first_write < SAMPLES / 2, "the first windows waited for the end of the capture"
    # Alive at once: the windows of one chunk (the finder hands them over a chunk at a
    # time) and one batch of the writer; not the capture's.
    per_chunk = -(-CHUNK // PERIOD)
    most_alive = max(alive for _, alive in out.writes)
    assert most_alive <= per_chunk + cli_analyze.JSON_BATCH + 8 < windows, (
        f"{most_alive} windows alive at once of {windows}: they are held, not streamed")


def test_the_streamed_json_is_the_whole_result_dumped(capture: tuple[Path, int],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytes equal json.dumps(indent=1) of the held result (analyze_file, whose summary
    is checked against the table of all windows below)."""
    path, _ = capture
    out = run_recorded(monkeypatch, ["analyze", str(path), *OPTIONS, "--batch", "10"])
    options = analysis.CaptureOptions(trigger="TRIG", current="SHUNT", shunt_ohms=1.0,
                                      voltage=3.3)
    held = analyze_file(path, options, analysis.WindowSettings(baseline_s=1e-4, guard_s=1e-5),
                        batch_n=10, max_current=False)
    assert out.getvalue() == json.dumps(held.as_json(), indent=1) + "\n"


def test_window_text_is_json_dumps_with_nan_and_flags() -> None:
    windows = [Window(0.5, 0.75, 21, 1.5e-5, math.nan, 1e-7, ("glitch", "no_baseline")),
               Window(1.0, 1.0000001, 2, 0.0, 3.25, 0.0, ("too_few_samples",)),
               Window(2.0, 3.0, 10**6, 1 / 3, 1e-300, 5e-324),
               Window(4.0, 5.0, 3, math.inf, -math.inf, 0.0, ("saturated",))]
    summary = {"count": 4, "x": None, "per_op": {"a": [1.5, 2]}}
    out = io.StringIO()
    cli_analyze.write_json(out, windows, lambda: summary)
    want = {"windows": [analysis.json_window(w) for w in windows], "summary": summary}
    assert out.getvalue() == json.dumps(want, indent=1) + "\n"
    out = io.StringIO()
    cli_analyze.write_json(out, [], lambda: summary)
    assert out.getvalue() == json.dumps({"windows": [], "summary": summary}, indent=1) + "\n"


@pytest.mark.parametrize("batch", [None, 1000])
def test_summary_equals_the_table_of_all_windows(batch: int | None) -> None:
    """The summary from the windows' figures one at a time (Tally) equals describe() of the
    columns of windows_frame, the table it was computed from before."""
    result = analyze_file(DATA / "synthetic-capture.csv", batch_n=batch, max_current=False)
    frame = windows_frame(result.windows, batch or 1)

    def described(column: str) -> dict[str, object]:
        d = describe_finite(frame[column].to_numpy(dtype="float64", na_value=math.nan))
        assert d is not None
        return {"n": d.n, "mean": d.mean, "median": d.median, "std": d.std,
                "ci_low": d.ci_low, "ci_high": d.ci_high, "ci_method": d.ci_method}

    summary = result.summary()
    assert summary["flagged"] == sum(1 for f in frame["flag_list"] if f)
    for name in FIGURES:
        assert summary[name] == described(name)
    if batch is not None:
        assert summary["per_op"] == {n: described(c) for n, c in PER_OP_FIGURES.items()}


def test_t_interval_is_scipy_stats_to_1e_12() -> None:
    """The t quantile is the rig's own (results/student.py, scipy's to 1e-10 relative and
    within 1e-12 here), not scipy's bit for bit."""
    import scipy.stats  # not at collection: each `make check` worker collects every file
    rng = np.random.default_rng(7)
    for n in (2, 3, 10, 31_710):
        x = rng.lognormal(-10, 1, n)
        d = describe(x)
        low, high = scipy.stats.t.interval(0.95, n - 1, loc=d.mean, scale=d.std / np.sqrt(n))
        assert (d.ci_low, d.ci_high) == (pytest.approx(low, rel=1e-12),
                                         pytest.approx(high, rel=1e-12))


def test_rig_analyze_json_loads_neither_pandas_nor_scipy_stats(capture: tuple[Path, int]
                                                               ) -> None:
    """What a run pays before it reads: the libraries of tables and distributions stay out
    of `rig analyze --json` (they load where --csv or a report needs them)."""
    path, _ = capture
    code = ("import sys\nsys.argv = ['rig', 'analyze', %r, *%r]\n"
            "from energyrig.cli.app import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(' '.join(m for m in ('pandas', 'scipy.stats', 'pyarrow', 'matplotlib') "
            "if m in sys.modules), file=sys.stderr)" % (str(path), OPTIONS))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stderr.strip().splitlines()[-1:] in ([], [""]), done.stderr


def test_windows_after_a_corrupt_sample_get_their_flags_from_one_more_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A JLS with a lost (NaN) sample inside its 6th window: the windows before it stream
    out at once with no integrity flag, the later ones wait for the pass that flags them;
    every window's flags are those of the pass over all of them (as before streaming)."""
    from energyrig.energy.windows import windows_stream_flags
    from energyrig.flags import CORRUPT

    rate, n = 100_000, 200_000
    k = np.arange(n)
    high = k % 20_000 >= 10_000
    high &= k % 20_000 < 12_000
    current = np.where(high, 2e-3, 1e-5).astype(np.float32)
    current[5 * 20_000 + 11_000] = np.nan
    path = tmp_path / "lost.jls"
    write_js220(path, rate, current, np.full(n, 3.0), high)
    options = analysis.CaptureOptions(chunk_samples=25_000)
    reads: list[int] = []
    original = analysis.file_chunks

    def counted(*args):  # type: ignore[no-untyped-def]
        capture, chunks = original(*args)

        def passing():  # type: ignore[no-untyped-def]
            for chunk in chunks:
                reads.append(chunk.end_index)
                yield chunk
        return capture, passing()

    monkeypatch.setattr(analysis, "file_chunks", counted)
    order = [(w, len(reads)) for w in analysis.WindowScan(path, options)]
    windows = [w for w, _ in order]
    assert len(windows) == 10
    assert [k for k, w in enumerate(windows) if CORRUPT in w.flags] == [5]
    first_pass = n // 25_000
    early = [k for k, (_, chunks_read) in enumerate(order) if chunks_read <= first_pass]
    assert early == list(range(5)), "the windows before the lost sample were held"
    again = windows_stream_flags(original(path, options)[1],
                                 [replace(w, flags=()) for w in windows],
                                 analysis.WindowSettings())
    assert [tuple(f for f in w.flags if f == CORRUPT) for w in windows] == \
        [tuple(f) for f in again]
