"""Benchmark: end-to-end accuracy of the simulated bench against the emulator's ground truth.

For each op (one AES block, about 10 ns per op on this host, up to RSA-4096 key generation,
over a second per op) the real host firmware runs batches between its trigger edges, the
emulated PPK2 streams the current of the fixture's power model over a pty, the rig finds the
windows and integrates them, and every window is compared with the emulator's truth log
(the exact integral of the model between the exact edge times). The figure is the relative
error of the net energy per op (gross minus the idle baseline) of each window; its median
over the windows is reported per op.

Three benches: faults off (the fixture as it is); faults on (offset, gain error, timing
skew, dropped samples, uncalibrated), where the error must show; and the same faults after
``rig calibrate all`` (``calibration.routines.calibrate.calibrate`` into a temporary store), measured
with that calibration, side by side. ``--random-faults SEED`` draws the faults as issue 10's
acceptance test does — offset ±50 µA, gain ±3 %, skew ±100 µs, a window overhead of 20 to
200 µs at 1 to 5 mA above the board's idle current, and on a PPK2 each of ranges 0 and 1
another ± 1 % of gain error and range 1 another ± 10 µA of offset — except that on a PPK2 bench
the offset is drawn in 0..+50 µA: the PPK2 cannot show a current below zero, and an offset
below minus the board's idle current (3 µA on the simulated nRF52840) clips the baseline,
which no calibration can undo (docs/calibration.md). Each row also says whether the truth
lies inside the point's expanded uncertainty (k = 2).

The real-time soak that counts lost samples over a long run is ``benchmarks/soak.py``.

    .venv/bin/python benchmarks/accuracy.py                  # faults off, on, calibrated
    .venv/bin/python benchmarks/accuracy.py --random-faults 1
    .venv/bin/python benchmarks/accuracy.py --json           # one JSON object per op
    .venv/bin/python benchmarks/accuracy.py --coverage 10    # issue 10's coverage check

``--coverage SEEDS`` measures, for each seed and on both the PPK2 and the scope benches,
``--reps`` windows of each of the mixed ops of :data:`COVERAGE_CASES` under faults drawn with
that seed (and reference resistors drawn with it), after ``rig calibrate all``, and reports
the fraction of windows whose truth lies within the window's expanded uncertainty (k = 2) and
median U / median |error|, per bench and overall (issue 10: at least 95 %, at most 5). Each
seed is a calibration of its own: the gain's reference error is shared by the windows of one
calibration, so the figure moves in steps of one calibration's windows.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from energyrig.calibration.quantities import ORDER
from energyrig.calibration.routines.calibrate import calibrate
from energyrig.calibration.store import CALIBRATION_DIR_ENV
from energyrig.domain import Point
from energyrig.errors import CalibrationError
from energyrig.fixtures import Fixture, load_fixture
from energyrig.instruments.registry import family
from energyrig.instruments.sim.power import PowerModel
from energyrig.rig.bench import Bench, open_bench
from energyrig.rig.pipeline import POINT_ERRORS, PointResult, measure_point, reps_done

FAULTS = {"offset_a": 20e-6, "gain_error": 0.01, "skew_s": 50e-6, "drop_rate": 1e-4}


@dataclass(frozen=True)
class Case:
    """One op of the benchmark; ``min_samples`` overrides the fixture's samples per window."""

    op: str
    key_bits: int | None = None
    payload_bytes: int | None = None
    curve: str | None = None
    reps: int = 10
    min_samples: int | None = None

    def point(self, board: str) -> Point:
        return Point(op=self.op, board=board, key_bits=self.key_bits,
                     payload_bytes=self.payload_bytes, curve=self.curve)

    @property
    def label(self) -> str:
        params = [f"{k}={v}" for k, v in (("key_bits", self.key_bits),
                                          ("payload_bytes", self.payload_bytes),
                                          ("curve", self.curve)) if v is not None]
        extra = [f"min_samples={self.min_samples}"] if self.min_samples else []
        return f"{self.op} {' '.join(params + extra)}"


CASES = (
    Case("aes-ecb-encrypt", key_bits=128, payload_bytes=16),           # one block
    Case("aes-ecb-encrypt", key_bits=128, payload_bytes=16, min_samples=20000),
    Case("sha256", payload_bytes=1024),
    Case("aes-gcm-encrypt", key_bits=256, payload_bytes=16384),
    Case("ecdsa-sign", curve="p256", payload_bytes=32),
    Case("rsa-sign", key_bits=2048, payload_bytes=32),
    Case("rsa-sign", key_bits=2048, payload_bytes=32, min_samples=20000),
    Case("rsa-keygen", key_bits=4096, reps=5),                        # > 1 s per op
)


def rel_errors(result: PointResult) -> np.ndarray:
    """Relative error of each window's net energy against the truth (windows with truth)."""
    return np.array([w.net_energy_j / w.true_net_energy_j - 1.0 for w in result.windows
                     if w.true_net_energy_j])


def with_faults(fixture: Fixture, faults: dict[str, Any]) -> Fixture:
    """The fixture with fault settings added to its power model."""
    assert fixture.sim is not None
    power = fixture.sim.power.model_copy(update=faults)
    return fixture.model_copy(update={"sim": fixture.sim.model_copy(update={"power": power})})


def random_faults(fixture: Fixture, seed: int) -> dict[str, Any]:
    """Faults of unknown magnitude, as issue 10's acceptance test draws them (module
    docstring: a PPK2's offset only upwards), and on an instrument with current ranges a
    gain error and an offset per range on top."""
    rng = np.random.default_rng(seed)
    low = 0.0 if fixture.instrument.kind == "ppk2" else -50e-6
    assert fixture.sim is not None
    idle_a = PowerModel.from_dict(fixture.sim.power.model_dump()).idle_a
    faults: dict[str, Any] = {
        "offset_a": float(rng.uniform(low, 50e-6)),
        "gain_error": float(rng.uniform(-0.03, 0.03)),
        "skew_s": float(rng.uniform(-100e-6, 100e-6)), "drop_rate": 1e-4,
        "overhead_s": float(rng.uniform(20e-6, 200e-6)),
        "overhead_a": idle_a + float(rng.uniform(1e-3, 5e-3))}
    if "range_gain_error" in family(fixture.instrument.kind).emulator_faults:
        # Ranges 0 and 1 (the board's idle and its ops) off each other: ± 1 % more gain
        # error each, and up to ± 10 µA more offset in range 1 (range 0's offset stays the
        # one drawn above, which the PPK2's floor allows).
        faults["range_gain_error"] = tuple(float(g) for g in rng.uniform(-0.01, 0.01, 2))
        faults["range_offset_a"] = (0.0, float(rng.uniform(-10e-6, 10e-6)))
    return faults


def measure_case(bench: Bench, case: Case, faults: str) -> dict[str, Any]:
    t0 = time.monotonic()
    result = measure_point(bench, case.point(bench.board), until=reps_done(case.reps),
                           min_samples=case.min_samples)
    fig = result.figures()
    err = rel_errors(result)
    return {
        "op": case.op, "case": case.label, "faults": faults, "status": result.status,
        "reason": result.reason or None, "batch_n": result.batch_n,
        "windows": len(result.windows), "samples_per_window": fig["samples_per_window"],
        "time_per_op_s": fig["time_per_op_s"],
        "measured_j": fig["net_energy_per_op_j"], "true_j": fig.get("true_net_energy_per_op_j"),
        "rel_error": float(np.median(err)) if len(err) else None,
        "u_expanded_j": fig["net_energy_per_op_u_j"],
        "truth_within_u": None if fig["net_energy_per_op_u_j"] is None or not fig.get(
            "true_net_energy_per_op_j") else bool(
            abs(fig["net_energy_per_op_j"] - fig["true_net_energy_per_op_j"])
            <= fig["net_energy_per_op_u_j"]),
        "max_abs_rel_error": float(np.max(np.abs(err))) if len(err) else None,
        "flags": fig["flags"], "seconds": round(time.monotonic() - t0, 1),
    }


@contextmanager
def calibrated_bench(fx: Fixture, log: Console, calibrated: bool = True) -> Iterator[Bench]:
    """The bench of ``fx``; ``calibrated``: after ``rig calibrate all`` into a temporary
    store, with that calibration applied."""
    with tempfile.TemporaryDirectory(prefix="accuracy-cal-") as store:
        previous = os.environ.get(CALIBRATION_DIR_ENV)
        os.environ[CALIBRATION_DIR_ENV] = store
        try:
            if calibrated:
                with open_bench(fx) as bench:
                    record, _ = calibrate(bench, bench.connect, ORDER)
                log.print("calibrated: " + ", ".join(f"{q} = {v.value:.5g} ± {v.u:.2g}"
                                                     for q, v in record.values.items()))
            with open_bench(fx, "latest" if calibrated else None) as bench:
                yield bench
        finally:
            if previous is None:
                del os.environ[CALIBRATION_DIR_ENV]
            else:
                os.environ[CALIBRATION_DIR_ENV] = previous


def accuracy(fixture: Fixture, faults: dict[str, float] | None, log: Console, *,
             calibrated: bool = False) -> list[dict[str, Any]]:
    """Every case on ``fixture`` with ``faults`` (``None``: as it is); ``calibrated``: after
    ``rig calibrate all`` into a temporary store, with that calibration applied."""
    fx = with_faults(fixture, faults) if faults else fixture
    label = "off" if not faults else "on, calibrated" if calibrated else "on"
    rows = []
    with calibrated_bench(fx, log, calibrated) as bench:
        for case in CASES:
            log.print(f"faults {label}: {case.label} ...")
            rows.append(measure_case(bench, case, label))
    return rows


#: The mixed ops of the coverage run: every op family, windows of a few thousand samples to
#: a few hundred thousand (rsa-keygen and the 20 k-sample variants take too long for 1 000).
COVERAGE_CASES = tuple(c for c in CASES if c.op != "rsa-keygen" and c.min_samples is None)
#: Windows whose truth cannot be trusted (the emulator saw an edge late, or none matched).
UNTRUSTED = {"truth_late", "no_truth"}


def coverage_windows(fixture: Fixture, seed: int, reps: int,
                     log: Console) -> list[dict[str, float]]:
    """Each window's relative error and relative U (k = 2) of the net energy on ``fixture``
    under faults drawn with ``seed`` (:func:`random_faults`; its reference resistors drawn
    with the same seed), after ``rig calibrate all``."""
    fx = with_faults(fixture, random_faults(fixture, seed))
    assert fx.sim is not None
    fx = fx.model_copy(update={"sim": fx.sim.model_copy(update={"seed": seed})})
    out = []
    with calibrated_bench(fx, log) as bench:
        for case in COVERAGE_CASES:
            result = measure_point(bench, case.point(bench.board), until=reps_done(reps))
            for w in result.windows:
                if w.true_net_energy_j and not UNTRUSTED & set(w.flags):
                    out.append({"bench": fixture.instrument.kind, "seed": seed, "op": case.op,
                                "error": w.net_energy_j / w.true_net_energy_j - 1.0,
                                "u": w.net_energy_u_j / abs(w.true_net_energy_j)})
            log.print(f"{fixture.name} seed {seed}: {case.label}: {len(result.windows)} "
                      f"windows {result.status}")
    return out


def coverage_summary(rows: list[dict[str, float]]) -> dict[str, Any]:
    """Fraction of windows whose truth lies within U (k = 2), and median U / median |error|
    (issue 10: at least 0.95, at most 5)."""
    err = np.abs([r["error"] for r in rows])
    u = np.array([r["u"] for r in rows])
    known = np.isfinite(u)
    return {"windows": len(rows), "u_unknown": int((~known).sum()),
            "coverage": float(np.mean(err[known] <= u[known])) if known.any() else None,
            "median_u": float(np.median(u[known])) if known.any() else None,
            "median_abs_error": float(np.median(err)) if len(err) else None,
            "ratio": float(np.median(u[known]) / np.median(err)) if known.any() else None,
            "calibrations": len({(r["bench"], r["seed"]) for r in rows})}


def coverage(fixtures: list[Fixture], seeds: int, reps: int, log: Console) -> dict[str, Any]:
    """:func:`coverage_windows` for seeds 1..``seeds`` on every fixture: the figures per
    bench and overall."""
    rows: list[dict[str, float]] = []
    failed: list[str] = []
    for seed in range(1, seeds + 1):
        for fx in fixtures:
            for attempt in range(2):  # a loaded host fails a calibration now and then
                try:
                    rows += coverage_windows(fx, seed, reps, log)
                    break
                except (*POINT_ERRORS, CalibrationError) as exc:
                    failed.append(f"{fx.name} seed {seed} (attempt {attempt + 1}): {exc}")
                    log.print(f"[red]{failed[-1]}")
    kinds = [fx.instrument.kind for fx in fixtures]
    return {"seeds": seeds, "reps": reps, "cases": [c.label for c in COVERAGE_CASES],
            "failed": failed, "overall": coverage_summary(rows),
            **{kind: coverage_summary([r for r in rows if r["bench"] == kind])
               for kind in kinds},
            "calibrations": [{"bench": kind, "seed": seed, **coverage_summary(
                [r for r in rows if (r["bench"], r["seed"]) == (kind, seed)])}
                for seed in range(1, seeds + 1) for kind in kinds]}


def table(rows: list[dict[str, Any]]) -> Table:
    t = Table(title="Net energy per op against the emulator's truth (median over windows)")
    for label in ("faults", "case", "N", "samples/window", "time/op", "measured J/op",
                  "true J/op", "median rel err", "max |rel err|", "U (k=2)", "truth in U",
                  "flags"):
        t.add_column(label, justify="left" if label in ("case", "flags") else "right")
    for r in rows:
        def pct(x: float | None) -> str:
            return "-" if x is None or not math.isfinite(x) else f"{x * 100:+.4f} %"
        t.add_row(r["faults"], r["case"], str(r["batch_n"]),
                  f"{r['samples_per_window'] or 0:.0f}", f"{(r['time_per_op_s'] or 0):.3g} s",
                  f"{r['measured_j'] or math.nan:.5g}", f"{r['true_j'] or math.nan:.5g}",
                  pct(r["rel_error"]), pct(r["max_abs_rel_error"]).lstrip("+"),
                  "-" if r["u_expanded_j"] is None else f"{r['u_expanded_j']:.3g}",
                  {None: "-", True: "yes", False: "no"}[r["truth_within_u"]],
                  ", ".join(r["flags"]) or (r["reason"] or ""))
    return t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixture", type=Path, default=None, help="default: fixtures/sim.toml")
    parser.add_argument("--json", action="store_true", help="one JSON object per op")
    parser.add_argument("--no-faults", action="store_true", help="skip the faulty benches")
    parser.add_argument("--random-faults", type=int, metavar="SEED",
                        help="draw the faults (issue 10's ranges) with this seed")
    parser.add_argument("--coverage", type=int, metavar="SEEDS",
                        help="instead: the coverage of each window's U (k=2) on the PPK2 and "
                             "the scope benches under faults drawn with seeds 1..SEEDS")
    parser.add_argument("--reps", type=int, default=10, help="windows per op (--coverage)")
    args = parser.parse_args(argv)
    log = Console(stderr=True)
    if args.coverage:
        benches = [load_fixture(p) for p in (args.fixture or Path("fixtures/sim.toml"),
                                             Path("fixtures/sim-scope.toml"))]
        print(json.dumps(coverage(benches, args.coverage, args.reps, log), indent=1))
        return 0
    fixture = load_fixture(args.fixture)
    if fixture.sim is None:
        parser.error(f"{fixture.path} is not a simulated bench (no [sim] table)")
    rows = accuracy(fixture, None, log)
    if not args.no_faults:
        faults = FAULTS if args.random_faults is None else random_faults(fixture,
                                                                         args.random_faults)
        log.print(f"faults: {faults}")
        rows += accuracy(fixture, faults, log)
        rows += accuracy(fixture, faults, log, calibrated=True)
    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        Console(width=200).print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
