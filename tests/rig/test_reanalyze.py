"""A run re-analysed as it was made: the manifest records every version a figure depends on
(read back here), `rig --version --verbose` prints the same, `rig report` warns in one line
when they differ, and `rig reanalyze` recomputes every window's and point's figures from the
samples a quick sweep kept (`--keep-captures all`): unchanged code reproduces every figure,
a changed statistic or energy formula is reported with the figures it moved.

One calibrated sweep on the simulated bench (two points, three windows each) serves them all."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pandas as pd
import pytest
from support.paths import ROOT
from typer.testing import CliRunner

import energyrig
import energyrig.domain
import energyrig.results.stats
import energyrig.rig.reanalyze
from energyrig.calibration.store import CalibrationStore, Identity, Measured, new_record
from energyrig.cli.app import app
from energyrig.fixtures import load_fixture
from energyrig.results import load
from energyrig.results.store.read import read_manifest
from energyrig.results.versions import FIGURE_PACKAGES, figure_changes
from energyrig.rig.dut import open_dut
from energyrig.rig.plan import load_plan
from energyrig.rig.reanalyze import TOLERANCE, reanalyze
from energyrig.rig.sweep.boards import calibrated_benches
from energyrig.rig.sweep.run import start_sweep

SIM = ROOT / "fixtures" / "sim.toml"
SIM_PPK2 = Identity(kind="ppk2", name="PPK2 (HW 9173)")
#: A complete calibration with a window overhead, so the overhead is taken out and every
#: window has an uncertainty budget (each value's u > 0).
CALIBRATION = {"offset_a": (1e-7, 1e-8), "gain": (1.001, 1e-4), "skew_s": (0.0, 1e-6),
               "overhead_s": (2e-5, 1e-6), "overhead_j": (1e-8, 1e-9)}
PLAN = """
name = "kept"
seed = 7
repetitions = 1
batch = "auto"
[adaptive]
metric = "energy_per_op_j"
ci_target = 0.01
min_windows = 3
max_windows = 3
[[factors]]
op = ["sha256", "aes-ecb-encrypt"]
key_bits = [128]
payload_bytes = [64]
"""


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A calibrated quick sweep that kept every window's samples (read only: tests that
    write copy it)."""
    tmp = tmp_path_factory.mktemp("kept")
    fixture = load_fixture(SIM)
    with open_dut(fixture) as dut:
        hello = dut.hello()
    record = CalibrationStore(tmp / "cal").save(new_record(fixture, SIM_PPK2, hello, {
        q: Measured(value=v, u=u, method="test", reference="chosen by the test")
        for q, (v, u) in CALIBRATION.items()}))
    (tmp / "plan.toml").write_text(PLAN, encoding="utf-8")
    outcome = start_sweep(load_plan(tmp / "plan.toml"), tmp / "run", fixture=fixture,
                          bench_factory=calibrated_benches(str(record)),
                          keep_captures="all")
    assert outcome.measured == 2 and outcome.failed == 0
    return tmp / "run"


@pytest.fixture
def run_copy(kept_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(kept_run, tmp_path / "run"))


def test_the_manifest_records_every_version(kept_run: Path) -> None:
    manifest = read_manifest(kept_run)
    # the firmware's build and the compiler that built it, as its hello says
    assert re.fullmatch(r"(GNU|Clang) \d+\.\d+.*", manifest["firmware"]["toolchain"])
    assert manifest["firmware"]["build"] not in ("", "unknown")
    recorded = manifest["versions"]
    assert recorded["python"] == {name: version(name) for name in FIGURE_PACKAGES}
    package = Path(energyrig.__file__).parent
    kernels = {"energyrig.energy._energy": next((package / "energy").glob("_energy.*.so")),
               "energyrig.instruments.ppk2._decode":
                   next((package / "instruments" / "ppk2").glob("_decode.*.so"))}
    assert recorded["kernels"] == {
        name: "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
        for name, path in kernels.items()}
    assert recorded["programs"] == {}  # the simulated bench runs no sigrok-cli, ser2net, qemu
    if shutil.which("dpkg-query"):
        mbedtls = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libmbedtls-dev"],
                                 capture_output=True, text=True)
        if mbedtls.returncode == 0:
            assert recorded["debian"]["libmbedtls-dev"] == mbedtls.stdout


def test_version_verbose_prints_what_a_manifest_records(kept_run: Path) -> None:
    result = CliRunner().invoke(app, ["--version", "--verbose"])
    assert result.exit_code == 0, result.output
    lines = set(result.stdout.splitlines())
    recorded = read_manifest(kept_run)["versions"]
    for section in ("python", "kernels"):
        for name, value in recorded[section].items():
            assert f"{section}.{name}: {value}" in lines
    firmware = read_manifest(kept_run)["firmware"]  # the default fixture is the run's
    for name in ("build", "toolchain"):
        assert f"firmware.{name}: {firmware[name]}" in lines
    assert CliRunner().invoke(app, ["--version"]).stdout == f"energyrig {energyrig.__version__}\n"


def test_unchanged_code_reproduces_every_figure(run_copy: Path) -> None:
    run = load(run_copy)
    result = CliRunner().invoke(app, ["reanalyze", str(run_copy)])
    assert result.exit_code == 0, result.output
    assert "none moved beyond 1e-12 relative" in result.stdout
    figures = pd.read_csv(run_copy / "reanalysis" / "figures.csv")
    windows = figures[figures["table"] == "window"]
    points = figures[figures["table"] == "point"]
    assert windows.groupby(["point_key", "window"]).ngroups == len(run.windows) == 6
    assert points["point_key"].nunique() == len(run.points) == 2
    assert (figures["rel_diff"] <= TOLERANCE).all()
    # The budget and the overhead were computed, not only carried (a calibrated run).
    for name in ("net_energy_u_j", "overhead_s"):
        stored = windows.loc[windows["figure"] == name, "stored"]
        assert (stored > 0).all(), name
    assert points.loc[points["figure"] == "net_energy_per_op_u_j", "stored"].gt(0).all()
    summary = json.loads((run_copy / "reanalysis" / "summary.json").read_text())
    assert summary["moved"] == 0 and summary["figures"] == len(figures)


def test_a_changed_statistic_is_reported_with_the_figures_it_moved(
        run_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fitted = energyrig.results.stats.fitted_interval

    def wider(values, confidence=0.95):  # a statistic "improved": the interval 1 % wider
        s = fitted(values, confidence)
        half = (s.ci_high - s.ci_low) / 2 * 0.01
        return dataclasses.replace(s, ci_low=s.ci_low - half, ci_high=s.ci_high + half)

    monkeypatch.setattr(energyrig.results.stats, "fitted_interval", wider)
    result = CliRunner().invoke(app, ["reanalyze", str(run_copy)])
    assert result.exit_code == 4, result.output
    moved = pd.read_csv(run_copy / "reanalysis" / "figures.csv").query("rel_diff > 1e-12")
    assert set(moved["table"]) == {"point"}
    assert set(moved["figure"]) == {f"{col}_{end}" for col in
                                    ("time_per_op_s", "energy_per_op_j", "net_energy_per_op_j")
                                    for end in ("ci_low", "ci_high")}
    verdict = result.stdout.splitlines()[0]
    assert f"{len(moved)} moved beyond 1e-12 relative" in verdict
    assert "net_energy_per_op_j_ci_high" in verdict
    # by how much: 1 % of the interval's half-width, relative to each bound
    ci = moved.set_index(["point_key", "figure"])
    for (key, figure), row in ci.iterrows():
        col = figure.rsplit("_ci_", 1)[0]
        low, high = (ci.loc[(key, f"{col}_ci_{end}"), "stored"] for end in ("low", "high"))
        shift = (high - low) / 2 * 0.01
        assert row["recomputed"] - row["stored"] == pytest.approx(
            -shift if figure.endswith("low") else shift, rel=1e-6)
        assert row["rel_diff"] == pytest.approx(shift / abs(row["stored"]), rel=1e-6)


def test_a_changed_energy_formula_moves_the_net_figures_only(
        run_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    net = energyrig.domain.net_energy
    monkeypatch.setattr(energyrig.domain, "net_energy", lambda e, b, d: net(e, b, d) * (1 + 1e-9))
    result = reanalyze(run_copy)
    moved = result.moved
    assert set(moved.loc[moved["table"] == "window", "figure"]) >= {"net_energy_j",
                                                                     "net_energy_per_op_j"}
    assert not set(moved["figure"]) & {"energy_j", "duration_s", "start_s", "baseline_w",
                                       "energy_per_op_j_mean", "time_per_op_s_mean"}
    rel = moved.loc[moved["figure"] == "net_energy_j", "rel_diff"]
    assert rel.to_numpy() == pytest.approx(1e-9, rel=1e-3)


def test_report_warns_in_one_line_when_the_statistics_changed(run_copy: Path) -> None:
    manifest = json.loads((run_copy / "manifest.json").read_text())
    assert figure_changes(manifest) == []
    manifest["versions"]["python"]["statsmodels"] = "0.1"
    (run_copy / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(app, ["report", str(run_copy)])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("rig: warning")]
    assert len(warnings) == 1
    assert f"statsmodels 0.1 → {version('statsmodels')}" in warnings[0]
    assert f"rig reanalyze {run_copy}" in warnings[0]


def test_a_run_without_exact_samples_is_one_error(run_copy: Path) -> None:
    for npz in run_copy.glob("captures/*/*.npz"):
        npz.unlink()
    result = subprocess.run([sys.executable, "-m", "energyrig.cli.app", "reanalyze",
                             str(run_copy)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("rig: error: ")
    assert "--keep-captures all" in result.stderr


def test_a_window_the_run_left_out_for_its_stream_stays_out(
        run_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window stored with ``stream_loss`` (the stream lost samples its counter could not
    count: a fact of the acquisition, not of the kept samples) is out of its point's
    estimate when recomputed, as it was in the run; under load the emulated PPK2 raises it,
    and reanalysis then moved the per-op figures of the point it had been left out of."""
    stored = load(run_copy)
    key = stored.points["point_key"].iloc[0]
    mine = stored.windows[stored.windows["point_key"] == key]
    lost = int(mine["window"].iloc[0])
    windows = stored.windows.copy()
    at = windows.index[(windows["point_key"] == key) & (windows["window"] == lost)][0]
    windows.at[at, "flag_list"] = ["stream_loss"]
    real_load = energyrig.rig.reanalyze.load
    monkeypatch.setattr(energyrig.rig.reanalyze, "load", lambda path: dataclasses.replace(
        real_load(path), windows=windows))
    figures = pd.read_csv(reanalyze(run_copy).path / "figures.csv")
    point = figures[(figures["table"] == "point") & (figures["point_key"] == key)]
    recomputed = point.set_index("figure")["recomputed"]
    kept = mine[mine["window"] != lost]
    assert recomputed["energy_per_op_j_mean"] == pytest.approx(
        kept["energy_per_op_j"].mean(), rel=1e-9)
    assert recomputed["time_per_op_s_mean"] == pytest.approx(
        kept["time_per_op_s"].mean(), rel=1e-9)
