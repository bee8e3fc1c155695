"""Paired comparisons, payload regressions and the 2^k allocation of variation, against
scipy/statsmodels and against designs whose answer is known (Jain's worked examples). scipy and
statsmodels are imported by the tests that compare with them, not at collection: every
`make check` worker collects every file (docs/performance.md, "The test suite's time")."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from energyrig.results.stats import (
    _skewness,
    allocation_of_variation,
    describe,
    describe_finite,
    fitted_interval,
    is_two_level_design,
    paired_comparison,
    payload_regression,
)

# ------------------------------------------------------------------ describe


def test_describe_matches_statsmodels() -> None:
    from statsmodels.stats.weightstats import DescrStatsW
    x = np.random.default_rng(3).normal(5e-6, 1e-7, 25)
    d = describe(x)
    low, high = DescrStatsW(x).tconfint_mean(alpha=0.05)
    assert (d.n, d.mean, d.median, d.std) == pytest.approx((25, x.mean(), np.median(x),
                                                           x.std(ddof=1)), rel=1e-12)
    assert (d.ci_low, d.ci_high) == pytest.approx((low, high), rel=1e-12)
    assert d.ci_halfwidth_rel == pytest.approx((high - low) / 2 / x.mean())


def test_describe_of_constant_and_single_values() -> None:
    assert (describe([2.0, 2.0, 2.0]).ci_low, describe([2.0, 2.0]).ci_high) == (2.0, 2.0)
    one = describe([4.0])
    assert one.n == 1 and one.mean == 4.0 and np.isnan(one.std) and np.isnan(one.ci_low)
    with pytest.raises(ValueError):
        describe([])


def test_describe_finite_leaves_out_nan_and_inf() -> None:
    from statsmodels.stats.weightstats import DescrStatsW
    x = np.random.default_rng(4).normal(1.0, 0.1, 10)
    d = describe_finite([*x, np.nan, np.inf, -np.inf])
    low, high = DescrStatsW(x).tconfint_mean(alpha=0.05)
    assert d is not None and d.n == 10
    assert (d.mean, d.ci_low, d.ci_high) == pytest.approx((x.mean(), low, high), rel=1e-12)
    assert describe_finite([np.nan, np.nan]) is None and describe_finite([]) is None


# ------------------------------------------------------------------ paired comparison


def _pairs_frame(rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    sizes = [64, 256, 1024, 4096, 16384]
    boards = ["nrf52840dk", "esp32"]
    rows, a_means, b_means = [], [], []
    for board, size in itertools.product(boards, sizes):
        base = size * (1.0 if board == "esp32" else 3.0) * 1e-9
        a_vals = base * 2.0 * (1 + 0.05 * rng.standard_normal(2))
        b_vals = base * (1 + 0.05 * rng.standard_normal(2))
        for rep, (va, vb) in enumerate(zip(a_vals, b_vals, strict=True)):
            rows.append({"op": "aes-ecb-encrypt", "key_bits": 256, "board": board,
                         "payload_bytes": size, "rep": rep, "e": va})
            rows.append({"op": "rc6-ecb-encrypt", "key_bits": 128, "board": board,
                         "payload_bytes": size, "rep": rep, "e": vb})
        a_means.append(a_vals.mean())
        b_means.append(b_vals.mean())
    return pd.DataFrame(rows), np.array(a_means), np.array(b_means)


def test_fitted_interval_keeps_the_t_interval_where_it_fits_and_bootstraps_skewed_data(
        ) -> None:
    from scipy import stats
    rng = np.random.default_rng(3)
    normal = 1e-3 * (1 + 0.01 * rng.standard_normal(10))
    assert fitted_interval(normal) == describe(normal)
    skewed = np.r_[0.05, normal[1:]]  # one long warm-up window among ten
    t = describe(skewed)
    assert t.ci_low < 0
    d = fitted_interval(skewed)
    assert d.ci_method == "bootstrap" and (d.n, d.mean, d.std) == (t.n, t.mean, t.std)
    assert skewed.min() <= d.ci_low < d.mean < d.ci_high <= skewed.max()
    assert fitted_interval(skewed) == d  # a fixed seed: the same summary every time
    assert describe_finite(np.r_[skewed, np.nan], fit=True) == d
    assert _skewness(skewed) == pytest.approx(stats.skew(skewed, bias=False), rel=1e-12)


def test_paired_comparison_matches_statsmodels() -> None:
    from statsmodels.stats.weightstats import DescrStatsW
    df, ya, yb = _pairs_frame(np.random.default_rng(11))
    df["key_bits"] = df["key_bits"].astype("Int64")
    r = paired_comparison(df, {"op": "aes-ecb-encrypt", "key_bits": 256}, "rc6-ecb-encrypt",
                          on=["board", "payload_bytes"], response="e")
    assert r.n_pairs == 10  # the two repetitions of each condition are averaged first
    logs = DescrStatsW(np.log(ya / yb))
    assert r.p_value == pytest.approx(logs.ttest_mean(0.0)[1], rel=1e-10)
    assert r.ratio == pytest.approx(np.exp(logs.mean), rel=1e-12)
    assert (r.ratio_ci_low, r.ratio_ci_high) == pytest.approx(np.exp(logs.tconfint_mean()),
                                                              rel=1e-10)
    # a costs twice b: replacing a by b saves about half
    assert r.lower == "rc6-ecb-encrypt" and r.significant
    assert r.ratio == pytest.approx(2.0, rel=0.05)
    assert r.gain_pct == pytest.approx(100 * (1 - 1 / r.ratio))
    assert r.gain_ci_low < r.gain_pct < r.gain_ci_high
    assert r.gain_ci_low == pytest.approx(100 * (1 - 1 / r.ratio_ci_low))


def test_exact_ratio_gives_exact_gain_either_way_round() -> None:
    df = pd.DataFrame({"op": ["a"] * 4 + ["b"] * 4, "size": [1, 2, 3, 4] * 2,
                       "t": [1.0, 2.0, 3.0, 4.0, 0.8, 1.6, 2.4, 3.2]})
    ab = paired_comparison(df, "a", "b", on=["size"], response="t")
    ba = paired_comparison(df, "b", "a", on=["size"], response="t")
    assert ab.ratio == pytest.approx(1.25) and ba.ratio == pytest.approx(0.8)
    for r in (ab, ba):
        assert r.lower == "b"
        assert (r.gain_pct, r.gain_ci_low, r.gain_ci_high) == pytest.approx((20.0,) * 3)
    assert ab.significant


def test_paired_comparison_needs_two_matched_conditions() -> None:
    df = pd.DataFrame({"op": ["a", "b", "b"], "size": [1, 1, 2], "t": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"under 1 common condition\(s\) \(same size\)"):
        paired_comparison(df, "a", "b", on=["size"], response="t")
    with pytest.raises(KeyError, match="curve"):
        paired_comparison(df, {"curve": "p256"}, "b", on=["size"], response="t")


def test_equal_algorithms_are_not_significantly_different() -> None:
    rng = np.random.default_rng(5)
    base = np.linspace(1, 10, 8)
    df = pd.DataFrame({"op": ["a"] * 8 + ["b"] * 8, "size": list(range(8)) * 2,
                       "t": np.r_[base + 0.01 * rng.standard_normal(8),
                                  base + 0.01 * rng.standard_normal(8)]})
    r = paired_comparison(df, "a", "b", on=["size"], response="t")
    assert not r.significant and r.ratio_ci_low < 1.0 < r.ratio_ci_high


def test_one_verdict_where_a_mean_difference_would_contradict_the_ratio() -> None:
    # A costs 2.65 times B at sizes spanning three decades: the per-size differences are
    # dominated by the largest size, so their t interval contains 0 ("not significant")
    # while the ratio is tight around 2.65. The comparison has one method, one verdict.
    b = np.array([1e-6, 1e-5, 1e-4, 1e-3])
    a = b * 2.65 * np.array([1.01, 0.99, 1.02, 0.98])
    df = pd.DataFrame({"op": ["a"] * 4 + ["b"] * 4, "size": [1, 2, 3, 4] * 2,
                       "t": np.r_[a, b]})
    diff = describe(a - b)
    assert diff.ci_low < 0.0 < diff.ci_high  # what the old table printed beside the ratio
    r = paired_comparison(df, "a", "b", on=["size"], response="t")
    assert r.ratio == pytest.approx(2.65, rel=0.01)
    assert 1.0 < r.ratio_ci_low < r.ratio < r.ratio_ci_high
    assert r.significant and r.lower == "b" and r.p_value < 0.05
    assert not hasattr(r, "mean_diff")


def test_a_ratio_interval_containing_one_gives_no_verdict() -> None:
    # the "AES-128 called faster with A/B 1.01 [0.52, 1.94]"
    df = pd.DataFrame({"op": ["a"] * 3 + ["b"] * 3, "size": [1, 2, 3] * 2,
                       "t": [1.0, 2.0, 1.5, 1.4, 1.0, 1.6]})
    r = paired_comparison(df, "a", "b", on=["size"], response="t")
    assert r.ratio_ci_low < 1.0 < r.ratio_ci_high
    assert not r.significant


# ------------------------------------------------------------------ regression


def test_payload_regression_recovers_a_known_line_like_statsmodels() -> None:
    import statsmodels.formula.api as smf
    rng = np.random.default_rng(42)
    sizes = np.repeat([64, 256, 1024, 4096, 16384], 4)
    slope, intercept = 7.0e-9, 2.0e-6  # 7 nJ per byte, 2 µJ fixed
    rows = []
    for board, scale in (("nrf52840dk", 1.0), ("esp32", 2.0)):
        y = scale * (intercept + slope * sizes) + rng.normal(0, 5e-7, sizes.size)
        rows.append(pd.DataFrame({"board": board, "op": "sha256", "payload_bytes": sizes,
                                  "net_energy_per_op_j": y}))
    df = pd.concat(rows, ignore_index=True)
    fits = payload_regression(df, "net_energy_per_op_j", by=("board", "op"))
    assert list(fits["board"]) == ["esp32", "nrf52840dk"]
    for _, fit in fits.iterrows():
        sub = df[df["board"] == fit["board"]]
        ref = smf.ols("net_energy_per_op_j ~ payload_bytes", data=sub).fit()
        ci = ref.conf_int()
        assert fit["slope"] == pytest.approx(ref.params["payload_bytes"], rel=1e-9)
        assert fit["intercept"] == pytest.approx(ref.params["Intercept"], rel=1e-9)
        assert fit["r2"] == pytest.approx(ref.rsquared, rel=1e-12)
        assert (fit["slope_ci_low"], fit["slope_ci_high"]) == \
            pytest.approx(tuple(ci.loc["payload_bytes"]), rel=1e-9)
        scale = 2.0 if fit["board"] == "esp32" else 1.0
        assert fit["slope_ci_low"] < scale * slope < fit["slope_ci_high"]
        assert fit["slope_significant"] and fit["n"] == 20


def test_payload_regression_gives_the_bits_of_statsmodels_ols() -> None:
    """The line is statsmodels' OLS arithmetic without statsmodels (stats._ols_line): every
    figure of a row equal to the last bit to what ``sm.OLS(...).fit()`` gives."""
    import statsmodels.api as sm
    rng = np.random.default_rng(7)
    for sizes in (np.repeat([64.0, 256.0, 1024.0, 4096.0], 3), np.array([16.0, 16.0, 32.0]),
                  rng.uniform(1.0, 1e5, 40)):
        y = 3e-6 + 4e-9 * sizes + rng.normal(0, 2e-7, sizes.size)
        row = payload_regression(pd.DataFrame({"op": "aes", "payload_bytes": sizes, "t": y}),
                                 "t", by=("op",), confidence=0.9).iloc[0]
        ref = sm.OLS(y, sm.add_constant(sizes)).fit()
        ci, cov = ref.conf_int(alpha=0.1), ref.cov_params()
        for i, name in enumerate(("intercept", "slope")):
            assert row[name] == ref.params[i]
            assert (row[f"{name}_ci_low"], row[f"{name}_ci_high"]) == (ci[i, 0], ci[i, 1])
            assert row[f"{name}_p"] == ref.pvalues[i]
        assert row["r2"] == ref.rsquared and row["df_resid"] == ref.df_resid
        assert (row["var_intercept"], row["var_slope"], row["cov_intercept_slope"]) == \
            (cov[0, 0], cov[1, 1], cov[0, 1])


def test_an_interval_containing_zero_is_not_significant() -> None:
    rng = np.random.default_rng(0)
    x = np.repeat([16.0, 64.0, 256.0, 1024.0], 5)
    df = pd.DataFrame({"op": "aes", "board": "b", "payload_bytes": x,
                       "t": 3e-9 * x + rng.normal(0, 1e-7, x.size)})  # no fixed cost
    fit = payload_regression(df, "t", by=("op",)).iloc[0]
    assert fit["intercept_ci_low"] < 0.0 < fit["intercept_ci_high"]
    assert not fit["intercept_significant"] and fit["slope_significant"]
    flat = df.assign(t=5e-6 + rng.normal(0, 1e-7, x.size))  # time independent of size
    fit = payload_regression(flat, "t", by=("op",)).iloc[0]
    assert not fit["slope_significant"] and fit["intercept_significant"]


def test_groups_without_enough_sizes_are_left_out() -> None:
    df = pd.DataFrame({"op": ["a"] * 3 + ["b"] * 2, "payload_bytes": [1, 1, 1, 1, 2],
                       "t": [1.0, 1.1, 0.9, 1.0, 2.0]})
    assert payload_regression(df, "t", by=("op",)).empty


# ------------------------------------------------------------------ 2^k design


def test_jain_2x2_unreplicated_example() -> None:
    # Jain, Art of Computer Systems Performance Analysis, ch. 17: memory size x cache size,
    # performance in MIPS. q0 = 40, qA = 20, qB = 10, qAB = 5; 76 %, 19 %, 5 %.
    df = pd.DataFrame({"memory_mb": [4, 16, 4, 16], "cache_kb": [1, 1, 2, 2],
                       "mips": [15.0, 45.0, 25.0, 75.0]})
    t = allocation_of_variation(df, ["memory_mb", "cache_kb"], "mips").set_index("term")
    assert t.attrs["mean_effect"] == pytest.approx(40.0)
    assert list(t.index) == ["memory_mb", "cache_kb", "memory_mb:cache_kb"]
    assert list(t["effect"]) == pytest.approx([20.0, 10.0, 5.0])
    assert list(t["sum_of_squares"]) == pytest.approx([1600.0, 400.0, 100.0])
    assert list(t["fraction"]) == pytest.approx([1600 / 2100, 400 / 2100, 100 / 2100])
    assert t["ci_low"].isna().all()  # no replication, no error estimate


def test_jain_2x2_with_three_replications() -> None:
    # Jain ch. 18 (same design, r = 3): effects 41, 21.5, 9.5, 5;
    # SSA = 5547, SSB = 1083, SSAB = 300, SSE = 102, SST = 7032.
    ys = {(4, 1): [15, 18, 12], (16, 1): [45, 48, 51], (4, 2): [25, 28, 19],
          (16, 2): [75, 75, 81]}
    df = pd.DataFrame([{"memory_mb": a, "cache_kb": b, "mips": float(y)}
                       for (a, b), vals in ys.items() for y in vals])
    t = allocation_of_variation(df, ["memory_mb", "cache_kb"], "mips").set_index("term")
    assert t.attrs["mean_effect"] == pytest.approx(41.0) and t.attrs["replications"] == 3
    assert list(t["effect"].iloc[:3]) == pytest.approx([21.5, 9.5, 5.0])
    assert list(t["sum_of_squares"]) == pytest.approx([5547.0, 1083.0, 300.0, 102.0])
    assert list(t["fraction"]) == pytest.approx(np.array([5547, 1083, 300, 102]) / 7032)
    # Jain 18.4: s_e = sqrt(102/8) = 3.57, s_q = s_e/sqrt(12) = 1.03, t[0.975; 8] = 2.306
    half = 2.306 * np.sqrt(102 / 8) / np.sqrt(12)
    assert t.loc["memory_mb", "ci_low"] == pytest.approx(21.5 - half, abs=2e-3)
    assert t.loc["memory_mb:cache_kb", "ci_high"] == pytest.approx(5.0 + half, abs=2e-3)


def test_exactly_additive_2x2x2_has_no_interactions() -> None:
    rows = []
    for a, b, c in itertools.product((-1, 1), repeat=3):
        rows.append({"A": a, "B": b, "C": c, "y": 10 + 3 * a - 2 * b + 1 * c})
    t = allocation_of_variation(pd.DataFrame(rows), ["A", "B", "C"], "y").set_index("term")
    assert list(t.index) == ["A", "B", "C", "A:B", "A:C", "B:C", "A:B:C"]
    assert list(t["effect"]) == pytest.approx([3, -2, 1, 0, 0, 0, 0], abs=1e-12)
    assert list(t["fraction"]) == pytest.approx([9 / 14, 4 / 14, 1 / 14, 0, 0, 0, 0], abs=1e-12)


def test_replicated_2x2x2_sums_of_squares_match_statsmodels_anova() -> None:
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm
    rng = np.random.default_rng(9)
    rows = []
    for board, kb, size in itertools.product(("esp32", "nrf"), (128, 256), (64, 4096)):
        for _ in range(4):
            y = (2.0 + (board == "nrf") * 1.5 + (kb == 256) * 0.3 + (size == 4096) * 4.0
                 + (board == "nrf") * (size == 4096) * 1.0 + rng.normal(0, 0.2))
            rows.append({"board": board, "key_bits": kb, "payload_bytes": size, "t": y})
    df = pd.DataFrame(rows)
    t = allocation_of_variation(df, ["board", "key_bits", "payload_bytes"], "t")
    model = smf.ols("t ~ C(board, Sum) * C(key_bits, Sum) * C(payload_bytes, Sum)", df).fit()
    anova = anova_lm(model)
    assert list(t["sum_of_squares"]) == pytest.approx(list(anova["sum_sq"]), rel=1e-9)
    assert t["fraction"].sum() == pytest.approx(1.0)
    # the effect is half the difference between the levels' means
    means = df.groupby("payload_bytes")["t"].mean()
    assert t.set_index("term").loc["payload_bytes", "effect"] == \
        pytest.approx((means[4096] - means[64]) / 2)


def test_log_scale_turns_a_multiplicative_model_additive() -> None:
    rows = [{"A": a, "B": b, "y": 5.0 * 2.0 ** a * 10.0 ** b}
            for a, b in itertools.product((0, 1), repeat=2)]
    df = pd.DataFrame(rows)
    raw = allocation_of_variation(df, ["A", "B"], "y").set_index("term")
    log = allocation_of_variation(df, ["A", "B"], "y", log=True).set_index("term")
    assert raw.loc["A:B", "fraction"] > 0.01
    assert log.loc["A:B", "effect"] == pytest.approx(0.0, abs=1e-12)
    assert log.loc["A", "effect"] == pytest.approx(np.log10(2.0) / 2)
    assert log.loc["B", "effect"] == pytest.approx(0.5)


@pytest.mark.parametrize("frame, match", [
    (pd.DataFrame({"A": [1, 2, 3, 1], "B": [1, 1, 2, 2], "y": [1.0, 2, 3, 4]}), "exactly 2"),
    (pd.DataFrame({"A": [1, 2, 1], "B": [1, 1, 2], "y": [1.0, 2, 3]}), "3 of its 4 cells"),
    (pd.DataFrame({"A": [1, 2, 1, 2, 2], "B": [1, 1, 2, 2, 2], "y": [1.0, 2, 3, 4, 5]}),
     "replications per cell differ"),
])
def test_designs_that_are_not_2k_are_refused(frame: pd.DataFrame, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        allocation_of_variation(frame, ["A", "B"], "y")


def test_log_scale_needs_positive_values() -> None:
    df = pd.DataFrame({"A": [0, 1, 0, 1], "B": [0, 0, 1, 1], "y": [1.0, -2.0, 3.0, 4.0]})
    with pytest.raises(ValueError, match="positive"):
        allocation_of_variation(df, ["A", "B"], "y", log=True)


def test_is_two_level_design() -> None:
    full = pd.DataFrame({"A": [0, 1, 0, 1], "B": [0, 0, 1, 1]})
    assert is_two_level_design(full, ["A", "B"])
    assert not is_two_level_design(full.iloc[:3], ["A", "B"])
    assert not is_two_level_design(full, [])
