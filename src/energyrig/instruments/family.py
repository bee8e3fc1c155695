"""The family record: everything the rig knows of one instrument family, in one place.

Each family folder (``ppk2/``, ``scope/``, ``sigrok/``) exports ``FAMILY = Family(...)`` from
its ``family.py``; :mod:`energyrig.instruments.registry` collects them. As libsigrok's
``struct sr_dev_driver`` does for its drivers, the record says what the family is called in a
fixture (``kind``), the pydantic model of its ``[instrument]`` table, how to open an
acquisition from a validated table, how to find attached instruments, which emulator plays it
on the simulated bench, and which capture files it reads.

It also holds what every acquisition reports of itself: :class:`Limits` (what the bench must
know to size a batch and wait for samples, and the :class:`Resolution` of its current channel
for the uncertainty budget) and :class:`InstrumentInfo` (identity and settings for manifests
and ``rig instruments check``).

This module imports no instrument code (no numpy, pyvisa or pyserial), so the registry and
the CLI stay cheap to import.
"""
from __future__ import annotations

import bisect
import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from energyrig.capture import Capture
    from energyrig.config import Strict
    from energyrig.instruments.base import Acquisition
    from energyrig.instruments.fileopts import CaptureOptions


@dataclass(frozen=True)
class Resolution:
    """The ADC step of an instrument's current channel, per current range.

    Attributes
    ----------
    ranges:
        ``(highest current of the range, A; its step, A)`` per range, ascending; a current
        above the last range's bound takes the last step.
    source:
        Where the steps come from (the instrument's own calibration, its vertical setup).
    """

    ranges: tuple[tuple[float, float], ...]
    source: str

    def __post_init__(self) -> None:
        bounds = [upto for upto, _ in self.ranges]
        if not self.ranges or bounds != sorted(bounds) or not all(
                step > 0 and math.isfinite(step) for _, step in self.ranges):
            raise ValueError(f"Resolution: need ranges ascending with finite steps > 0, got "
                             f"{self.ranges!r}")

    def step_a(self, current_a: float) -> float:
        """The step of the lowest range that holds ``|current_a|``, A."""
        i = bisect.bisect_left([upto for upto, _ in self.ranges], abs(current_a))
        return self.ranges[min(i, len(self.ranges) - 1)][1]


@dataclass(frozen=True)
class Limits:
    """What the bench must know of an acquisition to size a batch and wait for it.

    Attributes
    ----------
    sample_rate_hz:
        Samples per second the records hold, Hz.
    max_record_s:
        Longest record (``pre + window_margin × window + post``) it holds at
        ``sample_rate_hz``, s; ``None``: a stream, bounded only by its buffer.
    stream_lag_s:
        How far behind real time its samples reach the host, s (0 for a recorder, whose
        :meth:`~energyrig.instruments.base.Acquisition.collect` waits for the whole record).
    window_margin:
        How many times the expected window a record reserves (a scope's ``window_margin``;
        1 for others).
    resolution:
        The current channel's ADC step (``None``: not known; the uncertainty budget's ADC
        resolution component is then unknown).
    """

    sample_rate_hz: float
    max_record_s: float | None
    stream_lag_s: float
    window_margin: float = 1.0
    resolution: Resolution | None = None

    def __post_init__(self) -> None:
        if not (self.sample_rate_hz > 0 and math.isfinite(self.sample_rate_hz)):
            raise ValueError(f"sample_rate_hz must be a finite number > 0, got "
                             f"{self.sample_rate_hz!r}")
        if not self.window_margin >= 1.0:
            raise ValueError(f"window_margin must be >= 1, got {self.window_margin!r}")

    @property
    def period_s(self) -> float:
        """Sample period, s."""
        return 1.0 / self.sample_rate_hz

    def max_window_s(self, pre_s: float, post_s: float) -> float | None:
        """Longest expected window a record with margins ``pre_s`` and ``post_s`` holds at
        ``sample_rate_hz``, s (``None``: a stream, no limit)."""
        if self.max_record_s is None:
            return None
        return max(0.0, (self.max_record_s - pre_s - post_s) / self.window_margin)


@dataclass(frozen=True)
class StatedCalibration:
    """The calibration an instrument stores of itself (a PPK2's metadata), as a gain
    calibration checks it.

    Attributes
    ----------
    identity:
        Which stored calibration it is (recorded with a gain measured through it).
    calibrated:
        Whether the instrument says it was calibrated.
    gain_warn, gain_refuse:
        How far the measured gain (measured / true) may be from 1 by what it states, as a
        fraction: beyond ``gain_warn`` the two disagree (a warning), beyond ``gain_refuse``
        one of them is wrong (a wrong reference, a broken unit: refused).
    basis:
        Why those bounds, in one phrase.
    """

    identity: str
    calibrated: bool
    gain_warn: float
    gain_refuse: float
    basis: str


@dataclass(frozen=True)
class InstrumentInfo:
    """Who an acquisition is and how it is set up (replaces an untyped ``describe()`` dict).

    Attributes
    ----------
    kind:
        The family's fixture ``kind`` (``"ppk2"``).
    name:
        What the instrument calls itself: a scope's ``*IDN?``, a sigrok device's model, the
        PPK2's hardware revision.
    address:
        Where it was reached (serial port, VISA resource, sigrok ``--driver`` spec).
    sample_rate_hz:
        Samples per second as set up, Hz (NaN: not configured).
    details:
        The family's settings and calibration, JSON-serialisable.
    serial:
        What tells this unit from every other of its model (a PPK2's serial number from its
        metadata or its USB descriptor, a scope's from ``*IDN?``), ``""`` when it offers none.
    stated:
        The calibration the instrument holds of itself and how far its gain may be off by
        it, or ``None`` (it holds none the rig can read).
    """

    kind: str
    name: str
    address: str
    sample_rate_hz: float
    details: Mapping[str, Any] = field(default_factory=dict)
    serial: str = ""
    stated: StatedCalibration | None = None

    def to_dict(self) -> dict[str, Any]:
        """What a run manifest records: ``kind``, ``name``, ``serial`` (``None``: none),
        ``address``, ``sample_rate_hz`` (``None`` when not configured) and the details'
        keys."""
        rate = self.sample_rate_hz if math.isfinite(self.sample_rate_hz) else None
        return {"kind": self.kind, "name": self.name, "serial": self.serial or None,
                "address": self.address, "sample_rate_hz": rate, **self.details}


@dataclass(frozen=True, slots=True)
class Found:
    """One instrument a family's scan found.

    Attributes
    ----------
    kind:
        The family's fixture ``kind``.
    address:
        Where it is (serial port, VISA resource, sigrok ``--driver`` spec).
    description:
        What it says it is.
    fixture:
        The lines of a fixture's ``[instrument]`` table that select it.
    """

    kind: str
    address: str
    description: str
    fixture: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class FileKind:
    """One capture file format.

    Attributes
    ----------
    name:
        What the format is called in messages (``"sigrok session"``).
    extensions:
        File name extensions, lower case with the dot (``(".sr",)``).
    sniff:
        ``sniff(head)`` -> whether the first bytes of a file are this format (must import
        nothing heavy: it runs for every file opened).
    reader:
        ``"module:function"``, imported when a file of this kind is opened, called as
        ``function(path, options)`` -> :class:`~energyrig.capture.Capture`.
    """

    name: str
    extensions: tuple[str, ...]
    sniff: Callable[[bytes], bool]
    reader: str

    def open(self, path: Path, options: CaptureOptions) -> Capture:
        """Open ``path`` with this kind's reader."""
        module, _, func = self.reader.partition(":")
        opener: Callable[[Path, CaptureOptions], Capture] = getattr(
            importlib.import_module(module), func)
        return opener(path, options)


def _no_emulator_args(config: Any) -> list[str]:
    return []


#: Faults of an instrument's stream (lost samples, corrupt bytes, a cable pulled, a second
#: lost at once) and of its ranges (an offset and a gain error per range), each emulated by
#: some emulators only; offset, gain and skew are the power model's and every emulator
#: applies them.
STREAM_FAULTS = ("drop_rate", "corrupt_rate", "disconnect_after_s", "loss_at_s",
                 "range_offset_a", "range_gain_error")


@dataclass(frozen=True)
class Family:
    """One instrument family, as the rig sees it.

    Attributes
    ----------
    kind:
        The ``kind`` of a fixture's ``[instrument]`` table that selects the family.
    config:
        The pydantic model of that table (its ``kind`` field is ``Literal[kind]``); the
        fixture validates it once, the driver uses it as it is.
    open:
        ``open(config, address)`` -> the (unstarted) acquisition; ``address`` overrides the
        table's (the emulator's pty or VISA resource on the simulated bench), ``None`` keeps
        it.
    scan:
        ``scan()`` -> the attached instruments of this family (``rig instruments``); raises
        :class:`~energyrig.errors.EnergyrigError`, :class:`OSError` or :class:`ImportError`
        when it cannot search.
    emulator:
        The ``python -m`` module that emulates the family on the simulated bench (``None``:
        none does, and a ``[sim]`` fixture refuses the kind).
    emulator_args:
        ``emulator_args(config)`` -> the emulator's options beyond the shared command line.
    file_kinds:
        The capture files this family's software writes that ``rig analyze`` reads.
    emulator_faults:
        The stream faults of the power model (:data:`STREAM_FAULTS`) the emulator
        emulates; a ``[sim]`` fixture that sets another is refused, not silently ignored.
    program_fields:
        The fields of ``config`` that name a program the rig runs or a library it loads
        (sigrok's ``sigrok_cli``, a scope's ``visa_library``): set to anything but their
        default, they make the fixture code, which the trust rule then applies to
        (:func:`energyrig.fixtures.loader.check_trusted`, docs/security.md).
    """

    kind: str
    config: type[Strict]
    open: Callable[[Any, str | None], Acquisition]
    scan: Callable[[], list[Found]]
    emulator: str | None = None
    emulator_args: Callable[[Any], list[str]] = _no_emulator_args
    file_kinds: tuple[FileKind, ...] = ()
    emulator_faults: frozenset[str] = frozenset()
    program_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = [f for f in self.program_fields if f not in self.config.model_fields]
        if unknown:
            raise ValueError(f"Family {self.kind}: program_fields {unknown} are not fields of "
                             f"{self.config.__name__}")
