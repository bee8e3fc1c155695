"""The point pipeline on a scripted bench: a DUT whose op takes a known time and an instrument
that records a known current, so every window's energy is known in closed form.

What is checked: the stages run in order with the correction stage between collect and find;
the correction is applied to what the energy math integrates; ``auto`` picks a batch that holds
enough samples; a batch that comes out short grows once and the point's windows start over;
a failing DUT fails the point and keeps its windows; a stop between windows interrupts it."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from support.pipeline import ACTIVE_A, IDLE_A, POINT, RATE_HZ, SUPPLY_V, ScriptedBench

from energyrig.calibration.correction import CurrentCorrection
from energyrig.domain import Window
from energyrig.flags import UNCALIBRATED
from energyrig.instruments.base import Limits, RecordedCapture
from energyrig.rig.pipeline import measure_point, reps_done



def test_stages_run_in_order_and_the_energy_is_the_closed_form() -> None:
    bench = ScriptedBench()

    def correct(record: RecordedCapture) -> RecordedCapture:
        bench.log.append("correct")
        return record

    bench.correction = correct
    result = measure_point(bench, POINT, until=reps_done(2), batch_n=500)
    assert result.ok, result.reason
    assert result.point.family == "hash"  # from the catalogue
    # prep, one unrecorded batch (no record starts before its end), then per window the
    # stages in order; the firmware idles the baseline span (guard + baseline of the
    # fixture) between its warm-up run and the window
    w = bench.fixture.windows
    window = ["arm", f"run settle={w.guard_s + w.baseline_s:g}", "collect", "correct",
              "annotate"]
    assert bench.log == ["prep", "run", "records_after", *window, *window]
    duration_s = 500 * 20e-6
    for w in result.windows:
        assert w.samples == round(duration_s * RATE_HZ)
        assert w.duration_s == pytest.approx(duration_s)
        assert w.energy_j == pytest.approx(SUPPLY_V * ACTIVE_A * duration_s)
        assert w.net_energy_j == pytest.approx(SUPPLY_V * (ACTIVE_A - IDLE_A) * duration_s)
        assert w.cycles == 100 * 500
    fig = result.figures()
    assert fig["net_energy_per_op_j"] == pytest.approx(SUPPLY_V * (ACTIVE_A - IDLE_A) * 20e-6)
    assert fig["time_per_op_s"] == pytest.approx(20e-6)


def test_the_correction_stage_changes_what_is_integrated() -> None:
    bench = ScriptedBench()

    def halve(record: RecordedCapture) -> RecordedCapture:
        return replace(record, chunk_list=tuple(replace(c, current_a=c.current_a / 2)
                                                for c in record.chunk_list))

    bench.correction = halve
    (w,) = measure_point(bench, POINT, until=reps_done(1), batch_n=500).windows
    assert w.energy_j == pytest.approx(SUPPLY_V * ACTIVE_A / 2 * 500 * 20e-6)


def test_each_window_records_the_calibrations_corrections() -> None:
    bench = ScriptedBench()
    bench.correction = CurrentCorrection(offset_a=IDLE_A, gain=2.0, overhead_s=100e-6,
                                         overhead_j=1e-6, flags=(UNCALIBRATED,))
    result = measure_point(bench, POINT, until=reps_done(2), batch_n=500)
    for w in result.windows:
        # the overhead's energy above the baseline, and the baseline over its time, are out
        assert w.energy_j == pytest.approx(SUPPLY_V * (ACTIVE_A - IDLE_A) / 2 * 500 * 20e-6
                                           - 1e-6 - w.baseline_w * 100e-6)
        assert w.duration_s == pytest.approx(500 * 20e-6 - 100e-6)
        assert dict(w.corrections) == {"offset_a": IDLE_A, "gain": 2.0, "skew_s": 0.0,
                                       "overhead_s": 100e-6, "overhead_j": 1e-6}
        assert UNCALIBRATED in w.flags
    assert UNCALIBRATED in result.flags
    fig = result.figures()
    assert fig["windows"][0]["corrections"]["gain"] == 2.0
    # no calibration record: the budget lists gain and skew as unknown, so no U is stated
    assert fig["net_energy_per_op_u_j"] is None and fig["time_per_op_u_s"] is None
    assert [c["component"] for c in fig["uncertainty_budget"]] == \
        ["repeatability", "ADC resolution", "gain calibration", "skew calibration",
         "window overhead", "offset calibration", "supply voltage"]
    # each window carries its own budget; unknown without a calibration
    window = fig["windows"][0]
    assert window["net_energy_u_j"] is None and window["duration_u_s"] > 0
    assert window["uncertainty"]["gain calibration"] is None
    assert window["uncertainty"]["edge quantisation"] > 0
    bench.calibration = {"id": "r1", "values": {"gain": {"value": 2.0, "u": 0.002},
                                                "skew_s": {"value": 0.0, "u": 1e-6},
                                                "overhead_s": {"value": 1e-4, "u": 1e-6},
                                                "overhead_j": {"value": 1e-6, "u": 1e-8}}}
    calibrated = measure_point(bench, POINT, until=reps_done(2), batch_n=500).figures()
    u_gain = calibrated["net_energy_per_op_j"] * 0.001
    assert calibrated["net_energy_per_op_u_j"] >= 2 * u_gain


def test_auto_batch_holds_the_target_samples() -> None:
    bench = ScriptedBench()
    result = measure_point(bench, POINT, until=reps_done(2))
    m = bench.fixture.measure
    target = max(m.min_window_samples, 2 / m.max_edge_error)
    assert result.ok and all(w.samples >= target for w in result.windows)
    assert result.batch_n == pytest.approx(1.5 * target / (20e-6 * RATE_HZ), rel=0.01)


def test_a_short_window_grows_the_batch() -> None:
    bench = ScriptedBench()
    prepared = bench.prepare(POINT)
    first_n = prepared.batch_n
    bench.dut.op_s /= 4  # the op runs faster than probed: the window is short
    row = prepared.window()
    assert prepared.batch_n > first_n and prepared.restarts == 1
    m = bench.fixture.measure
    assert row.samples >= max(m.min_window_samples, 2 / m.max_edge_error)


def test_growth_inside_measure_point_drops_the_smaller_batch() -> None:
    bench = ScriptedBench()
    sped_up: list[int] = []

    def speed_up_after_the_first_window(stage: str, done: int, last: object) -> None:
        if stage == "window" and not sped_up:
            sped_up.append(done)
            bench.dut.op_s /= 4  # the next window of that batch comes out short

    result = measure_point(bench, POINT, until=reps_done(3),
                           on_progress=speed_up_after_the_first_window)
    assert result.ok and len(result.windows) == 3
    assert sped_up == [1] and result.batch_n > 100
    # the grown batch only (the firmware counts 100 cycles per op)
    assert [w.cycles for w in result.windows] == [100 * result.batch_n] * 3


def test_a_failing_dut_fails_the_point_and_keeps_its_windows() -> None:
    bench = ScriptedBench()
    bench.dut.fail_at_run = 4  # warm-up, window, window, then no answer
    result = measure_point(bench, POINT, until=reps_done(5), batch_n=500)
    assert result.status == "failed" and "did not answer" in result.reason
    assert len(result.windows) == 2 and result.batch_n == 500


def test_a_stop_between_windows_interrupts_the_point() -> None:
    bench = ScriptedBench()
    calls = iter([False, False, True])
    result = measure_point(bench, POINT, until=reps_done(5), batch_n=500,
                           stop=lambda: next(calls))
    assert result.status == "interrupted" and len(result.windows) == 2


def _recorder_bench(max_record_s: float) -> ScriptedBench:
    """A bench whose instrument records ``2 ×`` the armed window, at most ``max_record_s``,
    and whose DUT runs three times slower from the first recorded window on."""
    bench = ScriptedBench(limits=Limits(RATE_HZ, max_record_s, 0.0, window_margin=2.0))
    bench.instrument.margin = 2.0
    arm = bench.instrument.arm

    def arm_then_slow_down(pre_s: float, window_s: float, post_s: float) -> None:
        if bench.log.count("arm") == 0:
            bench.dut.op_s *= 3  # a loaded host: the batch takes 3x what it was timed at
        arm(pre_s, window_s, post_s)

    bench.instrument.arm = arm_then_slow_down  # type: ignore[method-assign]
    return bench


def test_a_batch_that_outlasts_its_record_is_measured_again_with_its_new_time() -> None:
    bench = _recorder_bench(max_record_s=0.2)  # holds windows up to 87.5 ms: 500 ops fit
    result = measure_point(bench, POINT, until=reps_done(2), batch_n=500)
    assert result.ok, result.reason
    assert result.batch_n == 500 and len(result.windows) == 2
    assert bench.log.count("arm") == 3  # the outlasted window was armed again
    for w in result.windows:
        assert w.duration_s == pytest.approx(500 * 60e-6)


def test_a_record_that_cannot_hold_the_slower_batch_shrinks_it() -> None:
    bench = _recorder_bench(max_record_s=0.07)  # windows up to 22.5 ms: 375 ops of 60 µs
    result = measure_point(bench, POINT, until=reps_done(2), batch_n=500)
    assert result.ok, result.reason
    assert result.batch_n == 375
    assert [w.cycles for w in result.windows] == [100 * 375] * 2


def test_a_batch_that_keeps_outlasting_its_record_fails_the_point() -> None:
    bench = _recorder_bench(max_record_s=0.2)
    bench.instrument.margin = 0.5  # never long enough
    result = measure_point(bench, POINT, until=reps_done(2), batch_n=500)
    assert result.status == "failed" and "outlasted" in result.reason


def test_the_readout_of_a_window_is_its_net_energy_per_op_mean_current_and_own_flags() -> None:
    from energyrig.capture import Chunk
    from energyrig.rig.pipeline import Readout

    current = np.full(100, 1e-6)
    current[40:60] = np.linspace(2e-3, 4e-3, 20)   # the window: samples 40..59, mean 3 mA
    chunks = (Chunk(1000, 1e-5, current[:50], 3.0), Chunk(1050, 1e-5, current[50:], 3.0))
    window = Window(start_s=1039.5e-5, end_s=1059.5e-5, samples=20, energy_j=2e-6,
                    baseline_w=1e-3, flags=("glitch", "uncalibrated"))
    readout = Readout.of(window, 10, chunks)
    assert readout.mean_current_a == pytest.approx(3e-3)
    assert readout.net_energy_per_op_j == pytest.approx((2e-6 - 1e-3 * 20e-5) / 10)
    assert readout.text() == "180 nJ/op, 3 mA, glitch"
