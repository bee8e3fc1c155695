"""Power model of the simulated DUT: the current an instrument would see on the supply rail.

The DUT draws ``idle_a`` while its trigger is low. While it is high it draws the active
current of the op family in the window (:class:`FamilyCurrent`, by the edge record's
``family`` id; ``active_a`` for a family without an entry and for ``mark`` windows), plus
``accel_a`` when the record's ``accel`` bit is set, plus the family's optional bursts (a
periodic higher current from the rising edge on: big-number arithmetic). Every edge adds
a short spike of ``edge_spike_a`` for ``edge_spike_s`` (the GPIO toggle and the wake-up or
sleep transient), cut short by the next edge. A window overhead (a fault the rig
calibrates: ``overhead_s`` at ``overhead_a``) holds the trigger high that much longer after
each falling edge the DUT sends, as a firmware's window set-up and tear-down would, at a
fixed current: the ops' truth (the DUT's edges, :func:`window_charge`) does not hold it, the
instrument's trigger channel (:func:`logic_level`) and current do. Optional :class:`PeriodicLoad`\\ s add a
slow rectangular component (a radio event, an LED, a sensor heater) at all times, so a
stream crosses all five PPK2 ranges.

The CPU clock (issue 22 item 5): the window's currents are given at the model's
``clock_hz``; at another clock ``f`` (the edge record's ``clock_hz``, 0 for "not stated":
``clock_hz`` itself) a family's current is ``static_a + (active_a - static_a) * d(f)`` with
``d(f) = (1 - quadratic) * r + quadratic * r**2``, ``r = f / clock_hz`` (:func:`clock_scale`):
a part that does not follow the clock (clock tree, regulator, flash bias), a dynamic part
proportional to ``f`` (``C V^2 f`` at a fixed voltage), and an optional share growing as
``f^2`` (a core voltage raised with the clock). Its bursts scale like the dynamic part and
come ``r`` times as often (they are the same cycles). So the energy of a fixed number of
cycles ``n`` is ``V n (static_a / f + k1 + k2 f)``: the static part dominates at low clocks,
the quadratic at high ones, and its minimum lies at ``f* = sqrt(static_a / k2)``
(:func:`best_clock_hz`). The accelerator's, the spikes' and the idle current do not scale.

:data:`PROFILES` holds the figures of a board (nRF52840, ESP32), each with its source; a
fixture names one (``[sim.power] profile``) and overrides what it likes. A model built
without a profile is flat: one active current, no spikes, no bursts, and a current
proportional to the clock.

Everything is vectorised over blocks of sample times (int64 ns of CLOCK_MONOTONIC, the clock
of the trigger wire). :func:`model_current` is the truth (no noise, no faults);
:func:`measured_current` is what an instrument reports: truth read through the configured
faults (timing skew, gain error, offset) plus white noise. :func:`window_charge` integrates
the truth exactly over a window, for the ground-truth log.

Units: A, V, s (times in ns where they are clock readings).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.instruments.sim.switch import BOARD, Load
from energyrig.instruments.sim.wire import EdgeArray, family_name
from energyrig.opfamilies import NAMES, OP_FAMILIES

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


def _pulse_on(rel_s: F64, period_s: npt.ArrayLike, on_s: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Whether a pulse train that starts a pulse at ``rel_s = 0`` is on at ``rel_s``."""
    return np.mod(rel_s, period_s) < on_s


def _pulse_on_time(rel_s: npt.ArrayLike, period_s: float, on_s: float) -> F64:
    """Seconds the same train has been on between ``0`` and ``rel_s`` (an antiderivative)."""
    rel = np.asarray(rel_s, dtype=np.float64)
    cycles = np.floor(rel / period_s)
    return cycles * on_s + np.minimum(rel - cycles * period_s, on_s)


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

    def current(self, t_s: F64) -> F64:
        """The pulse current at the times ``t_s`` (s), A."""
        on = _pulse_on(t_s - self.phase_s, self.period_s, self.duty * self.period_s)
        return np.where(on, self.amplitude_a, 0.0)

    def charge(self, t0_s: float, t1_s: float) -> float:
        """Exact integral of the pulse current over ``[t0_s, t1_s]``, C."""
        on = _pulse_on_time(np.array([t0_s, t1_s]) - self.phase_s, self.period_s,
                            self.duty * self.period_s)
        return self.amplitude_a * float(on[1] - on[0])


@dataclass(frozen=True, slots=True)
class FamilyCurrent:
    """The board's current while an op of one family runs in the trigger window.

    Attributes
    ----------
    active_a:
        Current while the window is open, A (in place of :attr:`PowerModel.active_a`).
    burst_a:
        Extra current during a burst, A.
    burst_period_s:
        Burst period, s; the first burst starts at the rising edge.
    burst_duty:
        Fraction of the period a burst is on, 0..1 (0: no bursts).
    """

    active_a: float
    burst_a: float = 0.0
    burst_period_s: float = 1e-3
    burst_duty: float = 0.0

    def __post_init__(self) -> None:
        if not (self.active_a >= 0 and self.burst_a >= 0 and self.burst_period_s > 0
                and 0.0 <= self.burst_duty <= 1.0):
            raise ValueError("FamilyCurrent: need active_a >= 0, burst_a >= 0, "
                             f"burst_period_s > 0 and 0 <= burst_duty <= 1, got {self}")

    def burst_charge(self, duration_s: float) -> float:
        """Exact charge of the bursts over a window of ``duration_s`` from its rise, C."""
        return self.burst_a * float(_pulse_on_time(duration_s, self.burst_period_s,
                                                   self.burst_duty * self.burst_period_s))


_FAMILY_DTYPE = np.dtype([(f.name, "f8") for f in fields(FamilyCurrent)])
#: A :class:`FamilyCurrent`'s fields in :data:`_FAMILY_DTYPE`'s order (an emulator builds
#: the table on every block it renders: ``astuple``'s deep copies took half the time).
_family_row = attrgetter(*_FAMILY_DTYPE.names)


def _families(board: str) -> dict[str, FamilyCurrent]:
    """The current on ``board`` of each op family whose data row gives one."""
    return {f.name: FamilyCurrent(**f.currents[board]) for f in OP_FAMILIES
            if board in f.currents}


#: Board profiles: the defaults of a :class:`PowerModel` (its field names; ``families`` by
#: family name, from each op family's data row: :data:`energyrig.opfamilies.OP_FAMILIES`,
#: ``current.<board>``). Sources: nRF52840 Product Specification, "Current consumption"
#: (docs.nordicsemi.com, ps_nrf52840); ESP32 Series Datasheet, "Power consumption by power
#: modes". "estimate" marks a figure no datasheet gives; the family figures all are (a
#: datasheet gives CoreMark, not crypto: their sources are in the data rows).
PROFILES: dict[str, dict[str, Any]] = {
    # nRF52840 at 3.0 V, DC/DC on, CPU at 64 MHz from flash with cache (Zephyr's default).
    "nrf52840": {
        "supply_v": 3.0,
        # System ON idle, RTC running: estimate (1.5 µA with 3 RAM banks retained, as a
        # summary of the PS's "Sleep" table gives it; a Zephyr image retains more RAM).
        "idle_a": 3.0e-6,
        # CPU running CoreMark from flash, DC/DC: the PS's "Compounded" IS0 (that + radio TX
        # at 0 dBm, DC/DC) is 8.1 mA; less the radio's ~4.8 mA at 0 dBm, ~3.3 mA. With the
        # LDO instead all run currents about double (IS2, IS0 with the LDO: 15.4 mA).
        "active_a": 3.3e-3,
        "accel_a": 2.2e-3,       # CryptoCell-310 busy on top of the CPU: estimate
        "edge_spike_a": 2.0e-3,  # GPIO toggle + HFCLK/regulator wake-up transient: estimate
        "edge_spike_s": 30e-6,   # estimate
        "families": _families("nrf52840"),
        # The clock the run currents above hold at: the nRF52840's only CPU clock, 64 MHz,
        # at which the PS's "Current consumption" figures (cited above) are given.
        "clock_hz": 64e6,
        # Clock (issue 22 item 5; the emulated Cortex-M4 sets it): the nRF52840 cannot change
        # its clock, so no datasheet gives the split; the form I = a + b f is that of the run
        # current tables of clock-scalable Cortex-M4 parts (e.g. STM32L476 datasheet DS10198,
        # "Current consumption in Run mode" at f_HCLK from 1 to 80 MHz). The part that does
        # not follow the clock (HFCLK source, regulator and flash bias): estimate, 18 % of
        # the 3.3 mA.
        "static_a": 0.6e-3,
        # Share of the dynamic current at 64 MHz that grows as f^2: the core voltage a part
        # with voltage scaling raises with its clock (study 4's "supply voltage per
        # frequency"); estimate, chosen so the energy per op has its minimum inside 16..64
        # MHz (about 40 MHz for the hash family).
        "quadratic": 0.5,
    },
    # ESP32 (WROOM) at 3.3 V, radio off (modem-sleep), CPU at 160 MHz (ESP-IDF's default).
    "esp32": {
        "supply_v": 3.3,
        # Datasheet, modem-sleep (CPU on, radio off) at 160 MHz: 27 to 44 mA (80 MHz: 20 to
        # 31, 240 MHz: 30 to 68). Idle between batches: the range's low end; one core busy
        # with an op: estimate within the range.
        "idle_a": 27e-3,
        "active_a": 36e-3,
        "accel_a": 12e-3,        # AES/SHA/RSA accelerator busy: estimate
        "edge_spike_a": 15e-3,   # GPIO toggle + leaving the idle task's WAITI: estimate
        "edge_spike_s": 30e-6,   # estimate
        "families": _families("esp32"),
        "clock_hz": 160e6,
        # Modem-sleep at 80 and 160 MHz (the table's low ends, 20 and 27 mA) on a line
        # a + b f: 13 mA that does not follow the clock. ESP32 Series Datasheet, "Power
        # consumption by power modes" (the 240 MHz figure, 30 mA, lies below that line: the
        # datasheet's ranges are too wide for a curve).
        "static_a": 13e-3,
        "quadratic": 0.0,
    },
}


@dataclass(frozen=True, slots=True)
class PowerModel:
    """Current of a simulated board, and the faults of the instrument that measures it.

    The field defaults are a flat board (one active current, no spikes, no bursts);
    :meth:`from_dict` with a ``profile`` starts from a board of :data:`PROFILES` instead.

    Attributes
    ----------
    supply_v:
        Supply voltage, V (in PPK2 source mode the emulator uses the regulator setting).
    idle_a:
        Current while the trigger is low, A.
    active_a:
        Current while the trigger is high, A, for a family without an entry in ``families``
        and for ``mark`` windows.
    accel_a:
        Extra current while high when the window's edge record has ``accel`` set, A.
    families:
        Current of each op family in its windows (by family name:
        :data:`energyrig.opfamilies.NAMES`).
    edge_spike_a:
        Extra current for ``edge_spike_s`` after every trigger edge, A.
    edge_spike_s:
        Length of that spike, s (cut short by the next edge).
    profile:
        Name of the :data:`PROFILES` entry the defaults came from, or ``None`` (a record).
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
    loss_at_s, loss_s:
        Fault: ``loss_at_s`` after streaming starts the instrument loses ``loss_s`` of samples
        at once, as a device whose buffer overflowed while the host was stalled (the counter
        advances over them).
    range_offset_a:
        Fault of an instrument with current ranges (a PPK2): extra offset of each range
        (0, 1, ...), A, added to ``offset_a`` for the samples measured in that range.
    range_gain_error:
        Fault of an instrument with current ranges: extra relative gain error of each range
        (0, 1, ...; 0.01 reads 1 % high), on top of ``gain_error`` (:func:`range_faults`).
    overhead_s:
        Fault: every trigger window lasts this much longer than the DUT's edges say (its
        falling edge comes later), s: a fixed window overhead, outside the ops' truth.
    overhead_a:
        The board's current during that overhead, A (instead of the idle current).
    clock_hz:
        The CPU clock the window currents (``active_a``, ``families``) are given at, Hz; an
        edge record stating another clock scales them (:func:`clock_scale`).
    static_a:
        The part of every window current that does not follow the clock, A (at most the
        least of ``active_a`` and the families' ``active_a``).
    quadratic:
        Share of the dynamic current at ``clock_hz`` that grows as the clock squared, 0..1.
    """

    supply_v: float = 3.0
    idle_a: float = 3.0e-6
    active_a: float = 3.3e-3
    accel_a: float = 2.2e-3
    families: dict[str, FamilyCurrent] = field(default_factory=dict)
    edge_spike_a: float = 0.0
    edge_spike_s: float = 0.0
    profile: str | None = None
    noise_a: float = 0.0
    loads: tuple[PeriodicLoad, ...] = field(default=())
    offset_a: float = 0.0
    gain_error: float = 0.0
    skew_s: float = 0.0
    drop_rate: float = 0.0
    corrupt_rate: float = 0.0
    disconnect_after_s: float | None = None
    loss_at_s: float | None = None
    loss_s: float = 0.0
    range_offset_a: tuple[float, ...] = ()
    range_gain_error: tuple[float, ...] = ()
    overhead_s: float = 0.0
    overhead_a: float = 0.0
    clock_hz: float = 64e6
    static_a: float = 0.0
    quadratic: float = 0.0

    def __post_init__(self) -> None:
        for name in ("supply_v", "idle_a", "active_a", "accel_a", "edge_spike_a",
                     "edge_spike_s", "noise_a", "overhead_s", "overhead_a", "static_a"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"PowerModel.{name} must be >= 0, got {getattr(self, name)!r}")
        if not (self.clock_hz > 0 and 0.0 <= self.quadratic <= 1.0):
            raise ValueError("PowerModel: need clock_hz > 0 and 0 <= quadratic <= 1, got "
                             f"{self.clock_hz!r}, {self.quadratic!r}")
        least = min([self.active_a, *(fc.active_a for fc in self.families.values())])
        if self.static_a > least:
            raise ValueError(f"PowerModel.static_a ({self.static_a!r} A) is over a window "
                             f"current ({least!r} A): the part that does not follow the clock "
                             "cannot exceed the whole")
        unknown = sorted(set(self.families) - set(NAMES))
        if unknown:
            raise ValueError(f"PowerModel.families: unknown family {', '.join(unknown)} (the "
                             f"families are {', '.join(NAMES)})")
        for name in ("drop_rate", "corrupt_rate"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"PowerModel.{name} must be in [0, 1), got {getattr(self, name)!r}")
        if self.disconnect_after_s is not None and not self.disconnect_after_s > 0:
            raise ValueError("PowerModel.disconnect_after_s must be > 0 s or None")
        if self.loss_at_s is not None and not (self.loss_at_s > 0 and self.loss_s > 0):
            raise ValueError("PowerModel.loss_at_s needs loss_at_s > 0 s and loss_s > 0 s")
        for name, what in (("range_offset_a", "offsets within ±1 A"),
                           ("range_gain_error", "gain errors within ±1")):
            table = tuple(map(float, getattr(self, name)))
            object.__setattr__(self, name, table)
            if not all(math.isfinite(x) and abs(x) < 1 for x in table):
                raise ValueError(f"PowerModel.{name} must be finite {what}, got {table!r}")

    @property
    def faulty(self) -> bool:
        """True when any fault is switched on."""
        return bool(self.offset_a or self.gain_error or self.skew_s or self.drop_rate
                    or self.corrupt_rate or self.disconnect_after_s is not None
                    or self.loss_at_s is not None or any(self.range_offset_a)
                    or any(self.range_gain_error)
                    or self.overhead_s)

    def family_table(self) -> npt.NDArray[np.void]:
        """The current of each family wire id (row index; fields of :class:`FamilyCurrent`),
        ``active_a`` where none is given."""
        return np.array([_family_row(self.family_current(family))
                         for family in range(len(NAMES) + 1)], dtype=_FAMILY_DTYPE)

    def family_current(self, family: int) -> FamilyCurrent:
        """The current of the family with wire id ``family`` (an unknown id: ``active_a``)."""
        return self.families.get(family_name(family), FamilyCurrent(self.active_a))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PowerModel:
        """Build from a plain mapping (a fixture table).

        ``profile`` names a :data:`PROFILES` entry whose figures are the defaults; keys that
        are ``None`` are not given; ``loads`` is a list of tables and ``families`` a table of
        tables by family name, each replacing the profile's entry for that family.
        """
        given = {k: v for k, v in data.items() if v is not None}
        profile = given.get("profile")
        if profile is not None and profile not in PROFILES:
            raise ValueError(f"PowerModel: unknown profile {profile!r} (profiles: "
                             f"{', '.join(PROFILES)})")
        base = dict(PROFILES[profile]) if profile is not None else {}
        families = {**base.pop("families", {}),
                    **{name: FamilyCurrent(**fc) for name, fc in given.pop("families", {}).items()}}
        loads = tuple(PeriodicLoad(**load) for load in given.pop("loads", ()))
        return cls(**{**base, **given, "loads": loads, "families": families})

    def as_dict(self) -> dict[str, Any]:
        """A plain mapping that :meth:`from_dict` turns back into this model (JSON-ready)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["loads"] = [_record(ld) for ld in self.loads]
        out["families"] = {name: _record(fc) for name, fc in self.families.items()}
        return out


def _record(obj: PeriodicLoad | FamilyCurrent) -> dict[str, float]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def clock_scale(model: PowerModel, clock_hz: npt.ArrayLike) -> F64:
    """``d(f)``: how much of its dynamic part at ``model.clock_hz`` a window current draws at
    ``clock_hz`` (Hz; 0 means ``model.clock_hz``): ``(1 - q) r + q r^2``, ``r = f / clock_hz``
    (module docstring)."""
    hz = np.asarray(clock_hz, dtype=np.float64)
    r = np.where(hz > 0, hz, model.clock_hz) / model.clock_hz
    return (1.0 - model.quadratic) * r + model.quadratic * r * r


def at_clock(model: PowerModel, fc: FamilyCurrent, clock_hz: float) -> FamilyCurrent:
    """``fc`` (given at ``model.clock_hz``) at ``clock_hz`` (Hz, 0: unchanged): static part
    kept, dynamic part and bursts scaled by :func:`clock_scale`, bursts ``r`` times as often."""
    d = float(clock_scale(model, clock_hz))
    r = (clock_hz or model.clock_hz) / model.clock_hz
    return FamilyCurrent(model.static_a + (fc.active_a - model.static_a) * d, fc.burst_a * d,
                         fc.burst_period_s / r, fc.burst_duty)


def best_clock_hz(model: PowerModel, family: int = 0) -> float:
    """The clock at which a fixed number of cycles of the family with wire id ``family``
    costs the least energy, Hz: ``sqrt(static_a / k2)`` with ``k2`` the quadratic
    coefficient (infinite when the model has no quadratic share, or 0 without static part:
    the energy then falls, or stays, as the clock rises)."""
    dynamic_a = model.family_current(family).active_a - model.static_a
    k2 = model.quadratic * dynamic_a / model.clock_hz**2
    if k2 <= 0:
        return math.inf if model.static_a > 0 else 0.0
    return math.sqrt(model.static_a / k2)


def _states(t_ns: I64, edges: EdgeArray) -> tuple[I64, npt.NDArray[np.bool_],
                                                  npt.NDArray[np.bool_], I64]:
    """For each sample time: the index of the last edge at or before it (0 before the first
    edge), whether there is one, whether it rose (the level is high), and the time since it,
    ns. Fields are gathered one by one: a gather of whole edge records is several times
    slower."""
    edge_ns = edges["t_ns"].astype(np.int64)
    idx = np.searchsorted(edge_ns, t_ns, side="right") - 1
    at = np.maximum(idx, 0)
    after = idx >= 0
    return at, after, after & (edges["level"][at] != 0), t_ns - edge_ns[at]


def _held(after: npt.NDArray[np.bool_], high: npt.NDArray[np.bool_], since_ns: I64,
          hold_s: float) -> npt.NDArray[np.bool_]:
    """Whether each time lies within ``hold_s`` after a falling edge (the window overhead;
    the rest from :func:`_states`)."""
    return after & ~high & (since_ns < hold_s * 1e9)


def _edge_currents(model: PowerModel, edges: EdgeArray) -> tuple[F64, F64, F64, F64]:
    """What each edge sets while its level lasts, if high: the window's current without its
    bursts and the bursts' current, A, their period and on time, s (the edge's family at
    the edge's clock)."""
    table = model.family_table()
    fc = table[np.where(edges["family"] < len(table), edges["family"], 0)]
    hz = edges["clock_hz"].astype(np.float64)
    d = clock_scale(model, hz)
    period = fc["burst_period_s"] * model.clock_hz / np.where(hz > 0, hz, model.clock_hz)
    window = (model.static_a + (fc["active_a"] - model.static_a) * d
              + np.where(edges["accel"] != 0, model.accel_a, 0.0))
    return window, fc["burst_a"] * d, period, fc["burst_duty"] * period


def model_current(model: PowerModel, t_ns: I64, edges: EdgeArray) -> F64:
    """The board's current at each sample time, A (the ops' truth, plus the window overhead
    where the model has one).

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
        # What an edge sets holds until the next one: computed per edge, gathered per sample.
        at, after, high, since_ns = _states(t_ns, edges)
        window_a, burst_a, period_s, on_s = _edge_currents(model, edges)
        window = window_a[at]
        if burst_a.any():
            window = window + burst_a[at] * _pulse_on(since_ns * 1e-9, period_s[at], on_s[at])
        idle = np.where(_held(after, high, since_ns, model.overhead_s), model.overhead_a,
                        model.idle_a)
        current = np.where(high, window, idle)
        if model.edge_spike_a:
            current = current + np.where(after & (since_ns < model.edge_spike_s * 1e9),
                                         model.edge_spike_a, 0.0)
    else:
        current = np.full(t_ns.shape, model.idle_a)
    if model.loads:
        t_s = t_ns * 1e-9
        for load in model.loads:
            current = current + load.current(t_s)
    return current


def logic_level(t_ns: I64, edges: EdgeArray, hold_s: float = 0.0) -> npt.NDArray[np.uint8]:
    """Trigger level (0/1) at each sample time, from the same edges, held high ``hold_s``
    after each falling edge (the model's ``overhead_s``)."""
    if not len(edges):
        return np.zeros(np.shape(t_ns), dtype=np.uint8)
    t_ns = np.asarray(t_ns, dtype=np.int64)
    _, after, high, since_ns = _states(t_ns, edges)
    return (high | _held(after, high, since_ns, hold_s)).astype(np.uint8)


def measured_current(model: PowerModel, t_ns: I64, edges: EdgeArray,
                     rng: np.random.Generator, load: Load = BOARD,
                     supply_v: float | None = None) -> F64:
    """Current as a faulty, noisy instrument reports it, A.

    ``load`` is what the input is connected to (:mod:`~energyrig.instruments.sim.switch`):
    the board (``skew_s`` delays its current against the logic channel), nothing, or a
    reference resistor across ``supply_v`` (default the model's), V. Then gain error, offset
    and white noise of rms ``noise_a``.
    """
    t_ns = np.asarray(t_ns, dtype=np.int64)
    if load.kind == "dut":
        skew_ns = int(round(model.skew_s * 1e9))
        current = model_current(model, t_ns - skew_ns, edges)
    else:
        volts = model.supply_v if supply_v is None else supply_v
        current = np.full(t_ns.shape, volts / load.ohms)  # open: ohms = inf
    if model.gain_error:
        current = current * (1.0 + model.gain_error)
    if model.offset_a:
        current = current + model.offset_a
    if model.noise_a:
        current = current + rng.normal(0.0, model.noise_a, current.shape)
    return current


def range_faults(model: PowerModel, current_a: F64, ranges: npt.NDArray[np.integer]) -> F64:
    """``current_a`` with the faults of the range each sample is measured in (``ranges``):
    ``i · (1 + range_gain_error[r]) + range_offset_a[r]`` (a range beyond a table: none), A,
    with numpy indexing over the whole array."""
    n = int(ranges.max(initial=0)) + 1
    gain = np.ones(max(n, len(model.range_gain_error)))
    gain[:len(model.range_gain_error)] += model.range_gain_error
    offset = np.zeros(max(n, len(model.range_offset_a)))
    offset[:len(model.range_offset_a)] = model.range_offset_a
    return current_a * gain[ranges] + offset[ranges]


def window_charge(model: PowerModel, t_rise_ns: int, t_fall_ns: int, accel: bool,
                  family: int = 0, clock_hz: float = 0) -> tuple[float, float]:
    """Exact charge of a trigger window ``[t_rise, t_fall]`` (trigger high throughout), C.

    The window holds the family's active current (plus ``accel_a`` when ``accel``), its
    bursts from the rise on, and the rising edge's spike (the falling edge's lies after the
    window). The edge before the rise must lie at least ``edge_spike_s`` earlier, as on
    the bench, where windows are milliseconds apart.

    Parameters
    ----------
    model:
        The board's power model.
    t_rise_ns, t_fall_ns:
        Edge times, ns of CLOCK_MONOTONIC.
    accel:
        The rising edge's ``accel`` bit.
    family:
        The rising edge's family wire id.
    clock_hz:
        The rising edge's CPU clock, Hz (0: the model's ``clock_hz``).

    Returns
    -------
    tuple of float
        ``(total_c, idle_c)``: the charge the model draws over the window, and the part of
        it the board would have drawn idle (``idle_a`` plus the periodic loads) over the
        same time, so ``total_c - idle_c`` is the charge due to the op alone, C.
    """
    duration_s = (t_fall_ns - t_rise_ns) * 1e-9
    load_c = math.fsum(ld.charge(t_rise_ns * 1e-9, t_fall_ns * 1e-9) for ld in model.loads)
    fc = at_clock(model, model.family_current(family), clock_hz)
    active_a = fc.active_a + (model.accel_a if accel else 0.0)
    spike_c = model.edge_spike_a * min(model.edge_spike_s, duration_s)
    total_c = math.fsum((active_a * duration_s, fc.burst_charge(duration_s), spike_c, load_c))
    return total_c, model.idle_a * duration_s + load_c
