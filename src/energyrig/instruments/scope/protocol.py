"""Oscilloscope protocol: record planning and the SCPI of each step, as pure functions.

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
:func:`max_record_s` says where that starts, for ``--batch auto``.

Units: V, A, s, Hz.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from energyrig.errors import InstrumentError
from energyrig.instruments.scope.config import ScopeConfig
from energyrig.instruments.scope.dialects import Dialect, steps_125

log = logging.getLogger(__name__)

#: Fraction of the screen's half height a signal may use (the rest is margin).
SCREEN_FILL = 0.9


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
    # rounding slack: the longest window max_record_s allows fills e.g. 14 x 0.2 s to the
    # last bit
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
                    "asked for (record longer than max_record_s)", dialect.name, total, depth,
                    rate, rate_hz)
    return RecordPlan(scale_s=scale, position_s=round(screen / 2 - pre_s, 12),
                      depth=depth if dialect.depth is not None else None, rate_hz=rate,
                      total_s=screen)


def max_record_s(dialect: Dialect, n_channels: int, rate_hz: float) -> float:
    """Longest record (``pre + margin·window + post``) still sampled at ``rate_hz`` or
    faster, s (0 when none is).

    The deepest memory at ``rate_hz`` lasts ``depth / rate_hz``; the screen must be a whole
    timebase step no longer than that.
    """
    max_rate = dialect.rate_limit(n_channels)
    longest = max(d / min(rate_hz, max_rate) for d in dialect.depth_choices(n_channels))
    screens = [s * dialect.h_divs for s in _scales(dialect) if s * dialect.h_divs <= longest]
    return max(screens, default=0.0)


def si_points(points: int) -> str:
    """A depth as scopes name it: 7000 -> ``7K``, 1400000 -> ``1.4M``."""
    for factor, prefix in ((1_000_000, "M"), (1_000, "K")):
        if points >= factor:
            return f"{points / factor:g}{prefix}"
    return str(points)


def _fmt(templates: tuple[str, ...], **fields: float | int) -> list[str]:
    return [t.format(**fields) for t in templates]


def setup_commands(dialect: Dialect, settings: ScopeConfig) -> list[str]:
    """Commands sent once by ``start()``: acquisition mode, unused channels off."""
    used = {ch for ch, _ in settings.roles().values()}
    out = list(dialect.setup)
    for ch in range(1, dialect.channels + 1):
        if ch not in used:
            out += _fmt(dialect.channel_off, ch=ch)
    return out


def verticals(dialect: Dialect, settings: ScopeConfig) -> tuple[Vertical, ...]:
    """Vertical setup of every channel in use, in channel order."""
    out = [vertical(dialect, ch, *settings.signal_range_v(role), probe)
           for role, (ch, probe) in settings.roles().items()]
    return tuple(sorted(out, key=lambda v: v.channel))


def current_step_a(dialect: Dialect, settings: ScopeConfig,
                   chans: tuple[Vertical, ...]) -> float:
    """Current of one code of the shunt channel, A: its vertical range (``v_divs`` × V/div)
    over the dialect's code range, in amperes (``amperes_per_volt``)."""
    shunt = next(v for v in chans if v.channel == settings.shunt)
    lo, hi = dialect.code_range
    return dialect.v_divs * shunt.scale_v / (hi - lo) * settings.amperes_per_volt


def arm_commands(dialect: Dialect, settings: ScopeConfig, plan: RecordPlan,
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
