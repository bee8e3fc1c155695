"""The CPU clock as a plan factor (issue 22 item 5): the rig sets each point's clock on the
board before its windows, refuses a level the board does not offer (plan file and field in
the one error line), and on the emulated Cortex-M4 the time per op is cycles / clock and the
energy per op the power model's static + dynamic current at that clock over that time, with
its minimum where the model puts it.

The sweep's assertions are on what the rig decided and on the windows it kept in the
estimate (those a loaded host spoiled carry an integrity flag and are left out), never on
how long the host took."""
from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.bad_input import assert_refused
from support.m4 import SIM_M4, assert_built
from support.paths import ROOT

from energyrig.cli.app import main
from energyrig.domain import in_estimate
from energyrig.fixtures.loader import load_fixture
from energyrig.instruments.sim.power import PowerModel, at_clock, best_clock_hz
from energyrig.opfamilies import NAMES
from energyrig.results import load
from energyrig.rig.dut import DutRefused, open_dut

CLOCK_PLAN = ROOT / "plans" / "clock.toml"

#: The flags of a window whose samples are whole (the test bench is not calibrated).
CLEAN = {"uncalibrated", "stream_time_shift"}

pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]


def _plan(tmp_path: Path, fixture: Path, levels: str) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(f'seed = 1\nfixture = "{fixture}"\n[factors]\nop = ["sha256"]\n'
                    f'payload_bytes = [64]\ncpu_hz = [{levels}]\n', encoding="utf-8")
    return plan


def test_the_host_dut_cannot_set_its_clock(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    fixture = ROOT / "fixtures" / "sim.toml"
    # the firmware refuses: its port offers no level (-ENOTSUP)
    with open_dut(load_fixture(fixture)) as dut:
        assert dut.hello()["cpu_hz_levels"] == []
        with pytest.raises(DutRefused, match="cannot set its clock.*ENOTSUP"):
            dut.clock(64_000_000)
    # and the rig refuses the plan before measuring, naming the file and the field
    plan = _plan(tmp_path, fixture, "64_000_000")
    assert_refused(["sweep", str(plan), "--dry-run"],
                   f"{plan}: factors.cpu_hz: 64000000 Hz: the firmware on host cannot set "
                   "its clock", tmp_path, capsys, monkeypatch)


def test_a_level_the_emulated_board_does_not_offer_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert_built()
    plan = _plan(tmp_path, SIM_M4, "16_000_000, 36_000_000")
    assert_refused(["sweep", str(plan), "--dry-run"],
                   f"{plan}: factors.cpu_hz: 36000000 Hz: the firmware on mps2-an386 offers "
                   "16000000, 25000000, 32000000, 48000000, 64000000 Hz", tmp_path, capsys,
                   monkeypatch)


def _rig(*argv: str) -> None:
    """``rig ARGV``: it ends with 0, or 3 when some point failed (the sweep goes on)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.argv", ["rig", *argv])
        try:
            main()
        except SystemExit as exc:
            assert exc.code in (0, None, 3), exc.code


def _sweep(out: Path) -> pd.DataFrame:
    """``rig sweep plans/clock.toml``; a point the loaded host's stream failed (the emulated
    PPK2's samples lost: "the trigger never rose") measured again as a user would, with
    ``--resume --retry-failed``, at most twice. The last attempt of each point."""
    _rig("sweep", str(CLOCK_PLAN), "--out", str(out), "--allow-uncalibrated")
    for _ in range(2):
        points = load(out).points
        last = points[points["attempt"] == points.groupby("point_key")["attempt"].transform("max")]
        if set(last["status"]) == {"ok"}:
            break
        _rig("sweep", "--resume", str(out), "--retry-failed", "--allow-uncalibrated")
    points = load(out).points
    return points[points["attempt"] == points.groupby("point_key")["attempt"].transform("max")]


def test_the_clock_plan_follows_the_model(tmp_path: Path) -> None:
    assert_built()
    points = _sweep(tmp_path / "run")
    run = load(tmp_path / "run")
    assert set(points["status"]) == {"ok"}, points[["point_key", "status", "reason"]]
    plan = tomllib.loads(CLOCK_PLAN.read_text(encoding="utf-8"))
    levels = plan["factors"]["cpu_hz"]
    assert sorted(points["cpu_hz"].unique()) == levels
    model = PowerModel.from_dict({"profile": load_fixture(SIM_M4).sim.power.profile})
    supply_v = model.supply_v
    least: dict[str, list[tuple[float, int]]] = {}
    for _, point in points.iterrows():
        hz = int(point["cpu_hz"])
        windows = run.windows[(run.windows["point_key"] == point["point_key"])
                              & (run.windows["attempt"] == point["attempt"])]
        # the windows whose samples are whole: flagged at most uncalibrated (this test's
        # bench) or stream_time_shift (uncounted samples lost before the window moved the
        # stream's time base; the window itself is whole)
        clean = [set(f) <= CLEAN for f in windows["flag_list"]]
        windows = windows[np.array(clean, dtype=bool) & np.array(in_estimate(windows["flag_list"]))]
        assert len(windows), point["point_key"]
        n = windows["batch_n"].to_numpy()
        cycles_per_op = windows["cycles"].to_numpy() / n
        time_per_op = (windows["end_s"] - windows["start_s"]).to_numpy() / n
        # time per op = the board's cycles / the clock set for the point (to the edges'
        # samples and the port's ~330 cycles of edge lines per window)
        assert np.allclose(time_per_op, cycles_per_op / hz, rtol=1e-3), point["point_key"]
        # energy per op = the model's current at that clock x that time (the rising edge's
        # spike and the edge lines inside 0.2 %)
        family = NAMES.index(point["family"]) + 1
        current = at_clock(model, model.family_current(family), hz).active_a
        predicted = supply_v * current * cycles_per_op / hz
        energy_per_op = windows["energy_j"].to_numpy() / n
        assert np.allclose(energy_per_op, predicted, rtol=2e-3), point["point_key"]
        least.setdefault(point["op"], []).append((float(np.median(energy_per_op)), hz))
    # the least energy per op lies at the level where the model's is least, its optimum
    # inside the plan's range (static power dominates below it)
    for op, by_clock in least.items():
        family = NAMES.index(points.loc[points["op"] == op, "family"].iloc[0]) + 1
        fc = model.family_current(family)
        assert levels[0] < best_clock_hz(model, family) < levels[-1]
        model_best = min(levels, key=lambda hz: at_clock(model, fc, hz).active_a / hz)
        assert min(by_clock)[1] == model_best, (op, by_clock)
