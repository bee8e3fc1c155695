"""The methods paragraph: how a run's numbers were made, from its manifest, in the report and
in report/methods.md (issue 23, "the report states how the numbers were made")."""
from __future__ import annotations

import html
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from support.synthetic import BOARDS, OPS, make_run

from energyrig.results import RunWriter, load
from energyrig.results.report import write_report
from energyrig.results.report.methods import (
    NOT_RECORDED,
    largest_components,
    methods_paragraph,
)
from energyrig.rig.flags import FLAGS

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")

HELLO = {"firmware": "0.3.1", "build": "9f3e2aa", "toolchain": "GNU 12.2.1",
         "board": "nrf52840dk", "cpu_hz": 64_000_000, "crypto": "mbedtls-3.6.5",
         "conditions": {"mbedtls_aes_tables": "full-ram", "optimization": "-O2"}}
BUDGET = [{"component": "repeatability", "type": "A", "u_j": 1e-9, "source": "std"},
          {"component": "gain calibration", "type": "B", "u_j": 4e-9, "source": "gain"},
          {"component": "ADC resolution", "type": "B", "u_j": 3e-9, "source": "adc"}]


def _calibrated_run(run_dir: Path, made: datetime) -> Path:
    record = f"{made:%Y%m%dT%H%M%SZ}-ppk2-gain+offset_a"
    calibration = {
        "id": record, "complete": True, "expired": [],
        "instrument": {"kind": "ppk2", "name": "PPK2 (HW 9173)", "serial": "3925868548"},
        "values": {"gain": {"value": 1.0, "u": 3e-4, "record": record,
                            "expires_utc": (made + timedelta(days=90)).isoformat()},
                   "offset_a": {"value": 0.0, "u": 2e-8, "record": record,
                                "expires_utc": (made + timedelta(days=1)).isoformat()}}}
    with RunWriter.create(run_dir, plan={"name": "quick", "seed": 20261121},
                          fixture={"name": "bench", "instrument": {"kind": "ppk2",
                                                                   "supply_v": 3.0}},
                          firmware=HELLO, calibration=calibration, seed=20261121):
        pass
    return run_dir


def test_the_paragraph_names_instrument_calibration_firmware_seed_and_software(
        tmp_path: Path) -> None:
    made = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=3)
    run = load(_calibrated_run(tmp_path / "run", made))
    text = methods_paragraph(run)
    for fact in ("ppk2", "PPK2 (HW 9173)", "serial 3925868548", run.manifest["calibration"]["id"],
                 "3.0 days old when the run started",
                 f"offset_a, expires {made + timedelta(days=1):%Y-%m-%d %H:%M} UTC",
                 "firmware 0.3.1", "build 9f3e2aa", "GNU 12.2.1", "64 MHz", "mbedtls-3.6.5",
                 "mbedtls_aes_tables=full-ram", "optimization=-O2", "seed 20261121",
                 f"energyrig {run.manifest['software']['energyrig']}", "3 V"):
        assert fact in text, fact
    assert NOT_RECORDED not in text.replace("uncertainty budget of the points is not "
                                            "recorded", "")


def test_what_the_manifest_lacks_reads_not_recorded(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "bare", firmware={"board": "host"},
                          calibration={"id": "synthetic-identity"}):
        pass
    text = methods_paragraph(load(tmp_path / "bare"))
    for fact in (f"model {NOT_RECORDED}", f"serial {NOT_RECORDED}",
                 f"age at run time {NOT_RECORDED}", f"expiry {NOT_RECORDED}",
                 f"build {NOT_RECORDED}", f"configured as {NOT_RECORDED}",
                 f"seed {NOT_RECORDED}", f"budget of the points is {NOT_RECORDED}"):
        assert fact in text, fact


def test_each_point_names_the_largest_component_of_its_budget(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run", boards=BOARDS[:1], ops=OPS[:2], payloads=(64,),
                       reps=1, n_windows=3,
                       uncertainty={"net_energy_per_op_u_j": 1e-8, "time_per_op_u_s": 1e-6,
                                    "uncertainty_budget": BUDGET})
    run = load(run_dir)
    largest = largest_components(run.points)
    assert len(largest) == (run.points["status"] == "ok").sum() == 2
    assert set(largest["component"]) == {"gain calibration"}
    assert largest["share"].to_list() == pytest.approx([16 / 26] * 2)
    assert "largest component of its budget was gain calibration for 2 points" in \
        methods_paragraph(run)


def test_the_report_carries_the_paragraph_and_writes_methods_md(tmp_path: Path) -> None:
    made = datetime.now(timezone.utc) - timedelta(hours=2)
    run_dir = _calibrated_run(tmp_path / "run", made)
    page = write_report(run_dir, flags=FLAGS)
    paragraph = methods_paragraph(load(run_dir))
    assert "<h2 id='methods'>Methods</h2>" in page.read_text()
    assert f"<p class='methods'>{html.escape(paragraph)}</p>" in page.read_text()
    md = (page.parent / "methods.md").read_text()
    assert md.startswith("# Methods: quick\n\n" + paragraph)
