"""The simulated bench end to end: the host firmware's trigger wire drives the emulated
PPK2, and the bench's per-window energies are checked against the emulator's truth log."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import ROOT

from energyrig.domain import Point, WindowSettings, integrity_problems
from energyrig.fixtures import load_fixture
from energyrig.results.store.read import load
from energyrig.results.store.write import RunWriter
from energyrig.rig.bench import Bench, open_bench
from energyrig.rig.flags import EDGE_ERROR
from energyrig.rig.pipeline import PointResult, measure_point, reps_done

SIM = ROOT / "fixtures" / "sim.toml"

# A DUT that says hello, lists one op, then fails its self-test or hangs on run.
FAKE_DUT = r"""
while read cmd rest; do case "$cmd" in
hello) echo '{"ok":true,"protocol":1,"board":"fake","cycle_hz":1000000000,"trigger_drops":0,"families":["symmetric","hash","public-key","composite"]}';;
ops) echo '{"ok":true,"ops":[{"name":"broken","family":"hash","backend":"software"},
 {"name":"slow","family":"hash","backend":"software"}]}' | tr -d '\n'; echo;;
prep) case "$rest" in broken*)
  echo '{"ok":false,"op":"broken","selftest":"fail","error":"self-test failed"}';;
  *) echo '{"ok":true,"op":"slow","selftest":"pass"}';; esac;;
*) ;;
esac; done
"""


@pytest.fixture(scope="module")
def bench() -> Bench:  # a SimBench
    with open_bench(load_fixture(SIM)) as b:
        yield b


def measure_reps(bench: Bench, point: Point, reps: int, **kw: object) -> PointResult:
    return measure_point(bench, point, until=reps_done(reps), **kw)  # type: ignore[arg-type]


def test_auto_batch_windows_hold_enough_samples_and_match_the_truth(bench: Bench) -> None:
    point = Point(op="sha256", board=bench.board, payload_bytes=256)
    result = measure_reps(bench, point, reps=3)
    assert result.ok, result.reason
    assert result.point.family == "hash" and result.prep["selftest"] == "pass"
    # Three windows in the estimate; one whose stream failed its integrity checks (a
    # starved reader on a loaded machine) is kept, flagged, and replaced.
    assert result.batch_n > 100 and len(result.estimate) == 3
    assert all(integrity_problems(w.flags) for w in result.windows if w not in result.estimate)
    for w in result.estimate:
        assert w.samples >= 2000, w
        assert w.edge_error_j < 1e-3 * w.energy_j
        assert w.cycles is not None and w.cycles > 0
        assert w.true_net_energy_j is not None
        # Edge quantisation (half a sample at each edge at most) and the ADC's bias.
        assert w.net_energy_j == pytest.approx(w.true_net_energy_j, rel=2e-3)
        assert w.energy_j == pytest.approx(w.true_energy_j, rel=2e-3)
    fig = result.figures()
    assert fig["net_energy_per_op_j"] == pytest.approx(fig["true_net_energy_per_op_j"], rel=2e-3)
    # The firmware's own time of the batch agrees with the window (host: ns cycles).
    assert fig["cycles_per_op"] * 1e-9 == pytest.approx(fig["time_per_op_s"], rel=0.05)
    # Idle of the nRF52840 model (3 µA at 3 V), measured through noise and the ADC.
    assert fig["baseline_w"] == pytest.approx(9e-6, rel=0.2)


def test_a_fixed_batch_too_small_for_the_edges_is_flagged(bench: Bench) -> None:
    point = Point(op="ecdsa-sign", board=bench.board, curve="p256", payload_bytes=32)
    result = measure_reps(bench, point, batch_n=2, reps=2)
    assert result.ok and result.batch_n == 2
    assert EDGE_ERROR in result.flags
    assert all(EDGE_ERROR in w.flags for w in result.windows)


def test_failures_come_back_as_failed_points_and_the_bench_goes_on(bench: Bench) -> None:
    bad = measure_reps(bench, Point(op="aes-cbc-encrypt", board=bench.board, key_bits=100,
                              payload_bytes=16), reps=2)
    assert bad.status == "failed" and not bad.windows
    assert "key_bits=100 not allowed" in bad.reason
    good = measure_reps(bench, Point(op="aes-ctr-encrypt", board=bench.board, key_bits=128,
                               payload_bytes=64), reps=1)
    assert good.ok, good.reason


def test_results_go_into_the_store_one_to_one(bench: Bench, tmp_path: Path) -> None:
    result = measure_reps(bench, Point(op="md5", board=bench.board, payload_bytes=64), reps=2)
    with RunWriter.create(tmp_path / "run") as writer:
        writer.write_point(result.point, result.windows, batch_n=result.batch_n,
                           status=result.status, reason=result.reason)
    run = load(tmp_path / "run")
    assert len(run.windows) == 2 and run.points["status"].tolist() == ["ok"]
    fig = result.figures()
    assert run.points["energy_per_op_j_mean"][0] == pytest.approx(fig["energy_per_op_j"])
    assert run.points["true_net_energy_per_op_j_mean"][0] == pytest.approx(
        fig["true_net_energy_per_op_j"])


@pytest.mark.slow
def test_self_test_failure_and_a_hung_dut_are_failed_points(tmp_path: Path) -> None:
    fx = load_fixture(SIM)
    dut = fx.dut.model_copy(update={"link": "stdio", "command": ("sh", "-c", FAKE_DUT, "sh"),
                                    "timeout_s": 0.5})
    measure = fx.measure.model_copy(update={"probe_timeout_s": 0.5})
    with open_bench(fx.model_copy(update={"dut": dut, "measure": measure})) as b:
        assert b.board == "fake"
        broken = measure_reps(b, Point(op="broken", board=b.board), reps=1)
        assert broken.status == "failed" and broken.reason == "self-test failed"
        hung = measure_reps(b, Point(op="slow", board=b.board), reps=1)
        assert hung.status == "failed" and "did not answer 'run n=1'" in hung.reason
        assert json.loads(json.dumps(hung.figures()))["status"] == "failed"


def test_truth_windows_are_matched_by_the_run_request_span(tmp_path: Path) -> None:
    from energyrig.instruments.sim.truth import TruthFollower

    path = tmp_path / "truth.jsonl"
    stream = {"kind": "stream", "t0_ns": 1_000_000, "period_ns": 10_000, "supply_v": 3.0,
              "model": {}}
    windows = [{"kind": "window", "seq": 2 * k, "t_rise_ns": 2_000_000 * (k + 1),
                "t_fall_ns": 2_000_000 * (k + 1) + 500_000, "duration_s": 5e-4,
                "accel": False, "supply_v": 3.0, "dut_powered": True, "energy_j": float(k),
                "idle_energy_j": 0.0, "net_energy_j": float(k)} for k in range(3)]
    # The log grows while it is followed: the last line arrives in two pieces.
    text = "".join(json.dumps(o) + "\n" for o in [stream, *windows])
    path.write_text(text[:-20])
    log = TruthFollower(path)
    assert log.match(3_900_000, 4_600_000).seq == 2
    assert log.match(5_900_000, 6_600_000) is None  # not written yet
    with path.open("a") as fh:
        fh.write(text[-20:])
    found = log.match(5_900_000, 6_600_000)
    assert found.seq == 4
    # Sample 0 of the stream is at t0: the rising edge at 6.0 ms is at 0.005 s.
    assert log.offset_s(found, 0.005) == pytest.approx(0.0)
    assert log.offset_s(found, 0.0055) == pytest.approx(0.0005)
    assert log.match(0, 10_000_000) is None  # earlier windows are done with


@pytest.mark.slow
def test_instrument_faults_show_and_lost_samples_are_flagged() -> None:
    fx = load_fixture(SIM)
    assert fx.sim is not None
    power = fx.sim.power.model_copy(update={"gain_error": 0.05, "drop_rate": 1e-3})
    faulty = fx.model_copy(update={"sim": fx.sim.model_copy(update={"power": power})})
    with open_bench(faulty) as b:
        result = measure_reps(b, Point(op="sha1", board=b.board, payload_bytes=512), reps=2)
    # A record of a few thousand samples loses one at 1e-3 almost surely, not surely: the
    # flag is on every window whose record lost samples, and so on the point.
    assert result.ok and "dropped_samples" in result.flags
    for w in result.windows:
        assert "dropped_samples" in w.flags or w.lost_samples == 0
        # A 5 % gain error reads 5 % high; nothing calibrates it yet.
        assert w.net_energy_j / w.true_net_energy_j - 1 == pytest.approx(0.05, abs=5e-3)


@pytest.mark.slow
def test_the_scope_bench_is_the_same_bench_from_the_kind_table() -> None:
    # A single-shot recorder (emulated Rigol over PyVISA) behind the same arm/collect.
    with open_bench(load_fixture(ROOT / "fixtures" / "sim-scope.toml")) as b:
        assert b.instrument.describe().kind == "scope"
        result = measure_reps(b, Point(op="sha256", board=b.board, payload_bytes=256), reps=2)
    assert result.ok, result.reason
    for w in result.windows:
        assert w.samples >= 10000 and w.true_net_energy_j is not None
        assert w.net_energy_j == pytest.approx(w.true_net_energy_j, rel=5e-3)


def _faulty(**faults: object):
    fx = load_fixture(SIM)
    assert fx.sim is not None
    power = fx.sim.power.model_copy(update=faults)
    return fx.model_copy(update={"sim": fx.sim.model_copy(update={"power": power})})


@pytest.mark.slow
def test_a_corrupt_stream_fails_the_point_with_flags_a_real_ppk2_raises() -> None:
    # 1e-3 of the bytes: the replacements of the windows left out of the estimate (up to
    # twice the reps: pipeline.reps_done) cannot come back clean often enough, so the point
    # must fail.
    with open_bench(_faulty(corrupt_rate=1e-3)) as b:
        result = measure_reps(b, Point(op="sha256", board=b.board, payload_bytes=1024), reps=4)
    assert result.status == "failed" and "integrity checks" in result.reason
    assert "corrupt_samples" in result.reason
    for w in result.windows:
        if abs(w.net_energy_j / w.true_net_energy_j - 1) > 0.005:
            assert {"corrupt_samples", "dropped_samples", "stream_loss", "glitch"} & set(w.flags)


def test_kept_samples_are_read_back_by_rig_analyze_with_the_same_window(
        bench: Bench, tmp_path: Path) -> None:
    from energyrig.results.store.layout import capture_path
    from energyrig.rig.analysis import analyze_file

    result = measure_reps(bench, Point(op="sha256", board=bench.board, payload_bytes=64),
                          reps=2, keep="all")
    assert result.ok, (result.status, result.reason, [w.flags for w in result.windows])
    assert sorted(result.captures) == [0, 1]
    with RunWriter.create(tmp_path / "run", keep_captures="all") as writer:
        writer.write_point(result.point, result.windows, batch_n=result.batch_n,
                           captures=result.captures)
    w = result.windows[1]
    path = capture_path(tmp_path / "run", result.point.key, 1)
    fx = load_fixture(SIM).windows
    settings = WindowSettings(guard_s=fx.guard_s, baseline_s=fx.baseline_s,
                              min_samples=fx.min_samples)
    (again,) = analyze_file(path, settings=settings).windows
    # the same samples: the same window, energy and baseline (in the file's time base)
    assert again.samples == w.samples and again.flags == ()
    assert again.duration_s == pytest.approx(w.end_s - w.start_s, abs=1e-9)
    assert again.energy_j == pytest.approx(w.energy_j, rel=1e-6)
    assert again.baseline_w == pytest.approx(w.baseline_w, rel=1e-6)
