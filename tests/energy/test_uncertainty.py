"""A window's uncertainty budget (energyrig.energy.budget.window_budget) on synthetic
records of known noise and known edge phases: closed forms, and the coverage of the expanded
uncertainty over many windows."""
from __future__ import annotations

import math

import numpy as np
import pytest

from energyrig.energy.budget import (
    UNSTATED_SUPPLY,
    K,
    Supply,
    combined,
    window_budget,
)
from energyrig.capture import Chunk
from energyrig.energy.stats import WindowStats, window_stats
from energyrig.energy.windows import WindowSettings, find_windows

T = 1e-5                       # 100 kS/s
V = 3.0
IDLE_A, ACTIVE_A = 1e-3, 3e-3
SETTINGS = WindowSettings(guard_s=1e-4, baseline_s=2e-3)   # 10 and 200 samples
CALIBRATED = {"id": "r1", "values": {"gain": {"value": 1.0, "u": 0.0},
                                     "skew_s": {"value": 0.0, "u": 0.0},
                                     "overhead_j": {"value": 0.0, "u": 0.0}}}
EXACT = Supply(0.0, "the synthetic record's supply is exact")


def fine(current_a: float) -> float:
    """An ADC step far below the noise: no quantisation to speak of."""
    return 1e-12


def record(rng: np.random.Generator, noise_a: float) -> tuple[list[Chunk], float]:
    """A record of idle, one window of 300 ± 50 samples whose edges fall at random phases
    of the sample clock, and idle; and the window's true net energy, J."""
    n = 700
    t_rise = (300 + rng.uniform()) * T
    t_fall = t_rise + rng.uniform(250, 350) * T
    t = np.arange(n) * T
    high = (t >= t_rise) & (t < t_fall)
    current = np.where(high, ACTIVE_A, IDLE_A) + rng.normal(0.0, noise_a, n)
    chunk = Chunk(0, T, current, V, logic=high.astype(np.uint8))
    return [chunk], V * (ACTIVE_A - IDLE_A) * (t_fall - t_rise)


def measured(chunks: list[Chunk], step_a=fine, calibration=CALIBRATED):
    (window,) = find_windows(chunks, SETTINGS)
    stats = window_stats(chunks, window, SETTINGS, step_a)
    return window, stats, window_budget(stats, calibration, EXACT)


def test_the_statistics_of_a_window_are_those_of_its_record() -> None:
    chunks, _ = record(np.random.default_rng(1), noise_a=0.0)
    window, stats, _ = measured(chunks)
    assert stats.baseline_samples == 200 and stats.baseline_std_w == 0.0
    assert stats.samples == window.samples
    assert stats.edge_rise_w == pytest.approx(V * (ACTIVE_A - IDLE_A))
    assert stats.edge_fall_w == pytest.approx(V * (ACTIVE_A - IDLE_A))
    assert stats.skew_step_w == pytest.approx(V * (ACTIVE_A - IDLE_A))
    assert stats.supply_v == V
    assert math.isnan(window_stats(chunks, window, SETTINGS, None).step_window_a)


def test_each_component_in_closed_form() -> None:
    stats = WindowStats(period_s=T, samples=400, net_energy_j=2e-5, duration_s=400 * T,
                        baseline_std_w=3e-4, baseline_samples=100, edge_rise_w=6e-3,
                        edge_fall_w=8e-3, skew_step_w=5e-3, supply_v=V,
                        step_window_a=2e-6, step_baseline_a=1e-6)
    cal = {"id": "r1", "values": {"gain": {"value": 1.02, "u": 0.00102},
                                  "skew_s": {"value": 7e-5, "u": 1e-6},
                                  "overhead_j": {"value": 2e-6, "u": 3e-8}}}
    u = {c.name: c.u for c in window_budget(stats, cal, Supply(0.01, "test"))}
    assert u["edge quantisation"] == pytest.approx(T / math.sqrt(12) * 1e-2)
    assert u["baseline noise"] == pytest.approx(400 * T * 3e-4 / 10)
    assert u["sample noise"] == pytest.approx(
        T * 20 * math.sqrt(3e-4 ** 2 + (4e-12 - 1e-12) / 12 * V ** 2))
    sigma = 1e-4  # 3e-4 W at 3 V
    residual = [d / (math.pi * math.sqrt(2)) * math.exp(-2 * math.pi ** 2 * sigma ** 2 / d ** 2)
                for d in (2e-6, 1e-6)]
    assert u["ADC resolution"] == pytest.approx(V * 400 * T * math.hypot(*residual))
    assert u["gain calibration"] == pytest.approx(2e-5 * 0.001)
    assert u["skew calibration"] == pytest.approx(1e-6 * 5e-3)
    assert u["window overhead"] == pytest.approx(3e-8)
    assert u["offset calibration"] == 0.0  # one range: the baseline's offset cancels
    # ± 1 %, rectangular; twice, since the gain was calibrated at that supply (V / R)
    assert u["supply voltage"] == pytest.approx(2 * 2e-5 * 0.01 / math.sqrt(3))


def test_the_supply_tolerance_is_a_rectangular_component() -> None:
    stats = WindowStats(T, 400, 2e-5, 400 * T, 0.0, 100, 6e-3, 6e-3, 6e-3, V, 2e-6, 2e-6)
    no_gain = {"id": "r1", "values": {}}
    u = {c.name: c for c in window_budget(stats, no_gain, Supply(0.01, "fixture"))}
    assert u["supply voltage"].u == 2e-5 * 0.01 / math.sqrt(3)  # E · tol / sqrt(3), exactly
    assert u["supply voltage"].type == "B" and "fixture" in u["supply voltage"].source
    unstated = {c.name: c for c in window_budget(stats, CALIBRATED, UNSTATED_SUPPLY)}
    assert math.isnan(unstated["supply voltage"].u)
    assert "not stated" in unstated["supply voltage"].source


def test_gain_and_offset_per_range_weigh_the_net_energy_in_each_range() -> None:
    # Net 2e-5 J: 2.4e-5 J of samples in range 1, less 0.4e-5 J of baseline in range 0;
    # the window's time: 400 samples in range 1, its duration taken from range 0.
    stats = WindowStats(T, 400, 2e-5, 400 * T, 0.0, 100, 6e-3, 6e-3, 6e-3, V, 2e-6, 2e-6,
                        range_energy_j=(-0.4e-5, 2.4e-5), range_time_s=(-400 * T, 400 * T))
    cal = {"id": "r1", "values": {
        "gain": {"value": 1.0, "u": 5e-3, "ranges": {"0": {"value": 0.99, "u": 0.99e-3},
                                                    "1": {"value": 1.02, "u": 2.04e-3}}},
        "offset_a": {"value": 0.0, "u": 1e-6, "ranges": {"0": {"value": 2e-6, "u": 1e-7},
                                                        "1": {"value": -5e-6, "u": 3e-7}}},
        "skew_s": {"value": 0.0, "u": 0.0}, "overhead_j": {"value": 0.0, "u": 0.0}}}
    u = {c.name: c.u for c in window_budget(stats, cal, EXACT)}
    assert u["gain calibration"] == pytest.approx(math.hypot(0.4e-5 * 1e-3, 2.4e-5 * 2e-3))
    assert u["offset calibration"] == pytest.approx(V * 400 * T * math.hypot(1e-7, 3e-7))
    # A record with one value: every range shares its error, so the parts add up first.
    one = {"id": "r0", "values": {q: {"value": v["value"], "u": v["u"]}
                                  for q, v in cal["values"].items()}}
    u = {c.name: c.u for c in window_budget(stats, one, EXACT)}
    assert u["gain calibration"] == pytest.approx(2e-5 * 5e-3)
    assert u["offset calibration"] == pytest.approx(0.0, abs=1e-18)


def test_an_undithered_quantiser_leaves_its_whole_bias() -> None:
    stats = WindowStats(T, 400, 2e-5, 400 * T, 0.0, 100, 6e-3, 6e-3, 6e-3, V, 2e-6, 2e-6)
    u = {c.name: c.u for c in window_budget(stats, CALIBRATED, EXACT)}
    assert u["ADC resolution"] == pytest.approx(V * 400 * T * 2e-6 / math.pi)  # two of Δ/(π√2)


def test_a_window_without_baseline_has_no_uncertainty() -> None:
    stats = WindowStats(T, 400, math.nan, 400 * T, math.nan, 0, 6e-3, 6e-3, 6e-3, V, 2e-6,
                        math.nan)
    assert math.isnan(combined(window_budget(stats, CALIBRATED, EXACT)))


def test_what_is_not_known_makes_the_uncertainty_unknown() -> None:
    chunks, _ = record(np.random.default_rng(2), noise_a=1e-5)
    _, _, uncalibrated = measured(chunks, calibration=None)
    assert math.isnan(combined(uncalibrated))
    _, _, no_resolution = measured(chunks, step_a=None)
    assert math.isnan(combined(no_resolution))


@pytest.mark.parametrize("noise_a", [0.0, 5e-5, 2e-4])
def test_the_expanded_uncertainty_covers_the_truth_of_95_percent_of_windows(
        noise_a: float) -> None:
    """Edges at random phases and white noise of known size: about 95 % of 1 500 windows
    lie within U (k = 2) of the truth (the edges' rectangular errors make it a little more),
    and U is not inflated: a normal error has median |e| = 0.674 σ, so U is ~3 times it."""
    rng = np.random.default_rng(10)
    errors, expanded = [], []
    for _ in range(1500):
        chunks, truth = record(rng, noise_a)
        window, _, budget = measured(chunks)
        errors.append(window.net_energy_j - truth)
        expanded.append(K * combined(budget))
    errors, expanded = np.abs(errors), np.array(expanded)
    coverage = float(np.mean(errors <= expanded))
    assert 0.94 <= coverage <= 0.995
    assert 2.0 <= np.median(expanded) / np.median(errors) <= 4.5
