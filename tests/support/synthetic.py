"""Synthetic runs from a cost model, written through the store API.

For trying the statistics and the report without a bench, and for their tests: every op
costs ``fixed_cycles + cycles_per_byte * payload_bytes`` cycles at the board's clock, and
draws the board's active power over its idle baseline while it runs. Magnitudes are those
of the literature (AES-128 on a Cortex-M4 at 64 MHz: a few µJ per 1 KiB block; RSA-4096 key
generation: about a joule). Every window carries its true energy, so the accuracy of
anything computed from a synthetic run can be checked.
"""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from energyrig.domain import Point, Window
from energyrig.results.store.write import RunWriter


@dataclass(frozen=True)
class Board:
    """A board of the model: clock, idle and active power (W), backend it runs."""

    name: str
    cpu_hz: int
    idle_w: float
    active_w: float
    backend: str = "software"


@dataclass(frozen=True)
class OpCost:
    """Cost of one op: fixed cycles plus cycles per payload byte."""

    op: str
    family: str
    fixed_cycles: float
    cycles_per_byte: float = 0.0
    key_bits: int | None = None
    curve: str | None = None


BOARDS: tuple[Board, ...] = (
    Board("nrf52840dk", 64_000_000, idle_w=0.0030, active_w=0.0165),
    Board("esp32-devkitc", 240_000_000, idle_w=0.0400, active_w=0.1300),
)

OPS: tuple[OpCost, ...] = (
    OpCost("aes-ecb-encrypt", "symmetric", 600, 32.0, key_bits=128),
    OpCost("aes-ecb-encrypt", "symmetric", 700, 38.0, key_bits=192),
    OpCost("aes-ecb-encrypt", "symmetric", 800, 44.0, key_bits=256),
    OpCost("rc6-ecb-encrypt", "symmetric", 900, 14.0, key_bits=128),
    OpCost("sha256", "hash", 1500, 21.0),
    OpCost("sha512", "hash", 2500, 34.0),
    OpCost("sha3-256", "hash", 3000, 45.0),
    OpCost("rsa-keygen", "public-key", 9.0e8, key_bits=2048),
    OpCost("rsa-keygen", "public-key", 7.0e9, key_bits=4096),
    OpCost("rsa-sign", "public-key", 2.6e7, key_bits=2048),
    OpCost("rsa-verify", "public-key", 6.5e5, key_bits=2048),
    OpCost("ecdsa-sign", "public-key", 4.5e6, curve="p256"),
    OpCost("ecdsa-verify", "public-key", 9.0e6, curve="p256"),
)

PAYLOADS: tuple[int, ...] = (64, 256, 1024, 4096)


def _windows(rng: np.random.Generator, board: Board, cost: OpCost, payload: int | None,
             n_windows: int, noise: float) -> tuple[int, list[Window]]:
    cycles_per_op = cost.fixed_cycles + cost.cycles_per_byte * (payload or 0)
    t_op = cycles_per_op / board.cpu_hz
    batch_n = max(1, int(np.ceil(0.02 / t_op)))
    windows = []
    start = 0.0
    for _ in range(n_windows):
        duration = t_op * batch_n * (1.0 + noise * rng.standard_normal())
        net_w = (board.active_w - board.idle_w) * (1.0 + noise * rng.standard_normal())
        true_net = net_w * duration
        true_gross = true_net + board.idle_w * duration
        start += 0.05
        windows.append(Window(
            start_s=start, end_s=start + duration, samples=int(duration * 100_000) + 1,
            energy_j=true_gross * (1.0 + noise / 4 * rng.standard_normal()),
            baseline_w=board.idle_w, edge_error_j=2e-5 * board.active_w,
            cycles=int(round(cycles_per_op * batch_n)),
            true_energy_j=true_gross, true_net_energy_j=true_net))
        start += duration
    return batch_n, windows


#: Finished runs already written by this process, by their arguments (:func:`make_run`).
_WRITTEN: dict[str, Path] = {}


def make_run(run_dir: str | Path, *, seed: int = 1, boards: tuple[Board, ...] = BOARDS,
             ops: tuple[OpCost, ...] = OPS, payloads: tuple[int, ...] = PAYLOADS,
             reps: int = 2, n_windows: int = 8, noise: float = 0.01,
             finish: bool = True,
             window_flags: Callable[[Point, int], tuple[str, ...]] | None = None,
             point_flags: Callable[[Point], tuple[str, ...]] | None = None,
             uncertainty: Mapping[str, Any] | None = None) -> Path:
    """Write a synthetic run of every op on every board (and payload size where it applies).

    Adds one failed point (RSA-8192 key generation timing out) and one skipped point
    (a hash given a key size). With ``finish=False`` the run is left in progress.
    ``window_flags(point, k)`` flags window ``k`` of a point, ``point_flags(point)`` the
    point itself; ``uncertainty`` is every point's (:meth:`RunWriter.write_point`).

    A finished run without flag functions is written through the store once per process
    and arguments (a few seconds for the default run: a store write per point); the same
    call again copies those files to ``run_dir`` (the test suite's time, docs/performance.md).
    """
    args = dict(seed=seed, boards=boards, ops=ops, payloads=payloads, reps=reps,
                n_windows=n_windows, noise=noise, uncertainty=uncertainty)
    key = repr(sorted(args.items()))
    cacheable = finish and window_flags is None and point_flags is None
    if cacheable and key in _WRITTEN:
        shutil.copytree(_WRITTEN[key], run_dir)
        return Path(run_dir)
    _write_run(Path(run_dir), **args, finish=finish, window_flags=window_flags,
               point_flags=point_flags)
    if cacheable:
        _WRITTEN[key] = Path(shutil.copytree(run_dir, Path(tempfile.mkdtemp(prefix="rig-run-"))
                                             / "run"))
    return Path(run_dir)


def _write_run(run_dir: Path, *, seed: int, boards: tuple[Board, ...],
               ops: tuple[OpCost, ...], payloads: tuple[int, ...], reps: int, n_windows: int,
               noise: float, finish: bool,
               window_flags: Callable[[Point, int], tuple[str, ...]] | None,
               point_flags: Callable[[Point], tuple[str, ...]] | None,
               uncertainty: Mapping[str, Any] | None) -> None:
    """:func:`make_run`'s run, written through the store."""
    rng = np.random.default_rng(seed)
    plan = {"name": "synthetic", "reps": reps, "windows": n_windows,
            "payload_bytes": list(payloads), "boards": [b.name for b in boards]}
    writer = RunWriter.create(run_dir, plan=plan, fixture={"name": "synthetic"},
                              firmware={"firmware": "0.1.0", "board": boards[0].name},
                              calibration={"id": "synthetic-identity"}, seed=seed)
    try:
        for board in boards:
            for cost in ops:
                for payload in (payloads if cost.cycles_per_byte else (None,)):
                    for rep in range(reps):
                        point = Point(op=cost.op, family=cost.family, board=board.name,
                                      backend=board.backend, key_bits=cost.key_bits,
                                      curve=cost.curve, payload_bytes=payload,
                                      cpu_hz=board.cpu_hz, rep=rep)
                        batch_n, windows = _windows(rng, board, cost, payload, n_windows, noise)
                        if window_flags is not None:
                            windows = [replace(w, flags=window_flags(point, k))
                                       for k, w in enumerate(windows)]
                        writer.write_point(point, windows, batch_n=batch_n,
                                           uncertainty=uncertainty,
                                           flags=point_flags(point) if point_flags else ())
            writer.write_failed(Point(op="rsa-keygen", family="public-key", board=board.name,
                                      key_bits=8192, cpu_hz=board.cpu_hz),
                                "DUT did not answer within 600 s (run n=1)")
        writer.write_skipped(Point(op="sha256", family="hash", board=boards[0].name,
                                   key_bits=128, cpu_hz=boards[0].cpu_hz),
                             "sha256 takes no key_bits")
    finally:
        writer.close(finished=finish)


def make_factorial_run(run_dir: str | Path, *, seed: int = 2, reps: int = 3,
                       noise: float = 0.01) -> Path:
    """A replicated 2^3 design: board x key size x payload size of AES-ECB encryption."""
    aes = tuple(c for c in OPS if c.op == "aes-ecb-encrypt" and c.key_bits in (128, 256))
    return make_run(run_dir, seed=seed, ops=aes, payloads=(64, 4096), reps=reps,
                    n_windows=5, noise=noise)
