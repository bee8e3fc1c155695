"""A U (k=2) that is not stated says why, from the budget: on a calibrated bench whose
instrument states no resolution (an Otii Ace) `rig run` and the report name the instrument,
not a missing calibration; a component the calibration lacks still says "not calibrated"."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from energyrig.calibration.quantities import CORRECTING, CORRECTIONS
from energyrig.calibration.routines.calibrate import calibrate
from energyrig.cli.app import app
from energyrig.energy.budget import unstated_because
from energyrig.fixtures import load_fixture
from energyrig.results.report.page import UNCERTAINTY_COLUMNS
from energyrig.results.store.schema import budget_struct
from energyrig.rig.bench import open_bench

NO_STEP = "the instrument states no resolution"


def _budget(**unknown: bool) -> list[dict[str, object]]:
    """A point's budget, each component known (1 nJ) but those named in ``unknown``
    (``adc``, ``gain``)."""
    names = {"adc": "ADC resolution", "gain": "gain calibration"}
    missing = {names[k] for k, v in unknown.items() if v}
    return [{"component": c, "type": "B", "u_j": None if c in missing else 1e-9, "source": ""}
            for c in ("repeatability", "ADC resolution", "gain calibration",
                      "skew calibration", "window overhead", "offset calibration",
                      "supply voltage")]


def test_the_reason_follows_the_unknown_components() -> None:
    assert unstated_because(["ADC resolution"]) == NO_STEP
    assert unstated_because(["gain calibration", "skew calibration"]) == "not calibrated"
    assert unstated_because(["ADC resolution", "gain calibration"]) == (
        f"{NO_STEP}; not calibrated")
    assert unstated_because([]) == "not calibrated"  # a run from before the budget


@pytest.mark.parametrize("unknown, says", [({"adc": True}, f"– ({NO_STEP})"),
                                           ({"gain": True}, "– (not calibrated)")])
def test_the_reports_u_column_names_the_reason(unknown: dict[str, bool], says: str) -> None:
    column = next(q for q in UNCERTAINTY_COLUMNS if q.header == "U (k=2)")
    df = pd.DataFrame([{"net_energy_per_op_u_j": float("nan"),
                        "uncertainty_budget": budget_struct(_budget(**unknown))}])
    assert column.bound(df).cell(df.iloc[0]) == says


@pytest.mark.slow
def test_rig_run_on_a_calibrated_ace_names_the_instrument(
        sim_fixture: Callable[..., Path]) -> None:
    """Every correction calibrated (the routines of `rig calibrate all` but the baseline's
    advice, which corrects nothing), then `rig run` on the simulated bench with an Ace at
    50 kS/s (no published step): the table's U (k=2) names the instrument, not the
    calibration."""
    fixture = sim_fixture(base="sim-otii.toml", **{
        "instrument.device": "Ace", "instrument.sample_rate_hz": 50000,
        "measure.min_window_samples": 2000})
    with open_bench(load_fixture(fixture)) as bench:
        record, _ = calibrate(bench, bench.connect, CORRECTING)
    assert set(CORRECTIONS) <= set(record.values)
    runner = CliRunner()
    result = runner.invoke(app, ["run", "--fixture", str(fixture), "--op", "aes-cbc-encrypt",
                                 "--key-bits", "128", "--payload-bytes", "1024", "--reps",
                                 "4"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert f"- ({NO_STEP})" in result.stdout and "not calibrated" not in result.stdout
