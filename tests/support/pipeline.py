"""A scripted point bench for :mod:`energyrig.rig.pipeline`: a DUT whose op takes a known time
(s) and an instrument that records a known current (A), so every window's energy (J) is known
in closed form; shared by the pipeline and bad-capture tests."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from support.paths import SIM

from energyrig.capture import Chunk
from energyrig.domain import Point, Window
from energyrig.errors import DutError, RecordTooShort
from energyrig.fixtures import load_fixture
from energyrig.instruments.base import Limits, RecordedCapture, Resolution
from energyrig.rig.dut import OpInfo, RunReply
from energyrig.rig.pipeline import Measurement, no_correction

RATE_HZ = 100e3
SUPPLY_V = 3.0
IDLE_A, ACTIVE_A = 1e-3, 10e-3


@dataclass
class ScriptedDut:
    """Answers prep/idle/run; an op lasts ``op_s`` (the firmware's own timing)."""

    log: list[str]
    op_s: float = 20e-6
    fail_at_run: int | None = None
    runs: int = 0
    last_n: int = 0

    def prep(self, op: str, **kw: Any) -> dict[str, Any]:
        self.log.append("prep")
        return {"ok": True, "op": op, "selftest": "pass"}

    def run(self, n: int, timeout_s: float, settle_s: float = 0.0) -> RunReply:
        self.runs += 1
        if self.fail_at_run is not None and self.runs >= self.fail_at_run:
            raise DutError("DUT pid 1 did not answer 'run n=%d' within 1 s" % n)
        self.log.append(f"run settle={settle_s:g}" if settle_s else "run")
        self.last_n = n
        elapsed_ns = round(n * self.op_s * 1e9)
        return RunReply(n, cycles=100 * n, elapsed_ns=elapsed_ns, stack_bytes=0)


@dataclass
class ScriptedInstrument:
    """Records idle current, then the DUT's last batch at ``ACTIVE_A``, then idle again.

    As a recorder (``margin``), its record holds ``margin`` times the window it was armed for,
    and a batch that lasts longer raises :class:`RecordTooShort`, as a scope's does."""

    dut: ScriptedDut
    log: list[str]
    pre_s: float = 0.0
    post_s: float = 0.0
    window_s: float = 0.0
    margin: float | None = None

    def arm(self, pre_s: float, window_s: float, post_s: float) -> None:
        self.log.append("arm")
        self.pre_s, self.window_s, self.post_s = pre_s, window_s, post_s

    def collect(self, timeout_s: float) -> RecordedCapture:
        self.log.append("collect")
        batch_s = self.dut.last_n * self.dut.op_s
        if self.margin is not None and batch_s > self.margin * self.window_s:
            raise RecordTooShort(f"scripted: the batch outlasted the {self.window_s} s expected")
        high = round(batch_s * RATE_HZ)
        pre, post = round(self.pre_s * RATE_HZ), round(self.post_s * RATE_HZ)
        logic = np.concatenate([np.zeros(pre), np.ones(high), np.zeros(post)]).astype(np.uint8)
        current = np.where(logic == 1, ACTIVE_A, IDLE_A)
        return RecordedCapture("scripted", (Chunk(0, 1 / RATE_HZ, current, SUPPLY_V, logic),))


@dataclass
class ScriptedBench:
    log: list[str] = field(default_factory=list)
    fixture: Any = field(default_factory=lambda: load_fixture(SIM))
    correction: Any = no_correction
    calibration: Any = None
    edge_samples: float | None = None
    board: str = "scripted"
    hello: dict[str, Any] = field(default_factory=lambda: {"cycle_hz": 1_000_000})
    limits: Limits = Limits(RATE_HZ, None, 0.0,
                            resolution=Resolution(((math.inf, 1e-9),), "an ideal ADC"))

    def __post_init__(self) -> None:
        self.dut = ScriptedDut(self.log)
        self.instrument = ScriptedInstrument(self.dut, self.log)

    def ops(self) -> list[OpInfo]:
        return [OpInfo("sha256", "hash", "software", payload=(1, 4096, 1))]

    def prepare(self, point: Point, **kw: Any) -> Measurement:
        return Measurement.prepare(self, point, **kw)  # type: ignore[arg-type]

    def annotate(self, row: Window, sent_ns: int, replied_ns: int) -> Window:
        self.log.append("annotate")
        return row

    def point_flags(self) -> list[str]:
        return []

    def after_reply(self) -> None:
        pass

    def records_after(self, t_ns: int) -> None:
        self.log.append("records_after")


POINT = Point(op="sha256", board="scripted", payload_bytes=64)
