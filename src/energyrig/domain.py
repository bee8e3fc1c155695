"""The rig's domain model: what is measured, what one window yielded, and per-op figures.

- :class:`Point` — the factors that identify one measurement point of a sweep.
- :class:`WindowSettings` — how the energy math finds windows and measures baselines
  (:mod:`energyrig.energy.windows`; here so that the CLI can show its defaults without numpy).
- :class:`Window` — one trigger window: what the energy math measured in a capture, plus what
  the bench adds (the firmware's cycle count, the emulator's truth), with the derived
  duration, net energy and mean power computed in one place (:func:`net_energy`).
- :data:`PER_OP` — the per-op columns (a window column divided by the batch size), and
  :func:`windows_frame`, the windows as a table with them.
- The estimate rule: which windows of a point enter its figures (:func:`in_estimate`).

The per-op summary of a set of windows (Student t and bootstrap intervals) is
:func:`energyrig.results.stats.summarise_per_op`.

Everything here sits beside :mod:`energyrig.capture` at the bottom of the package: it imports
no other energyrig module but :mod:`energyrig.flags` (the flags its rules read), so instruments, the energy math, the store and the report can all
use it; it loads pandas only inside the function that builds a table, so the CLI can name
points and flags without it. SI units throughout (s, J, W).
"""
from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Literal, TypeVar

from energyrig.flags import BASELINE_AFTER, BENCH_FLAGS, INTEGRITY_FLAGS

if TYPE_CHECKING:  # pandas loads where a table is built
    import numpy as np
    import numpy.typing as npt
    import pandas as pd

Status = Literal["ok", "failed", "skipped"]
STATUSES: tuple[Status, ...] = ("ok", "failed", "skipped")


#: A word of the firmware protocol (``firmware/PROTOCOL.md``: lowercase names, no spaces).
_WORD = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
#: A printable name without spaces (a Zephyr board target has a ``/``).
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+/-]{0,127}")
_NAMES = {"op": _WORD, "backend": _WORD, "curve": _WORD, "board": _LABEL, "family": _WORD}


def check_name(factor: str, value: object) -> str:
    """``value`` if it is a valid name for ``factor`` (``op``, ``backend``, ``curve``: one
    word of the firmware protocol; ``board``, ``family``: one printable name).

    Raises
    ------
    ValueError
        Naming the factor, the value and what a valid name is made of.
    """
    if not isinstance(value, str) or not _NAMES[factor].fullmatch(value):
        rule = ("letters, digits and '-_.+/', no spaces" if factor == "board"
                else "lowercase letters, digits, '-', '_' and '.'")
        raise ValueError(f"{factor} {value!r} is not a valid name ({rule})")
    return value
#: The whole-number factors and their smallest values.
_WHOLE = {"key_bits": 1, "payload_bytes": 0, "cpu_hz": 1, "rep": 0}


@dataclass(frozen=True)
class WindowSettings:
    """How windows are found and baselines measured.

    Attributes
    ----------
    trigger_bit:
        Logic bit ``Dk`` that carries the trigger (default D0, the wire of TRIGGER_WIRE.md).
    active_high:
        True if the trigger is high during a batch (default); False for an active-low line.
    min_pulse_s:
        Shortest high pulse that is a window, and shortest low span that ends one, in seconds.
        Shorter ones are glitches (see the module docstring). Default 0: every pulse counts.
    guard_s:
        Gap between the baseline span and the edge, s. Default 1 ms: long enough for the
        board's regulator and clocks to settle after a batch, short against typical idle gaps.
    baseline_s:
        Length of the trigger-low span whose mean power is the baseline, s. Default 10 ms
        (1000 samples at the PPK2's 100 kS/s).
    min_samples:
        A window with fewer samples is flagged ``too_few_samples``. Default 20: the edge
        error bound is then at most about a tenth of the gross energy.
    """

    trigger_bit: int = 0
    active_high: bool = True
    min_pulse_s: float = 0.0
    guard_s: float = 1e-3
    baseline_s: float = 10e-3
    min_samples: int = 20

    def __post_init__(self) -> None:
        if not 0 <= self.trigger_bit <= 7:
            raise ValueError(f"trigger_bit must be 0..7 (D0..D7), got {self.trigger_bit}")
        for name in ("min_pulse_s", "guard_s", "baseline_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0 s, got {value}")
        if self.min_samples < 1:
            raise ValueError(f"min_samples must be >= 1, got {self.min_samples}")

    def in_samples(self, period_s: float) -> tuple[int, int, int]:
        """Minimum pulse, guard and baseline span in samples of ``period_s``.

        A span of ``x`` seconds covers ``ceil(x / T)`` samples for the pulse (a pulse of
        exactly ``min_pulse_s`` counts), ``round(x / T)`` for guard and baseline; the pulse and
        the baseline are at least one sample.
        """
        def whole(x: float) -> float:
            return x / period_s * (1.0 - 1e-12)

        pulse = max(1, math.ceil(whole(self.min_pulse_s)))
        return pulse, round(self.guard_s / period_s), max(1, round(self.baseline_s / period_s))

    def spans(self, window: Window, period_s: float) -> tuple[int, int, int, int]:
        """Where ``window`` and its baseline lie, as absolute sample indices of ``period_s``:
        ``(first, last, base_lo, base_hi)``: the window's first and last sample and the
        baseline span ``[base_lo, base_hi)`` the energy math took (``guard_s`` before the
        rising edge, or after the falling edge for a window flagged ``baseline_after``).
        The guard lies between the span and the edge."""
        first, last = window.sample_range(period_s)
        _, guard, base = self.in_samples(period_s)
        if BASELINE_AFTER in window.flags:
            return first, last, last + 1 + guard, last + 1 + guard + base
        return first, last, first - guard - base, first - guard


@dataclass(frozen=True, slots=True)
class Point:
    """The factors that identify one measurement point of a sweep.

    Fields an op does not take are ``None``. ``rep`` numbers repetitions of the same
    configuration (0, 1, ...). ``family`` is the op's family from the firmware catalogue
    ("symmetric", "hash", "public-key", "composite"); it describes the op and is not part
    of the key.
    """

    op: str
    board: str
    backend: str = "software"
    key_bits: int | None = None
    payload_bytes: int | None = None
    curve: str | None = None
    cpu_hz: int | None = None
    rep: int = 0
    family: str | None = None

    def __post_init__(self) -> None:
        """Every factor as the firmware protocol and the results store can carry it.

        Raises
        ------
        ValueError
            Naming the factor: a word sent to the DUT (op, backend, curve) that is not one
            protocol word (``'sha256 payload_bytes=128'`` would smuggle in a parameter the
            point does not record), a board or family that is not one printable name, a
            number that is not whole or is out of range.
        """
        for name in _NAMES:
            if getattr(self, name) is not None:
                check_name(name, getattr(self, name))
        # 128, 128.0 and numpy.int64(128) must give the same key: store plain ints.
        for name, low in _WHOLE.items():
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not float(value).is_integer():
                raise ValueError(f"{name} must be a whole number, not {value!r}")
            if value < low:
                raise ValueError(f"{name} must be >= {low}, not {value!r}")
            object.__setattr__(self, name, int(value))

    @property
    def key(self) -> str:
        """Stable text key of the point: every factor but ``family``, in a fixed order."""
        return "|".join(f"{name}={'' if getattr(self, name) is None else getattr(self, name)}"
                        for name in KEY_FACTORS)

    @property
    def config_key(self) -> str:
        """:attr:`key` without ``rep``: the same for every repetition of a configuration."""
        return self.key.rsplit("|rep=", 1)[0]

    @property
    def part_id(self) -> str:
        """File-system-safe name of the point's part directory (:func:`key_id`)."""
        return key_id(self.key)

    @property
    def label(self) -> str:
        """Short human label: ``aes-cbc-encrypt 128 b 1024 B #2``."""
        parts = [self.op]
        if self.key_bits is not None:
            parts.append(f"{self.key_bits} b")
        if self.curve is not None:
            parts.append(self.curve)
        if self.payload_bytes is not None:
            parts.append(f"{self.payload_bytes} B")
        if self.backend != "software":
            parts.append(self.backend)
        if self.cpu_hz is not None:
            parts.append(f"{self.cpu_hz / 1e6:g} MHz")
        return " ".join(parts) + (f" #{self.rep}" if self.rep else "")


KEY_FACTORS: tuple[str, ...] = ("op", "key_bits", "payload_bytes", "curve", "backend", "board",
                                "cpu_hz", "rep")
FACTORS: tuple[str, ...] = ("family", *KEY_FACTORS)

_Num = TypeVar("_Num", float, "npt.NDArray[np.float64]", "pd.Series")


def key_id(key: str) -> str:
    """File-system-safe name for a point key (:attr:`Point.key`): a hash of it."""
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def net_energy(energy_j: _Num, baseline_w: _Num, duration_s: _Num) -> _Num:
    """Net energy of a window: ``energy_j − baseline_w·duration_s``, J (NaN without a
    baseline). Works on floats, numpy arrays and pandas columns alike: the one formula."""
    return energy_j - baseline_w * duration_s


#: A point whose windows carry an integrity flag (:data:`energyrig.flags.INTEGRITY_FLAGS`)
#: more often than this is stored as failed.
MAX_FLAGGED_FRACTION = 0.5


def integrity_problems(flags: Iterable[str]) -> tuple[str, ...]:
    """The :data:`INTEGRITY_FLAGS` among a window's ``flags`` (its tuple, or the tables'
    ``flag_list``): a window carrying any is left out of its point's estimate."""
    items = set(flags)
    return tuple(f for f in INTEGRITY_FLAGS if f in items)


def in_estimate(flags: Iterable[Iterable[str]]) -> list[bool]:
    """For each window's ``flags``, whether it enters its point's estimate (it carries no
    :func:`integrity_problems`): the one rule of the pipeline, the store, ``rig run`` and
    the report."""
    return [not integrity_problems(f) for f in flags]


def estimate(windows: Sequence[Window]) -> tuple[Window, ...]:
    """The windows of a point that enter its estimate (:func:`in_estimate`)."""
    keep = in_estimate(w.flags for w in windows)
    return tuple(w for w, k in zip(windows, keep, strict=True) if k)


def excluded(flags: Iterable[Iterable[str]]) -> tuple[int, str]:
    """How many of the windows whose ``flags`` are given are left out of the estimate, and
    why: the count of each integrity flag among them (``"corrupt_samples 2, stream_loss
    1"``); ``(0, "")`` when none is."""
    problems = [integrity_problems(f) for f in flags]
    counts = ", ".join(f"{name} {sum(name in p for p in problems)}" for name in INTEGRITY_FLAGS
                       if any(name in p for p in problems))
    return sum(1 for p in problems if p), counts


def window_problems(flags: Iterable[str]) -> tuple[str, ...]:
    """The flags of a window that are about its own samples: all but :data:`BENCH_FLAGS`."""
    return tuple(f for f in flags if f and f not in BENCH_FLAGS)


@dataclass(frozen=True, slots=True)
class Window:
    """One trigger window (SI units).

    Attributes
    ----------
    start_s, end_s:
        Estimated edges in the capture's time base (sample 0 at 0 s), s.
    samples:
        Received samples inside the window.
    energy_j:
        Gross energy, ∫ v·i dt (trapezoidal), J.
    baseline_w:
        Idle power next to the window, subtracted for the net energy, W (NaN with the flag
        ``no_baseline``).
    edge_error_j:
        Bound on the energy error from edge quantisation (one sample at each edge), J.
    flags:
        Names of the problems seen (:data:`energyrig.flags.ENERGY_FLAGS` such as
        ``dropped_samples``, ``saturated``, ``glitch``, and those the bench adds).
    cycles:
        The firmware's cycle count of the whole batch, if the bench ran it.
    true_energy_j, true_net_energy_j:
        The emulator's ground truth on the simulated bench, J.
    lost_samples:
        Samples the instrument lost inside or at the edges of the window.
    corrections:
        What the correction stage took out of the record, ``(name, value)`` in SI units
        (``offset_a``, ``gain``, ``skew_s``, ``overhead_s``, ``overhead_j``); empty when no
        calibration was asked for.
    overhead_s:
        The fixed time of an empty window taken out of :attr:`duration_s`, s
        (:func:`energyrig.energy.figures.take_out_overhead`; its energy is out of ``energy_j`` then).
    net_energy_u_j, duration_u_s:
        Expanded uncertainty (k = 2) of the net energy (J) and of the duration (s) of this
        window as measured (NaN: unknown, e.g. a quantity not calibrated).
    uncertainty:
        The net energy's budget: ``(component, standard uncertainty in J)``
        (:mod:`energyrig.energy.budget`); empty when not computed.
    """

    start_s: float
    end_s: float
    samples: int
    energy_j: float
    baseline_w: float
    edge_error_j: float = 0.0
    flags: tuple[str, ...] = ()
    cycles: int | None = None
    true_energy_j: float | None = None
    true_net_energy_j: float | None = None
    lost_samples: int = 0
    corrections: tuple[tuple[str, float], ...] = ()
    overhead_s: float = 0.0
    net_energy_u_j: float = math.nan
    duration_u_s: float = math.nan
    uncertainty: tuple[tuple[str, float], ...] = ()

    def sample_range(self, period_s: float) -> tuple[int, int]:
        """The first and last sample inside the window, as absolute indices of
        ``period_s`` (the edges lie half a sample outside them)."""
        return round(self.start_s / period_s + 0.5), round(self.end_s / period_s - 0.5)

    @property
    def duration_s(self) -> float:
        """``end_s − start_s − overhead_s``: the time of the window's ops, s."""
        return self.end_s - self.start_s - self.overhead_s

    @property
    def net_energy_j(self) -> float:
        """:func:`net_energy` of the window, J."""
        return net_energy(self.energy_j, self.baseline_w, self.duration_s)

    @property
    def mean_power_w(self) -> float:
        """``energy_j / duration_s``, W."""
        return self.energy_j / self.duration_s


WINDOW_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Window))


# Per-op columns: name -> the window column divided by batch_n.
PER_OP: dict[str, str] = {
    "time_per_op_s": "duration_s",
    "energy_per_op_j": "energy_j",
    "net_energy_per_op_j": "net_energy_j",
    "cycles_per_op": "cycles",
    "true_energy_per_op_j": "true_energy_j",
    "true_net_energy_per_op_j": "true_net_energy_j",
}
def at_supply(value: float | None, supply_v: float | None) -> float:
    """A power, W, or an energy, J, drawn at the supply voltage ``supply_v``, V, as the
    current, A, or the charge, C, it takes (``value / supply_v``, as a battery sees it); NaN
    where either is unknown. Works on arrays and columns alike."""
    if value is None or supply_v is None or not supply_v > 0:
        return math.nan
    return value / supply_v


def finite_or_none(x: float) -> float | None:
    """``x``, or ``None`` where it is NaN or infinite (JSON has no NaN)."""
    return x if math.isfinite(x) else None


def flag_list(flags: Iterable[str] | None) -> list[str]:
    """Flags as the tables hold them (``flag_list``): sorted, unique, no empty names.
    ``flags`` is a sequence of names; text (a version 1 table's ``a,b``) is a TypeError."""
    if isinstance(flags, str):
        raise TypeError(f"flags are a sequence of names, not the text {flags!r}")
    return sorted({str(f) for f in flags or () if f})


def windows_frame(windows: Sequence[Window] | pd.DataFrame, batch_n: int) -> pd.DataFrame:
    """Windows as a table with the derived columns (``duration_s``, ``net_energy_j``,
    ``mean_power_w``) and the per-op columns of :data:`PER_OP` (window / ``batch_n``).

    ``windows`` is a sequence of :class:`Window` or a DataFrame with at least ``start_s``,
    ``end_s``, ``samples``, ``energy_j`` and ``baseline_w`` (its flags as ``flags`` or, as a
    run's windows table holds them, ``flag_list``: sequences of names); the window's ``flags`` come
    out as ``flag_list`` (:func:`flag_list`: a name pandas does not shadow, as in
    ``windows.parquet``), ``corrections`` and ``uncertainty`` as dicts name → value.
    """
    import pandas as pd

    if batch_n < 1:
        raise ValueError(f"batch size must be >= 1, got {batch_n}")
    if isinstance(windows, pd.DataFrame):
        check_window_columns(windows)
        df = windows.rename(columns={"flag_list": "flags"}).reindex(
            columns=list(WINDOW_FIELDS)).copy()
    else:
        df = pd.DataFrame([asdict(w) for w in windows], columns=list(WINDOW_FIELDS))
    df.insert(df.columns.get_loc("flags"), "flag_list",
              [flag_list(None if isinstance(f, float) else f) for f in df.pop("flags")])
    for col in ("corrections", "uncertainty"):
        df[col] = [dict(c) if isinstance(c, (tuple, list, dict)) else {} for c in df[col]]
    df["edge_error_j"] = df["edge_error_j"].fillna(0.0)
    df["lost_samples"] = df["lost_samples"].fillna(0)
    df["overhead_s"] = df["overhead_s"].fillna(0.0)
    for name, values in derived_columns({n: df[n].astype("float64") for n in DERIVED_FROM},
                                        batch_n).items():
        df[name] = values
    return df


def check_window_columns(frame: pd.DataFrame) -> None:
    """A ValueError naming the columns a table of windows lacks of those every window has
    (``start_s``, ``end_s``, ``samples``, ``energy_j``, ``baseline_w``)."""
    missing = [n for n in ("start_s", "end_s", "samples", "energy_j", "baseline_w")
               if n not in frame.columns]
    if missing:
        raise ValueError(f"the windows lack the columns {missing}")


#: The window fields the derived columns (:func:`derived_columns`) are computed from.
DERIVED_FROM: tuple[str, ...] = ("start_s", "end_s", "overhead_s", "energy_j", "baseline_w",
                                 "cycles", "true_energy_j", "true_net_energy_j")


def derived_columns(fields: Mapping[str, _Num], batch_n: int) -> dict[str, _Num]:
    """The derived columns of windows from their :data:`DERIVED_FROM` fields as floats
    (numpy arrays or pandas float columns alike; missing: NaN): ``duration_s``
    (``end_s − start_s − overhead_s``, s), ``net_energy_j`` (:func:`net_energy`, J),
    ``mean_power_w`` (W) and the per-op columns of :data:`PER_OP` (window / ``batch_n``), in
    that order: the one formula of :func:`windows_frame` and the results store."""
    out = {"duration_s": fields["end_s"] - fields["start_s"] - fields["overhead_s"]}
    out["net_energy_j"] = net_energy(fields["energy_j"], fields["baseline_w"], out["duration_s"])
    out["mean_power_w"] = fields["energy_j"] / out["duration_s"]
    both = {**fields, **out}
    out.update({per_op: both[source] / batch_n for per_op, source in PER_OP.items()})
    return out
