"""Oscilloscope protocol: settings, record planning and the SCPI of each step, as pure functions.

Nothing here talks to an instrument; :mod:`energyrig.instruments.scope.driver` sends what
these functions return over a PyVISA session, and tests check them without one.

Wiring (the published method this follows): a shunt of ``shunt_ohms`` in series with the
board, one probe on the supply (``supply`` channel), one across the shunt (``shunt``
channel; or a current probe with ``current_scale_a_per_v``), the trigger GPIO on a third
(``trigger`` channel). With the shunt in the ground return and the scope's ground at the
supply's negative terminal, both probes share the scope's ground: ``i = v_shunt / R`` and the
board's supply is ``v_supply − v_shunt`` (``voltage_minus_shunt``); without a supply channel
the supply is the constant ``supply_v``.

Record planning: the horizontal scale is the smallest 1-2-5 step whose screen holds
``pre + margin × window + post``; the memory depth the smallest settable one that samples at
``sample_rate_hz`` or faster; the trigger sits ``pre`` after the record's start. A window so
long that no depth reaches ``sample_rate_hz`` is recorded at a lower rate with a warning:
:func:`max_window_s` says where that starts, for ``--batch auto``.

Units: V, A, s, Hz.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from energyrig.errors import InstrumentError
from energyrig.instruments.scope.dialects import Dialect, steps_125

log = logging.getLogger(__name__)

#: Fraction of the screen's half height a signal may use (the rest is margin).
SCREEN_FILL = 0.9


@dataclass(frozen=True, slots=True)
class ScopeSettings:
    """What a fixture says about an oscilloscope bench.

    Attributes
    ----------
    resource:
        VISA resource string as written for the scope (``TCPIP::192.168.1.50::INSTR``,
        ``TCPIP::host::5025::SOCKET``, ``USB0::0x1AB1::0x04CE::DS1ZA...::INSTR``).
    dialect:
        A :data:`~energyrig.instruments.scope.dialects.DIALECTS` name, or ``"auto"`` (from
        ``*IDN?``).
    shunt, supply, trigger:
        Channel numbers of the shunt probe, the supply probe (``None``: constant
        ``supply_v``) and the trigger GPIO.
    shunt_ohms:
        Shunt resistance, Ω (``i = v / R``); or ``None`` with ``current_scale_a_per_v``.
    current_scale_a_per_v:
        Current probe: amperes per volt at the scope input.
    supply_v:
        Nominal board supply, V (the constant supply without a supply channel; the vertical
        range of the supply channel; the default logic level).
    voltage_minus_shunt:
        The supply probe sits on the supply side of the shunt: board supply = supply − shunt.
    max_current_a:
        Highest current the board draws, A (vertical range of the shunt channel).
    trigger_level_v:
        Edge trigger level, V (default: half of ``supply_v``).
    sample_rate_hz:
        Sample rate to keep, Sa/s (windows longer than :func:`max_window_s` get less).
    probe_supply, probe_shunt, probe_trigger:
        Probe attenuation set on each channel (1 for 1×, 10 for 10×).
    window_margin:
        The record holds ``window_margin ×`` the expected window: the estimate is the last
        batch's time, and a batch on a loaded host, or a key generation, can take twice as
        long. A batch that outlasts the record fails its window.
    timeout_s:
        VISA I/O timeout, s (a deep record takes seconds to read).
    arm_timeout_s:
        Longest wait for the scope to report it is armed, s.
    visa_library:
        PyVISA backend: ``"@py"`` (pyvisa-py, pure Python) by default.
    """

    resource: str
    dialect: str = "auto"
    shunt: int = 2
    supply: int | None = 1
    trigger: int = 3
    shunt_ohms: float | None = 1.0
    current_scale_a_per_v: float | None = None
    supply_v: float = 3.3
    voltage_minus_shunt: bool = True
    max_current_a: float = 0.1
    trigger_level_v: float | None = None
    sample_rate_hz: float = 1e6
    probe_supply: float = 1.0
    probe_shunt: float = 1.0
    probe_trigger: float = 1.0
    window_margin: float = 2.0
    timeout_s: float = 10.0
    arm_timeout_s: float = 5.0
    visa_library: str = "@py"

    def __post_init__(self) -> None:
        used = [c for c in (self.supply, self.shunt, self.trigger) if c is not None]
        if len(set(used)) != len(used):
            raise ValueError(f"scope channels must differ: supply={self.supply}, "
                             f"shunt={self.shunt}, trigger={self.trigger}")
        if (self.shunt_ohms is None) == (self.current_scale_a_per_v is None):
            raise ValueError("give exactly one of shunt_ohms and current_scale_a_per_v")
        if self.voltage_minus_shunt and self.supply is None:
            raise ValueError("voltage_minus_shunt needs a supply channel")
        if not (self.sample_rate_hz > 0 and self.max_current_a > 0 and self.supply_v > 0
                and self.window_margin >= 1.0):
            raise ValueError("sample_rate_hz, max_current_a, supply_v must be > 0 and "
                             "window_margin >= 1")

    @property
    def amperes_per_volt(self) -> float:
        """Factor from the shunt channel's volts to amperes."""
        if self.shunt_ohms is not None:
            return 1.0 / self.shunt_ohms
        assert self.current_scale_a_per_v is not None
        return self.current_scale_a_per_v

    @property
    def level_v(self) -> float:
        """Trigger level, V."""
        return self.trigger_level_v if self.trigger_level_v is not None else self.supply_v / 2

    def roles(self) -> dict[str, tuple[int, float]]:
        """``role -> (channel, probe attenuation)`` of the channels in use."""
        out = {"shunt": (self.shunt, self.probe_shunt),
               "trigger": (self.trigger, self.probe_trigger)}
        if self.supply is not None:
            out["supply"] = (self.supply, self.probe_supply)
        return out

    def signal_range_v(self, role: str) -> tuple[float, float]:
        """Lowest and highest voltage the channel of ``role`` will see, V."""
        shunt_max = self.max_current_a / self.amperes_per_volt
        if role == "shunt":
            return -0.05 * shunt_max, shunt_max
        if role == "supply":
            return 0.95 * self.supply_v, 1.05 * self.supply_v + shunt_max
        return -0.1 * self.supply_v, 1.1 * self.supply_v


@dataclass(frozen=True, slots=True)
class Vertical:
    """Vertical setup of one channel: V/div and offset at the probe tip."""

    channel: int
    scale_v: float
    offset_v: float
    probe: float


@dataclass(frozen=True, slots=True)
class RecordPlan:
    """Horizontal setup of one single-shot record.

    Attributes
    ----------
    scale_s:
        Horizontal scale, s/div.
    position_s:
        Time of the screen centre after the trigger, s (the trigger sits ``pre_s`` after the
        record's start).
    depth:
        Memory depth to set, points (``None``: the scope chooses).
    rate_hz:
        The sample rate this gives, Sa/s (the scope's own value is read back).
    total_s:
        Record length, s.
    """

    scale_s: float
    position_s: float
    depth: int | None
    rate_hz: float
    total_s: float


def vertical(dialect: Dialect, channel: int, low_v: float, high_v: float,
             probe: float) -> Vertical:
    """The finest V/div (and its offset) that shows ``[low_v, high_v]`` on screen.

    Raises
    ------
    InstrumentError
        The range does not fit at the coarsest scale (the fixture's ``supply_v`` or
        ``max_current_a`` is wrong for this scope).
    """
    centre = (low_v + high_v) / 2
    half = (high_v - low_v) / 2
    for scale in steps_125(dialect.vscale_v[0] * probe, dialect.vscale_v[1] * probe):
        room = SCREEN_FILL * scale * dialect.v_divs / 2
        limit = dialect.max_offset_v(scale / probe) * probe
        offset = min(max(-centre, -limit), limit)  # the screen centre is at -offset
        if abs(-offset - low_v) <= room and abs(high_v + offset) <= room and half <= room:
            shown = -offset if dialect.offset_is_centre else offset
            return Vertical(channel, scale, round(shown, 6), probe)
    raise InstrumentError(f"{dialect.name}: CH{channel} cannot show {low_v:g} .. {high_v:g} V "
                          f"even at {dialect.vscale_v[1] * probe:g} V/div")


def _scales(dialect: Dialect) -> tuple[float, ...]:
    return steps_125(*dialect.timebase_s)


def plan_record(dialect: Dialect, n_channels: int, rate_hz: float, pre_s: float,
                window_s: float, post_s: float, margin: float = 1.0) -> RecordPlan:
    """Timebase, position and depth of a record holding ``pre + margin·window + post``.

    Raises
    ------
    InstrumentError
        The record would be longer than the slowest timebase holds.
    """
    total = pre_s + margin * window_s + post_s
    # rounding slack: the window max_window_s gives fills e.g. 14 x 0.2 s to the last bit
    scales = [s for s in _scales(dialect) if s * dialect.h_divs >= total * (1 - 1e-9)]
    if not scales:
        raise InstrumentError(f"{dialect.name}: a record of {total:g} s is longer than the "
                              f"slowest timebase ({dialect.timebase_s[1] * dialect.h_divs:g} s)")
    scale = scales[0]
    screen = scale * dialect.h_divs
    max_rate = dialect.rate_limit(n_channels)
    choices = dialect.depth_choices(n_channels)
    fitting = [d for d in choices if d / screen <= max_rate * 1.0001] or [choices[0]]
    depth = next((d for d in fitting if d / screen >= rate_hz * 0.9999), fitting[-1])
    rate = min(depth / screen, max_rate)
    if rate < rate_hz * 0.9999:
        log.warning("%s: a %.3g s record holds %d points: %.3g Sa/s, below the %.3g Sa/s "
                    "asked for (window longer than max_window_s)", dialect.name, total, depth,
                    rate, rate_hz)
    return RecordPlan(scale_s=scale, position_s=round(screen / 2 - pre_s, 12),
                      depth=depth if dialect.depth is not None else None, rate_hz=rate,
                      total_s=screen)


def max_window_s(dialect: Dialect, n_channels: int, rate_hz: float, pre_s: float,
                 post_s: float, margin: float = 1.0) -> float:
    """Longest expected window whose record still samples at ``rate_hz`` or faster, s.

    The deepest memory at ``rate_hz`` lasts ``depth / rate_hz``; the screen must be a whole
    timebase step no longer than that and hold ``pre + margin·window + post``.
    """
    max_rate = dialect.rate_limit(n_channels)
    longest = max(d / min(rate_hz, max_rate) for d in dialect.depth_choices(n_channels))
    screens = [s * dialect.h_divs for s in _scales(dialect) if s * dialect.h_divs <= longest]
    if not screens:
        return 0.0
    return max(0.0, (max(screens) - pre_s - post_s) / margin)


def si_points(points: int) -> str:
    """A depth as scopes name it: 7000 -> ``7K``, 1400000 -> ``1.4M``."""
    for factor, prefix in ((1_000_000, "M"), (1_000, "K")):
        if points >= factor:
            return f"{points / factor:g}{prefix}"
    return str(points)


def _fmt(templates: tuple[str, ...], **fields: float | int) -> list[str]:
    return [t.format(**fields) for t in templates]


def setup_commands(dialect: Dialect, settings: ScopeSettings) -> list[str]:
    """Commands sent once by ``start()``: acquisition mode, unused channels off."""
    used = {ch for ch, _ in settings.roles().values()}
    out = list(dialect.setup)
    for ch in range(1, dialect.channels + 1):
        if ch not in used:
            out += _fmt(dialect.channel_off, ch=ch)
    return out


def verticals(dialect: Dialect, settings: ScopeSettings) -> tuple[Vertical, ...]:
    """Vertical setup of every channel in use, in channel order."""
    out = [vertical(dialect, ch, *settings.signal_range_v(role), probe)
           for role, (ch, probe) in settings.roles().items()]
    return tuple(sorted(out, key=lambda v: v.channel))


def arm_commands(dialect: Dialect, settings: ScopeSettings, plan: RecordPlan,
                 chans: tuple[Vertical, ...]) -> list[str]:
    """Channels, timebase, depth and trigger of one record, then the single-shot arm."""
    out = [dialect.stop]
    for v in chans:
        out += _fmt(dialect.channel_on, ch=v.channel, scale=v.scale_v, offset=v.offset_v,
                    probe=v.probe, gain=1.0 / v.probe)
    pre_pct = round(100.0 * (plan.total_s / 2 - plan.position_s) / plan.total_s, 6)
    out += _fmt(dialect.timebase, scale=plan.scale_s, position=plan.position_s,
                delay=-plan.position_s, trigger_pct=pre_pct)
    if dialect.depth is not None and plan.depth is not None:
        out.append(dialect.depth.format(depth=plan.depth, depth_si=si_points(plan.depth)))
    out += _fmt(dialect.trigger, ch=settings.trigger, level=settings.level_v)
    out.append(dialect.single)
    return out


def read_parts(dialect: Dialect, points: int) -> list[tuple[list[str], int]]:
    """The commands before each waveform data query and the points it returns."""
    if dialect.read_points is None or not dialect.read_part:
        return [([], points)]
    parts = []
    for first in range(0, points, dialect.read_points):
        count = min(dialect.read_points, points - first)
        parts.append((_fmt(dialect.read_part, first1=first + 1, last1=first + count,
                           first0=first, count=count), count))
    return parts
