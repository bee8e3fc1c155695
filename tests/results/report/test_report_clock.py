"""The report's section on the CPU clock (issue 22 item 5): a workload measured at several
clocks gets a row per clock, the least energy per op marked; one measured at one clock, or
a run without clocks, gets none (the section is then left out)."""
from __future__ import annotations

import pandas as pd

from energyrig.results.report.clock import SERIES, clock_table


def _summary(rows: list[tuple[str, float | None, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"op": op, "key_bits": None, "curve": None, "backend": "software",
                          "board": "mps2-an386", "cpu_hz": hz, "payload_bytes": 1024,
                          "energy_per_op_j_mean": e} for op, hz, e in rows])


def test_each_clock_is_a_row_and_the_least_energy_is_marked() -> None:
    table = clock_table(_summary([("sha256", 64e6, 5.9e-6), ("sha256", 16e6, 7.0e-6),
                                  ("sha256", 32e6, 5.7e-6), ("aes-cbc-encrypt", 32e6, 6e-6)]))
    assert list(table[SERIES]) == ["sha256 1,024 B · mps2-an386"] * 3  # aes: one clock only
    assert list(table["cpu_hz"]) == [16e6, 32e6, 64e6]                # in factor order
    assert list(table["lowest"]) == [False, True, False]


def test_no_clock_no_rows() -> None:
    assert clock_table(_summary([("sha256", None, 5.9e-6), ("rc4", None, 1e-6)])).empty
    assert clock_table(pd.DataFrame()).empty


def test_the_least_is_called_so_only_where_its_interval_stands_apart() -> None:
    """``apart`` (the page's "◀ least") only where the least energy's 95 % CI lies below
    every other clock's; overlapping intervals leave the lowest mean unclaimed."""
    def table(half: float) -> pd.DataFrame:
        summary = _summary([("sha256", 16e6, 7.0e-6), ("sha256", 32e6, 5.7e-6),
                            ("sha256", 64e6, 5.9e-6)])
        return clock_table(summary.assign(
            energy_per_op_j_ci_low=summary["energy_per_op_j_mean"] - half,
            energy_per_op_j_ci_high=summary["energy_per_op_j_mean"] + half))
    assert list(table(0.05e-6)["apart"]) == [False, True, False]
    assert list(table(0.15e-6)["apart"]) == [False, False, False]  # 5.7+0.15 > 5.9-0.15
