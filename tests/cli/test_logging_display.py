"""The log goes through the terminal's display (issue 23, 8): rich's handler on the standard
error console the progress bars draw on, a warning repeated per window shown once and then
counted ("5 windows flagged duration_mismatch"), `rig -v` showing each and `rig -q` none;
`rig sweep --json` keeps standard output for its JSON lines; an emulator's log, written in its
own process, comes back through the rig's."""
from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from rich.logging import RichHandler
from support.cli import on_scripted_bench, rig
from support.pipeline import POINT
from support.pipeline import ScriptedBench as PipelineBench
from support.pipeline import ScriptedDut
from support.sweep import SIM, Prepared, ScriptedBench
from typer.testing import CliRunner

from energyrig.cli.app import app
from energyrig.cli.terminal import (
    LineHandler,
    TerminalHandler,
    err_console,
    log_to_terminal,
    summarise_repeats,
)
from energyrig.domain import Window
from energyrig.errors import InstrumentError
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.process import EmulatorProcess, relay_log
from energyrig.rig.flags import DURATION_MISMATCH
from energyrig.rig.pipeline import measure_point, reps_done


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Each test sets the log up as `rig` does; the handler goes again after it."""
    root = logging.getLogger()
    level = root.level
    yield
    for handler in [h for h in root.handlers if isinstance(h, TerminalHandler)]:
        root.removeHandler(handler)
    root.setLevel(level)


@dataclass
class FastClockDut(ScriptedDut):
    """A DUT whose own timing says each batch took half what the trigger window shows (a
    window shorter than its batch would be ``window_cut`` too, left out of the estimate)."""

    def run(self, n: int, timeout_s: float, settle_s: float = 0.0):  # type: ignore[no-untyped-def]
        reply = super().run(n, timeout_s, settle_s)
        return replace(reply, elapsed_ns=reply.elapsed_ns // 2)


def mismatched_point(windows: int) -> list[Window]:
    """Measure ``windows`` windows the pipeline flags duration_mismatch, each."""
    bench = PipelineBench()
    bench.dut = FastClockDut(bench.log)
    bench.instrument.dut = bench.dut
    result = measure_point(bench, POINT, until=reps_done(windows), batch_n=500)
    assert result.ok, result.reason
    return list(result.windows)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_warning_per_window_is_shown_once_then_counted(
        capsys: pytest.CaptureFixture[str]) -> None:
    log_to_terminal("normal")
    windows = mismatched_point(5)
    assert all(DURATION_MISMATCH in w.flags for w in windows)
    summarise_repeats()
    captured = capsys.readouterr()
    shown = flat(captured.err)
    assert shown.count("but the firmware timed") == 1
    assert f"5 windows flagged {DURATION_MISMATCH}" in shown and "rig -v logs each" in shown
    assert captured.out == ""
    summarise_repeats()  # said once: the counts start again
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("verbosity", "lines"), [("verbose", 4), ("quiet", 0)])
def test_verbose_logs_each_repeat_and_quiet_none(
        verbosity: str, lines: int, capsys: pytest.CaptureFixture[str]) -> None:
    log_to_terminal(verbosity)
    mismatched_point(4)
    summarise_repeats()
    shown = flat(capsys.readouterr().err)
    assert shown.count("but the firmware timed") == lines
    assert "windows flagged" not in shown


@pytest.mark.parametrize("terminal", [True, False])
def test_the_log_handler_draws_on_the_console_of_the_progress_bars(
        terminal: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(err_console(), "_force_terminal", terminal)
    log_to_terminal("normal")
    kind = RichHandler if terminal else LineHandler  # a pipe: one unwrapped line a record
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, TerminalHandler)]
    assert len(handlers) == 1
    drawer = handlers[0].drawer
    assert isinstance(drawer, kind) and drawer.console is err_console()
    log_to_terminal("verbose")  # set again (another command in the same process): replaced
    assert len([h for h in logging.getLogger().handlers
                if isinstance(h, TerminalHandler)]) == 1
    assert logging.getLogger().level == logging.INFO


def test_verbose_and_quiet_together_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["-v", "-q", "ops"])
    assert result.exit_code == 2 and "--quiet" in result.output


@dataclass
class MismatchPrepared(Prepared):
    """A scripted sweep window the pipeline's duration check would flag, logged as it does."""

    def window(self) -> Window:
        row = super().window()
        logging.getLogger("energyrig.rig.pipeline").warning(
            "%s: window of 0.01 s but the firmware timed 0.02 s", self.point.label,
            extra={"repeats": f"windows flagged {DURATION_MISMATCH}"})
        return row


@dataclass
class MismatchBench(ScriptedBench):
    def prepare(self, point, **kwargs):  # type: ignore[no-untyped-def]
        p = super().prepare(point, **kwargs)
        return MismatchPrepared(p.bench, p.point, p.batch_n, p.rng)


PLAN = """
    [adaptive]
    min_windows = 3
    max_windows = 3
    [factors]
    op = ["sha256"]
    payload_bytes = [16, 64]
    """


@pytest.mark.parametrize("as_json", [True, False])
def test_rig_sweep_logs_on_stderr_and_summarises_at_the_end(
        as_json: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    on_scripted_bench(tmp_path, monkeypatch, MismatchBench(), PLAN)
    json_opt = ["--json"] if as_json else []
    assert rig(monkeypatch, "sweep", "plan.toml", "--out", "run", "--fixture", str(SIM),
               "--allow-uncalibrated", *json_opt) == 0
    captured = capsys.readouterr()
    err = flat(captured.err)
    assert err.count("but the firmware timed") == 1
    assert f"6 windows flagged {DURATION_MISMATCH}" in err  # 2 points x 3 windows
    if as_json:  # standard output: JSON lines and nothing else
        events = [json.loads(line) for line in captured.out.splitlines()]
        assert events[-1]["event"] == "sweep_finished"
    else:  # the summary comes before the run's outcome
        assert err.index("6 windows flagged") < err.index("2 points measured")
        assert captured.out == ""



DROPPED = "WARNING energyrig.instruments.ppk2.emulator: PPK2 emulator: host is not reading; " \
          "{} samples dropped\n"


def test_an_emulators_log_comes_back_through_the_rigs(
        capsys: pytest.CaptureFixture[str]) -> None:
    # the emulator runs in its own process: its warnings reached the terminal raw, one per
    # window under load, through the progress bar
    log_to_terminal("normal")
    relay_log(io.StringIO("".join(DROPPED.format(n) for n in (3089, 3308, 3458, 4368))
                          + "Traceback (most recent call last):\n"))
    summarise_repeats()
    shown = flat(capsys.readouterr().err)
    assert shown.count("host is not reading") == 2  # the first, and the summary's
    assert "4 emulator warnings like 'PPK2 emulator: host is not reading; N samples " \
           "dropped'" in shown
    assert "emulator: Traceback (most recent call last):" in shown  # not of its log: an error


@pytest.mark.slow
def test_an_emulator_that_does_not_start_has_logged_why_before_the_error(
        caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(InstrumentError, match="exit code 2"):
        with EmulatorProcess(PowerModel(), extra_args=["--latency-s", "soon"]):
            pass
    why = [r for r in caplog.records if "soon" in r.getMessage()]
    assert why and why[0].levelno == logging.ERROR


def test_a_failed_point_is_shown_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the display's "failed broken 16 B: broken: self-test failed" came with a log line
    # saying the same
    on_scripted_bench(tmp_path, monkeypatch, ScriptedBench(), BROKEN)
    assert rig(monkeypatch, "sweep", "plan.toml", "--out", "run", "--fixture", str(SIM),
               "--allow-uncalibrated") == 3
    err = flat(capsys.readouterr().err)
    assert err.count("self-test failed") == 1 and "failed broken 16 B" in err
    assert rig(monkeypatch, "-v", "sweep", "--resume", "run", "--retry-failed",
               "--allow-uncalibrated") == 3
    assert flat(capsys.readouterr().err).count("self-test failed") == 2  # -v: and the log's


BROKEN = """
    [adaptive]
    min_windows = 3
    max_windows = 3
    [factors]
    op = ["broken"]
    payload_bytes = [16]
    """
