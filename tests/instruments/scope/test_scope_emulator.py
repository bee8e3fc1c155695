"""Whole sessions against the emulated oscilloscope over real TCP through pyvisa-py."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import pyvisa

from energyrig.errors import InstrumentError
from energyrig.instruments.base import InstrumentInfo, Limits
from energyrig.instruments.scope import protocol
from energyrig.instruments.scope.config import ScopeConfig
from energyrig.instruments.scope.dialects import KEYSIGHT_X
from energyrig.instruments.scope.driver import Scope
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.process import EmulatorProcess
from energyrig.instruments.scope.emulator import ScopeEmulator
from energyrig.instruments.sim.truth import read_truth
from energyrig.instruments.sim.wire import edge_records, send_edges
from energyrig.energy.windows import WindowSettings, find_windows

# An ESP32-class board at 3.3 V: tens of mA, so a 1 ohm shunt gives tens of mV.
MODEL = PowerModel(supply_v=3.3, idle_a=0.020, active_a=0.045, accel_a=0.012, noise_a=0.5e-3)


def settings(resource: str, **kw: object) -> ScopeConfig:
    base = dict(supply_v=3.3, max_current_a=0.08, sample_rate_hz=1e6, timeout_s=5.0)
    base.update(kw)
    return ScopeConfig(resource=resource, **base)  # type: ignore[arg-type]


def run_window(scope: Scope, wire: Path, start_after_s: float, duration_s: float,
               accel: int = 0, seq0: int = 0) -> None:
    scope.arm(pre_s=0.02, window_s=duration_s, post_s=0.005)
    now = time.monotonic_ns()
    rise = now + int(start_after_s * 1e9)
    send_edges(wire, edge_records([rise, rise + int(duration_s * 1e9)], [1, 0], accel, seq0))


@pytest.mark.parametrize("dialect", ["rigol-ds1000z", "keysight-x", "siglent-sds1000xe"])
def test_session_energy_matches_truth(tmp_path: Path, dialect: str) -> None:
    wire, truth = tmp_path / "wire", tmp_path / "truth.jsonl"
    measured = []
    with ScopeEmulator(MODEL, dialect=dialect, wire=wire, truth=truth, seed=3) as emu:
        with Scope(settings(emu.resource)) as scope:
            for k, (duration, accel) in enumerate([(0.004, 0), (0.0025, 1), (0.006, 0)]):
                run_window(scope, wire, 0.012, duration, accel, seq0=2 * k)
                capture = scope.collect(timeout_s=5.0)
                (w,) = find_windows(capture, WindowSettings(trigger_bit=0))
                measured.append((w, capture.chunk_list[0]))
    streams, windows = read_truth(truth)
    assert len(streams) == 3 and len(windows) == 3
    for (w, chunk), stream, true in zip(measured, streams, windows):
        # the record's time base is the truth stream's: sample 0 at t0_ns
        assert stream.period_ns * 1e-9 == pytest.approx(chunk.period_s)
        assert abs(stream.t0_ns + w.start_s * 1e9 - true.t_rise_ns) <= stream.period_ns
        assert w.duration_s == pytest.approx(true.duration_s, abs=2 * chunk.period_s)
        net = w.energy_j - w.baseline_w * w.duration_s
        assert net == pytest.approx(true.net_energy_j, rel=5e-3)
        assert w.energy_j == pytest.approx(true.energy_j, rel=5e-3)


def test_limits_and_describe_come_from_the_scope_itself() -> None:
    """The record memory of the family ``*IDN?`` names bounds the record at the set rate;
    the scope is named by its ``*IDN?`` at its resource."""
    scope = Scope(settings("TCPIP::192.0.2.1::INSTR", window_margin=1.5))
    with pytest.raises(InstrumentError, match="dialect 'auto' is known only after start"):
        scope.limits()
    assert scope.describe().name == ""  # not asked yet
    with ScopeEmulator(MODEL, dialect="keysight-x") as emu:
        with Scope(settings(emu.resource, window_margin=1.5)) as scope:
            limits, info = scope.limits(), scope.describe()
    longest = protocol.max_record_s(KEYSIGHT_X, 3, 1e6)
    assert longest > 0
    assert limits == Limits(sample_rate_hz=1e6, max_record_s=longest, stream_lag_s=0.0,
                            window_margin=1.5, resolution=limits.resolution)
    # the shunt channel's vertical range over the dialect's codes, in amperes
    assert limits.resolution is not None
    assert 0 < limits.resolution.step_a(0.01) < settings(emu.resource).max_current_a / 100
    assert info == InstrumentInfo("scope", info.name, emu.resource, 1e6, info.details,
                                  serial=info.name.split(",")[2])
    assert info.serial and info.serial in info.name and info.stated is None
    assert "DSOX3034T" in info.name and info.details["dialect"] == "keysight-x"
    assert info.to_dict()["channels"] == {"shunt": 2, "trigger": 3, "supply": 1}


def test_samples_are_8_bit_codes(tmp_path: Path) -> None:
    """Every shunt sample is (code - zero) * 20 mV/div / 25 / 1 ohm: on an 0.8 mA grid."""
    with ScopeEmulator(MODEL, wire=tmp_path / "w") as emu:
        with Scope(settings(emu.resource)) as scope:
            run_window(scope, tmp_path / "w", 0.012, 0.003)
            chunk = scope.collect(timeout_s=5.0).chunk_list[0]
    steps = chunk.current_a / 0.0008
    np.testing.assert_allclose(steps, np.rint(steps), atol=1e-6)
    assert len(np.unique(np.rint(steps))) < 256
    assert chunk.saturated is not None and not chunk.saturated.any()


def test_clipped_samples_are_flagged(tmp_path: Path) -> None:
    with ScopeEmulator(MODEL, wire=tmp_path / "w") as emu:
        with Scope(settings(emu.resource, max_current_a=0.03)) as scope:
            run_window(scope, tmp_path / "w", 0.012, 0.003)
            chunk = scope.collect(timeout_s=5.0).chunk_list[0]
    assert chunk.saturated is not None and chunk.logic is not None
    assert chunk.saturated[chunk.logic == 1].all() and not chunk.saturated[chunk.logic == 0].any()


def test_edge_before_the_pretrigger_filled_does_not_trigger(tmp_path: Path) -> None:
    with ScopeEmulator(MODEL) as emu:
        with Scope(settings(emu.resource)) as scope:
            scope.arm(pre_s=0.02, window_s=0.002, post_s=0.005)
            early = emu._armed_ns + 5_000_000          # 5 ms after arming: memory not full
            late = time.monotonic_ns() + 10_000_000
            emu.inject_edges(edge_records([early, early + 2_000_000, late, late + 2_000_000],
                                          [1, 0, 1, 0]))
            capture = scope.collect(timeout_s=5.0)
    (w,) = find_windows(capture, WindowSettings(trigger_bit=0))
    assert w.start_s == pytest.approx(0.02, abs=1e-6)   # the later edge, pre_s into the record


def test_trigger_level_out_of_the_signal_never_triggers(tmp_path: Path) -> None:
    with ScopeEmulator(MODEL, wire=tmp_path / "w") as emu:
        with Scope(settings(emu.resource, trigger_level_v=5.0)) as scope:
            run_window(scope, tmp_path / "w", 0.012, 0.002)
            with pytest.raises(InstrumentError, match="no trigger on CH3.*level 5 V"):
                scope.collect(timeout_s=0.3)


def test_scpi_forms_and_error_queue() -> None:
    with ScopeEmulator(MODEL) as emu:
        rm = pyvisa.ResourceManager("@py")
        inst = rm.open_resource(emu.resource, read_termination="\n", write_termination="\n",
                                timeout=3000)
        try:
            inst.write(":chan2:scal 0.05")
            assert float(inst.query(":CHANnel2:SCALe?")) == 0.05
            inst.write(":TIMebase:MAIN:SCALe 1e-3")
            assert float(inst.query(":TIM:MAIN:SCAL?")) == 1e-3
            inst.write(":WAVeform:NONSense 1")
            assert inst.query(":SYSTem:ERRor?").startswith("-113,")
            inst.write(":ACQuire:MDEPth 12345")
            assert inst.query(":SYST:ERR?").startswith("-224,")
            assert inst.query(":SYST:ERR?") == '0,"No error"'
            assert inst.query(":TRIGger:STATus?") == "STOP"
        finally:
            inst.close()
            rm.close()


@pytest.mark.slow
def test_emulator_in_its_own_process(tmp_path: Path) -> None:
    model = PowerModel(supply_v=3.3, idle_a=0.02, active_a=0.045)
    with EmulatorProcess(model, wire=tmp_path / "w", truth=tmp_path / "t.jsonl",
                         extra_args=["--dialect", "keysight-x"],
                         module="energyrig.instruments.scope.emulator") as proc:
        assert proc.port.startswith("TCPIP::127.0.0.1::") and proc.port.endswith("::SOCKET")
        with Scope(settings(proc.port, dialect="auto")) as scope:
            assert scope.dialect is not None and scope.dialect.name == "keysight-x"
            run_window(scope, tmp_path / "w", 0.012, 0.003)
            (w,) = find_windows(scope.collect(timeout_s=5.0), WindowSettings(trigger_bit=0))
    _, (true,) = read_truth(tmp_path / "t.jsonl")
    assert w.energy_j == pytest.approx(true.energy_j, rel=5e-3)


def test_batch_longer_than_the_record_is_named(tmp_path: Path) -> None:
    with ScopeEmulator(MODEL) as emu:
        with Scope(settings(emu.resource)) as scope:
            scope.arm(pre_s=0.02, window_s=0.003, post_s=0.005)   # 12 x 5 ms record
            rise = time.monotonic_ns() + 10_000_000
            emu.inject_edges(edge_records([rise, rise + 80_000_000], [1, 0]))
            with pytest.raises(InstrumentError, match="still high at the end of the record"):
                scope.collect(timeout_s=5.0)
