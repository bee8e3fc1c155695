"""Power model of the simulated DUT: the current an instrument would see on the supply rail.

The DUT draws ``idle_a`` while its trigger is low and ``active_a`` (plus ``accel_a`` when
the edge record's ``accel`` bit is set) while it is high; the level between edges is
constant. Optional :class:`PeriodicLoad`\\ s add a slow rectangular component (a radio event,
an LED, a sensor heater) on top, so a stream crosses all five PPK2 ranges.

Everything is vectorised over blocks of sample times (int64 ns of CLOCK_MONOTONIC, the clock
of the trigger wire). :func:`model_current` is the truth (no noise, no faults);
:func:`measured_current` is what an instrument reports: truth read through the configured
faults (timing skew, gain error, offset) plus white noise. :func:`window_charge` integrates
the truth exactly over a window, for the ground-truth log.

Units: A, V, s (times in ns where they are clock readings).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.instruments.sim.wire import EdgeArray

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class PeriodicLoad:
    """A rectangular current pulse train added to the DUT's current.

    Attributes
    ----------
    amplitude_a:
        Extra current while the pulse is on, A.
    period_s:
        Pulse period, s (> 0).
    duty:
        Fraction of the period the pulse is on, 0..1.
    phase_s:
        Time of a pulse start, s of CLOCK_MONOTONIC (pulses repeat every ``period_s``).
    """

    amplitude_a: float
    period_s: float
    duty: float
    phase_s: float = 0.0

    def __post_init__(self) -> None:
        if not self.period_s > 0 or not 0.0 <= self.duty <= 1.0:
            raise ValueError(f"PeriodicLoad: need period_s > 0 and 0 <= duty <= 1, got {self}")

    def _on_time(self, t_s: F64) -> F64:
        """Seconds the pulse has been on between ``phase_s`` and ``t_s`` (an antiderivative)."""
        rel = t_s - self.phase_s
        cycles = np.floor(rel / self.period_s)
        on = self.duty * self.period_s
        return cycles * on + np.minimum(rel - cycles * self.period_s, on)

    def current(self, t_s: F64) -> F64:
        """The pulse current at the times ``t_s`` (s), A."""
        rel = np.mod(t_s - self.phase_s, self.period_s)
        return np.where(rel < self.duty * self.period_s, self.amplitude_a, 0.0)

    def charge(self, t0_s: float, t1_s: float) -> float:
        """Exact integral of the pulse current over ``[t0_s, t1_s]``, C."""
        on = self._on_time(np.array([t0_s, t1_s]))
        return self.amplitude_a * float(on[1] - on[0])


@dataclass(frozen=True, slots=True)
class PowerModel:
    """Current of a simulated board, and the faults of the instrument that measures it.

    Defaults are an nRF52840 (DC/DC on, 3.0 V): System ON idle with RTC running between ops
    (about 3 µA), CPU at 64 MHz running from flash (about 3.3 mA), CryptoCell-310 adding about
    2.2 mA while it works.

    Attributes
    ----------
    supply_v:
        Supply voltage, V (in PPK2 source mode the emulator uses the regulator setting).
    idle_a:
        Current while the trigger is low, A.
    active_a:
        Current while the trigger is high, A.
    accel_a:
        Extra current while high when the window's edge record has ``accel`` set, A.
    noise_a:
        White measurement noise, rms A (not part of the truth).
    loads:
        Slow periodic components added at all times (part of the truth and of the baseline).
    offset_a:
        Fault: constant offset added to the measured current, A.
    gain_error:
        Fault: relative gain error of the measured current (0.01 reads 1 % high).
    skew_s:
        Fault: the measured current lags the logic channel by this much, s.
    drop_rate:
        Fault: fraction of samples the instrument drops (the counter still advances).
    corrupt_rate:
        Fault: fraction of streamed bytes replaced by random bytes.
    disconnect_after_s:
        Fault: the instrument disappears this many seconds after streaming starts.
    """

    supply_v: float = 3.0
    idle_a: float = 3.0e-6
    active_a: float = 3.3e-3
    accel_a: float = 2.2e-3
    noise_a: float = 0.0
    loads: tuple[PeriodicLoad, ...] = field(default=())
    offset_a: float = 0.0
    gain_error: float = 0.0
    skew_s: float = 0.0
    drop_rate: float = 0.0
    corrupt_rate: float = 0.0
    disconnect_after_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("supply_v", "idle_a", "active_a", "accel_a", "noise_a"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"PowerModel.{name} must be >= 0, got {getattr(self, name)!r}")
        for name in ("drop_rate", "corrupt_rate"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"PowerModel.{name} must be in [0, 1), got {getattr(self, name)!r}")
        if self.disconnect_after_s is not None and not self.disconnect_after_s > 0:
            raise ValueError("PowerModel.disconnect_after_s must be > 0 s or None")

    @property
    def faulty(self) -> bool:
        """True when any fault is switched on."""
        return bool(self.offset_a or self.gain_error or self.skew_s or self.drop_rate
                    or self.corrupt_rate or self.disconnect_after_s is not None)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PowerModel:
        """Build from a plain mapping (a fixture table); ``loads`` is a list of tables."""
        data = dict(data)
        loads = tuple(PeriodicLoad(**load) for load in data.pop("loads", ()))
        return cls(loads=loads, **data)

    def as_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["loads"] = [{n: getattr(ld, n) for n in ld.__dataclass_fields__} for ld in self.loads]
        return out


def _state_index(t_ns: I64, edges: EdgeArray) -> I64:
    """Index of the last edge at or before each time, -1 before the first edge."""
    return np.searchsorted(edges["t_ns"].astype(np.int64), t_ns, side="right") - 1


def model_current(model: PowerModel, t_ns: I64, edges: EdgeArray) -> F64:
    """True current at each sample time, A.

    Parameters
    ----------
    model:
        The board's power model.
    t_ns:
        Sample times, int64 ns of CLOCK_MONOTONIC, non-decreasing.
    edges:
        Edge records in time order (wire dtype). The level before the first edge is low, so
        pass the last edge before ``t_ns[0]`` first to carry the state into a block.
    """
    t_ns = np.asarray(t_ns, dtype=np.int64)
    if len(edges):
        idx = _state_index(t_ns, edges)
        safe = np.maximum(idx, 0)
        high = (edges["level"][safe] != 0) & (idx >= 0)
        accel = edges["accel"][safe] != 0
        current = np.where(high, model.active_a + np.where(accel, model.accel_a, 0.0),
                           model.idle_a)
    else:
        current = np.full(t_ns.shape, model.idle_a)
    if model.loads:
        t_s = t_ns * 1e-9
        for load in model.loads:
            current = current + load.current(t_s)
    return current


def logic_level(t_ns: I64, edges: EdgeArray) -> npt.NDArray[np.uint8]:
    """Trigger level (0/1) at each sample time, from the same edges."""
    if not len(edges):
        return np.zeros(np.shape(t_ns), dtype=np.uint8)
    idx = _state_index(np.asarray(t_ns, dtype=np.int64), edges)
    return np.where(idx >= 0, edges["level"][np.maximum(idx, 0)], 0).astype(np.uint8)


def measured_current(model: PowerModel, t_ns: I64, edges: EdgeArray,
                     rng: np.random.Generator) -> F64:
    """Current as a faulty, noisy instrument reports it, A.

    ``skew_s`` delays the current against the logic channel; then gain error, offset and
    white noise of rms ``noise_a``.
    """
    t_ns = np.asarray(t_ns, dtype=np.int64)
    skew_ns = int(round(model.skew_s * 1e9))
    current = model_current(model, t_ns - skew_ns, edges)
    if model.gain_error:
        current = current * (1.0 + model.gain_error)
    if model.offset_a:
        current = current + model.offset_a
    if model.noise_a:
        current = current + rng.normal(0.0, model.noise_a, current.shape)
    return current


def window_charge(model: PowerModel, t_rise_ns: int, t_fall_ns: int,
                  accel: bool) -> tuple[float, float]:
    """Exact charge of a trigger window ``[t_rise, t_fall]`` (trigger high throughout), C.

    Returns ``(total_c, idle_c)``: the charge the model draws over the window, and the part
    of it the board would have drawn idle (``idle_a`` plus the periodic loads) over the same
    time, so ``total_c - idle_c`` is the charge due to the op alone.
    """
    duration_s = (t_fall_ns - t_rise_ns) * 1e-9
    load_c = math.fsum(ld.charge(t_rise_ns * 1e-9, t_fall_ns * 1e-9) for ld in model.loads)
    active_a = model.active_a + (model.accel_a if accel else 0.0)
    return active_a * duration_s + load_c, model.idle_a * duration_s + load_c
