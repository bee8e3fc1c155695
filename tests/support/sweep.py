"""A scripted bench for the sweep executor (:mod:`energyrig.rig.sweep`): windows and failures
placed by the test (1 µJ per op times (1 + noise)), a bench factory, a plan writer, and benches
whose lab place dies mid-run, shared by the sweep, lanes, trust and store tests."""
from __future__ import annotations

import contextlib
import textwrap
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from support.paths import SIM

from energyrig.capture import Chunk
from energyrig.domain import Point, Window
from energyrig.errors import DutError, InstrumentError
from energyrig.fixtures import load_fixture
from energyrig.fixtures.schema import Fixture
from energyrig.rig.dut import OpInfo
from energyrig.rig.plan import Plan, load_plan
from energyrig.rig.sweep.run import start_sweep
from energyrig.rig.sweep.stopping import StopRequest

CATALOGUE = (
    OpInfo("sha256", "hash", "software", payload=(1, 4096, 1)),
    OpInfo("md5", "hash", "software", payload=(1, 4096, 1)),
    OpInfo("aes-ecb-encrypt", "symmetric", "software", key_bits=(128, 256),
           payload=(16, 4096, 16)),
    OpInfo("broken", "hash", "software", payload=(1, 4096, 1)),
    OpInfo("hangs", "hash", "software", payload=(1, 4096, 1)),
    OpInfo("grows", "hash", "software", payload=(1, 4096, 1)),
)


@dataclass
class Prepared:
    """Windows of a scripted point: energy = 1 µJ per op times (1 + noise)."""

    bench: ScriptedBench
    point: Point
    batch_n: int
    rng: np.random.Generator
    n: int = 0
    prep: Mapping[str, Any] = field(default_factory=dict)
    kept: tuple[Chunk, ...] = ()

    def first_windows(self) -> tuple[()]:
        return ()  # the batch is given: no sizing window

    def window(self) -> Window:
        self.n += 1
        self.bench.windows += 1
        if self.bench.stop_after is not None and self.bench.windows == self.bench.stop_after:
            assert self.bench.stop is not None
            self.bench.stop.set("test")
        if self.point.op == "hangs" and self.n == 2:
            raise DutError("DUT /dev/pts/9 did not answer 'run n=10' within 5 s")
        if self.point.op == "grows" and self.n == 2:
            self.batch_n *= 2                      # the bench found the window too short
        noise = self.bench.noise.get(self.point.op, 0.0)
        energy = self.batch_n * 1e-6 * (1 + noise * self.rng.standard_normal())
        t0 = float(self.bench.windows)
        self.kept = (Chunk(round(t0 * 1e5), 1e-5, np.full(3, energy), 3.0,
                           np.array([0, 1, 0], np.uint8)),)
        return Window(start_s=t0, end_s=t0 + 0.01, samples=1000, energy_j=energy,
                      baseline_w=1e-6, cycles=1000 * self.batch_n)


@dataclass
class ScriptedBench:
    """A :class:`energyrig.rig.pipeline.PointBench` whose windows and failures are scripted."""

    noise: dict[str, float] = field(default_factory=dict)
    stop: StopRequest | None = None
    stop_after: int | None = None
    prepared: list[str] = field(default_factory=list)
    windows: int = 0
    opened: int = 0
    board: str = "bench"
    hello: Mapping[str, Any] = field(default_factory=lambda: {"board": "bench", "build": "t"})
    calibration: Mapping[str, Any] | None = None
    broken: frozenset[str] = frozenset({"broken"})

    def ops(self) -> Sequence[OpInfo]:
        return CATALOGUE

    def point_flags(self) -> list[str]:
        return []

    def prepare(self, point: Point, *, batch_n: int | None = None, seed: int | None = None,
                min_samples: int | None = None) -> Prepared:
        self.prepared.append(point.key)
        if point.op in self.broken:
            raise DutError("broken: self-test failed")
        return Prepared(self, point, batch_n or 10, np.random.default_rng(len(self.prepared)))


def factory(bench: ScriptedBench, *others: ScriptedBench):
    """Open ``bench``, or the one of ``others`` whose board the fixture names."""
    by_board = {b.board: b for b in others}

    @contextlib.contextmanager
    def open_bench(fixture: Fixture) -> Iterator[ScriptedBench]:
        opened = by_board.get(fixture.dut.board, bench)
        opened.opened += 1
        yield opened
    return open_bench



def make_plan(tmp_path: Path, body: str, head: str = "") -> Plan:
    path = tmp_path / "plan.toml"
    path.write_text(f"seed = 7\n{head}\n{textwrap.dedent(body)}", encoding="utf-8")
    return load_plan(path)


HASHES = """
    [adaptive]
    min_windows = 3
    max_windows = 8
    [factors]
    op = ["sha256", "md5"]
    payload_bytes = [16, 64, 256]
    """


def run(tmp_path: Path, plan: Plan, bench: ScriptedBench, **kw: Any):
    return start_sweep(plan, tmp_path / "run", fixture=load_fixture(SIM),
                       bench_factory=factory(bench), **kw)




@dataclass
class DyingBench(ScriptedBench):
    """A scripted bench whose place dies when it prepares its ``dies_at``-th point; one
    given ``after`` (another slot's :attr:`ScriptedSlot.gone`) prepares nothing until that
    place has died, so which lane measures what does not hang on how the threads run."""

    dies_at: int | None = None
    after: threading.Event | None = None
    slot: ScriptedSlot | None = None

    def prepare(self, point: Point, **kwargs):  # type: ignore[no-untyped-def]
        if self.after is not None:
            assert self.after.wait(timeout=120), "the other place never died"
        if self.dies_at is not None and len(self.prepared) + 1 >= self.dies_at:
            assert self.slot is not None
            self.slot.dead = True
            self.slot.gone.set()
            raise DutError("DUT rfc2217://10.0.0.7:4000: read failed (connection lost)")
        return super().prepare(point, **kwargs)


@dataclass
class ScriptedSlot:
    name: str
    bench: DyingBench
    board: str = "bench"
    dead: bool = False
    gone: threading.Event = field(default_factory=threading.Event)  # set when it dies
    host: str = field(init=False)

    def __post_init__(self) -> None:
        self.host = f"host-{self.name}"
        self.bench.slot = self

    @contextlib.contextmanager
    def open(self) -> Iterator[DyingBench]:
        if self.dead:
            raise InstrumentError(f"ppk2 at {self.name}: connection refused")
        self.bench.opened += 1
        yield self.bench

    def alive(self) -> bool:
        return not self.dead
