"""Calibration records and the store that holds them.

A **record** is one small JSON file written by a calibration routine: who the instrument is
(:class:`Identity`), the fixture, board and firmware it was measured on, who ran it, when and
with which software, and each quantity it measured (:class:`Value`: the value, its standard
uncertainty, the reference used, the fit's residual, and when it expires). ::

    {"format": 1, "id": "20261123T160512Z-ppk2-offset_a",
     "instrument": {"kind": "ppk2", "name": "PPK2 (HW 1)", "address": "/dev/ttyACM0"},
     "fixture": "sim", "board": "host", "firmware": "energyrig-fw 0.4.0",
     "created_utc": "2026-11-23T16:05:12Z", "operator": "ana@bench1",
     "software": "energyrig 0.4.0",
     "values": {"offset_a": {"value": 1.2e-06, "u": 3e-08, "unit": "A", "method": "zero",
                             "reference": "input open", "residual_rms": 2e-07, "n": 20000,
                             "expires_utc": "2026-11-24T16:05:12Z"}}}

The **store** is a directory of records (:func:`calibration_dir`: the fixture's
``[calibration] dir``, or ``$ENERGYRIG_CALIBRATION_DIR``). What applies to a bench is a
:class:`Calibration`: for each quantity, the newest unexpired value of a record of that
instrument (:meth:`CalibrationStore.latest`), so a daily ``rig calibrate zero`` and a gain
calibrated last month combine; or one record named on the command line (:func:`from_file`),
which must be for this instrument and unexpired.

Every problem with a record is a :class:`~energyrig.errors.ConfigError` naming the file.
Units are SI (A, s; ``gain`` is dimensionless: measured / true current).
"""
from __future__ import annotations

import getpass
import logging
import math
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from energyrig.bounded import read_json
from energyrig.calibration.quantities import (
    BUILD_QUANTITIES,
    CORRECTIONS,
    QUANTITIES,
    ROUTINES,
    UNITS,
    Quantity,
    implausible,
)
from energyrig.config import Strict, validate
from energyrig.errors import ConfigError

if TYPE_CHECKING:
    from energyrig.fixtures.schema import Fixture
    from energyrig.instruments.base import InstrumentInfo

log = logging.getLogger(__name__)

#: Environment variable that overrides the fixture's calibration directory.
CALIBRATION_DIR_ENV = "ENERGYRIG_CALIBRATION_DIR"
#: The record format this module writes and reads.
FORMAT = 1

# The quantities, their units and routines: energyrig.calibration.quantities (no pydantic,
# so the CLI can name the routines without loading this module).

def build_of(hello: Mapping[str, Any]) -> str:
    """The board and firmware build a ``hello`` reply names (``"host energyrig-fw 0.1.0
    (g1234abc)"``): what a window overhead belongs to."""
    return f"{hello.get('board')} firmware {hello.get('firmware')} ({hello.get('build')})"


class Identity(Strict):
    """Which instrument a record belongs to.

    ``kind`` must match, and ``serial`` (the unit's serial number: a PPK2's from its USB
    descriptor or the emulator's metadata, a scope's from ``*IDN?``) when both sides have
    one; else ``name`` (a scope's ``*IDN?``, the PPK2's hardware revision, which every PPK2
    of a revision shares): records written before serials were recorded still match, by
    name. ``address`` is where it was reached, recorded for the operator (a USB port or an
    emulator's pty changes between sessions).
    """

    kind: str
    name: str
    serial: str = ""
    address: str = ""

    @classmethod
    def of(cls, info: InstrumentInfo) -> Identity:
        """The identity of an open acquisition (its ``describe()``)."""
        return cls(kind=info.kind, name=info.name, serial=info.serial, address=info.address)

    def match(self, other: Identity) -> Literal["serial", "name"] | None:
        """How ``other`` is this instrument: by ``"serial"``, by ``"name"`` (one of the two
        has no serial number), or not (``None``)."""
        if self.kind != other.kind:
            return None
        if self.serial and other.serial:
            return "serial" if self.serial == other.serial else None
        return "name" if self.name == other.name else None

    def matches(self, other: Identity) -> bool:
        return self.match(other) is not None

    @property
    def key(self) -> tuple[str, str]:
        """What tells instruments apart: kind and serial number (name without one)."""
        return self.kind, self.serial or self.name

    @property
    def label(self) -> str:
        return f"{self.kind} {self.name!r}" + (f" serial {self.serial}" if self.serial else "")


def _by_name_note(record: Record, instrument: Identity) -> str | None:
    """The note a record matched by name only gets (``None``: matched by serial)."""
    if record.instrument.match(instrument) != "name" or not instrument.serial:
        return None
    return (f"{record.id}: recorded without the instrument's serial number; taken for "
            f"{instrument.label} by its name")


class RangeValue(Strict):
    """One quantity in one current range: its value and standard uncertainty (k = 1), SI."""

    value: float
    u: float = Field(ge=0)


class Measured(Strict):
    """What a routine measured of one quantity (a :class:`Value` without its unit and
    expiry, which the record adds).

    Attributes
    ----------
    value:
        The value, SI.
    u:
        Its standard uncertainty (k = 1), SI.
    method:
        The routine that measured it (``zero``, ``gain``, ``skew``).
    reference:
        What it was measured against (``"10.00 ohm ± 0.1 % at 3.000 V"``, ``"input open"``).
    residual_rms:
        Root mean square residual of the fit behind it, in ``unit`` of the fitted signal
        (A for a current fit), or ``None``.
    n:
        Samples or points the value rests on.
    ranges:
        The value of each current range it was measured in separately (a PPK2's 0..4:
        ``zero`` in the range its open input sits in, ``gain`` in each range its references'
        currents land in), with its own standard uncertainty; ``value`` applies to the
        ranges not listed, and to every range of a record without them (written before
        ranges were measured, or of an instrument with one range).
    """

    value: float
    u: float = Field(ge=0)
    method: str
    reference: str = ""
    residual_rms: float | None = None
    n: int | None = Field(None, ge=0)
    ranges: dict[int, RangeValue] = Field(default_factory=dict)

    @field_validator("value", "u")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v

    def of_range(self, r: int) -> RangeValue:
        """The value and u that apply to current range ``r``."""
        return self.ranges.get(r) or RangeValue(value=self.value, u=self.u)

    def table(self, n: int) -> tuple[float, ...]:
        """The value of each of ranges ``0 .. n-1``."""
        return tuple(self.of_range(r).value for r in range(n))

    def implausible(self, quantity: Quantity) -> tuple[str, str] | None:
        """What is wrong with this as a value of ``quantity``
        (:func:`~energyrig.calibration.quantities.implausible` of the value and of each
        range's): ``(field, problem)``, the field below the quantity (``value``,
        ``ranges.1.value``), or ``None``. The routines refuse to store such a value; the
        store refuses to read it."""
        found = implausible(quantity, self.value, self.u, method=self.method,
                            residual_rms=self.residual_rms, n=self.n)
        if found is not None:
            return found
        for r, rv in sorted(self.ranges.items()):
            found = implausible(quantity, rv.value, rv.u)
            if found is not None:
                return f"ranges.{r}.{found[0]}", f"in range {r}: {found[1]}"
        return None



class Value(Measured):
    """One calibrated quantity of a record: what was measured, its ``unit`` (``"A"``, ``"s"``
    or ``"1"``) and when it stops being valid (``expires_utc``)."""

    unit: str
    expires_utc: datetime

    def expired(self, now: datetime) -> bool:
        return now >= self.expires_utc


class Record(Strict):
    """One calibration record (the module docstring shows one)."""

    format: Literal[1] = FORMAT
    id: str = Field(min_length=1)
    instrument: Identity
    fixture: str
    board: str | None = None
    firmware: str | None = None
    build: str | None = None
    created_utc: datetime
    operator: str
    software: str
    values: dict[Quantity, Value] = Field(min_length=1)
    notes: tuple[str, ...] = ()
    instrument_calibration: str | None = None

    @field_validator("values")
    @classmethod
    def _gain_positive(cls, values: dict[Quantity, Value]) -> dict[Quantity, Value]:
        gain = values.get("gain")
        if gain and not (gain.value > 0 and all(r.value > 0 for r in gain.ranges.values())):
            raise ValueError("gain must be > 0 (measured / true current)")
        return values

    @property
    def firmware_build(self) -> str:
        """:func:`build_of` the firmware the record was measured on."""
        return build_of({"board": self.board, "firmware": self.firmware, "build": self.build})


def new_record(fixture: Fixture, instrument: Identity, hello: Mapping[str, Any],
               values: Mapping[Quantity, Measured], *, now: datetime | None = None,
               notes: tuple[str, ...] = (), instrument_calibration: str | None = None
               ) -> Record:
    """A record of ``values`` measured now on the bench of ``fixture``.

    Parameters
    ----------
    fixture:
        The bench definition (its name, and each quantity's validity ``[calibration]
        valid_s``).
    instrument:
        Who was calibrated.
    hello:
        The firmware's ``hello`` reply (board and firmware), empty without a DUT.
    values:
        What the routines measured of each quantity.
    now:
        The time of the measurement (default: now, UTC).
    notes:
        What the operator should know of the measurement (a warning of a routine).
    instrument_calibration:
        The instrument's own stored calibration the values were measured through (a
        PPK2's metadata, :class:`~energyrig.instruments.base.StatedCalibration`).
    """
    from energyrig import __version__

    now = (now or datetime.now(UTC)).replace(microsecond=0)
    valid = fixture.calibration.valid_s
    full = {q: Value(**v.model_dump(), unit=UNITS[q],
                     expires_utc=now + timedelta(seconds=getattr(valid, q)))
            for q, v in values.items()}
    record_id = f"{now:%Y%m%dT%H%M%SZ}-{instrument.kind}-{'+'.join(sorted(full))}"
    return Record(id=record_id, instrument=instrument, fixture=fixture.name or fixture.path.stem,
                  board=hello.get("board"), firmware=hello.get("firmware"),
                  build=hello.get("build"), created_utc=now,
                  operator=f"{getpass.getuser()}@{socket.gethostname()}",
                  software=f"energyrig {__version__}", values=full, notes=notes,
                  instrument_calibration=instrument_calibration)


def load_record(path: Path) -> Record:
    """Read one record.

    Raises
    ------
    ConfigError
        The file is missing, not a regular file, too large (``LIMITS`` of
        :mod:`energyrig.bounded`), not JSON, or not a calibration record (names the field),
        or holds an implausible value (:meth:`Measured.implausible`: names the value, the
        limit and the quantity).
    """
    try:
        data = read_json(path, "calibration record")
    except FileNotFoundError as exc:
        raise ConfigError(path, "", "no such calibration file") from exc
    record = validate(Record, data, path)
    for q, v in record.values.items():
        found = v.implausible(q)
        if found is not None:
            field, problem = found
            raise ConfigError(path, f"values.{q}.{field}",
                              f"{problem}; nothing is corrected with it: run `rig calibrate "
                              f"{ROUTINES[q]}` again, or move the record out of the store")
    return record


@dataclass(frozen=True)
class Calibration:
    """What applies to one instrument: each quantity's value and the record it came from.

    Attributes
    ----------
    instrument:
        The instrument it applies to.
    values:
        The valid value of each quantity calibrated.
    sources:
        The record id each value comes from.
    origin:
        Where it was selected: ``"store DIR"``, ``"file PATH"`` or ``"none"`` (the operator
        chose to measure uncalibrated: no values).
    expired:
        Quantities whose newest value has expired (and none valid is left).
    notes:
        What the operator should know of the selection (a record matched by name only).
    """

    instrument: Identity
    values: Mapping[Quantity, Value]
    sources: Mapping[Quantity, str]
    origin: str
    expired: tuple[Quantity, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def missing(self) -> tuple[Quantity, ...]:
        """Corrections with no valid value: never calibrated, or expired (the baseline's
        advice is never missing: it corrects nothing)."""
        return tuple(q for q in CORRECTIONS if q not in self.values)

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def id(self) -> str | None:
        """The ids of the records used, joined by ``+`` (``None``: none)."""
        return "+".join(sorted(set(self.sources.values()))) or None

    def problem(self) -> str:
        """What is missing, in one phrase with the routines that fix it (``""``: nothing)."""
        if self.complete:
            return ""
        if self.origin == "none":
            return f"{self.instrument.label} is measured uncalibrated (--calibration none)"
        parts = [f"{q} {'expired' if q in self.expired else 'never calibrated'}"
                 for q in self.missing]
        fix = " ".join(sorted({ROUTINES[q] for q in self.missing}))
        return (f"{self.instrument.label} is not fully calibrated ({', '.join(parts)}; "
                f"run `rig calibrate {fix}` or `rig calibrate all`)")

    def manifest(self) -> dict[str, Any]:
        """What a run manifest records: ids, values with uncertainties, what is missing."""
        return {"id": self.id, "instrument": self.instrument.model_dump(),
                "origin": self.origin, "complete": self.complete,
                "problem": self.problem() or None, "missing": list(self.missing),
                "notes": list(self.notes),
                "expired": list(self.expired),
                "values": {q: {"value": v.value, "u": v.u, "unit": v.unit,
                               "record": self.sources[q],
                               "expires_utc": v.expires_utc.isoformat(),
                               **({"ranges": {str(r): rv.model_dump()
                                              for r, rv in sorted(v.ranges.items())}}
                                  if v.ranges else {})}
                           for q, v in self.values.items()}}


def calibration_dir(fixture: Fixture) -> Path:
    """The store of ``fixture``: ``$ENERGYRIG_CALIBRATION_DIR``, else its ``[calibration]
    dir`` (relative to the fixture file). It need not exist yet (the first record creates
    it).

    Raises
    ------
    ConfigError
        The path names something that is not a folder (a file), naming where it was set.
    """
    env = os.environ.get(CALIBRATION_DIR_ENV)
    if env:
        path = Path(env)
        if path.exists() and not path.is_dir():
            raise ConfigError(path, f"${CALIBRATION_DIR_ENV}",
                              "is not a folder: point it at the folder of calibration records")
        return path
    path = fixture.file.parent / fixture.calibration.dir
    if path.exists() and not path.is_dir():
        raise ConfigError(fixture.path, "calibration.dir",
                          f"{path} is not a folder: name the folder of calibration records")
    return path


class CalibrationStore:
    """A directory of calibration records (``*.json``).

    Parameters
    ----------
    directory:
        Where the records are (created on the first :meth:`save`).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def records(self) -> list[tuple[Path, Record]]:
        """Every record, oldest first.

        Raises
        ------
        ConfigError
            The directory is not a folder or cannot be read, or a file in it is not a valid
            record (corrupt files are not skipped silently: remove or repair it).
        """
        if not self.directory.exists():
            return []
        try:
            names = sorted(e.name for e in os.scandir(self.directory))
        except NotADirectoryError:
            raise ConfigError(self.directory, "", "is not a folder of calibration records: "
                                                  "name a folder") from None
        except OSError as exc:
            raise ConfigError(self.directory, "", f"cannot read the folder of calibration "
                                                  f"records ({exc.strerror}): check its "
                                                  "permissions") from None
        found = [(self.directory / n, load_record(self.directory / n)) for n in names
                 if n.endswith(".json")]
        return sorted(found, key=lambda pr: pr[1].created_utc)

    def save(self, record: Record) -> Path:
        """Write ``record`` as ``<id>.json`` (atomically) and return its path."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{record.id}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)
        log.info("calibration %s written to %s", record.id, path)
        return path

    def latest(self, instrument: Identity, now: datetime | None = None,
               build: str | None = None) -> Calibration:
        """For each quantity, the newest unexpired value among this instrument's records;
        for the :data:`BUILD_QUANTITIES`, among those measured on firmware ``build``
        (:func:`build_of`; ``None``: the firmware is not known, they do not apply)."""
        now = now or datetime.now(UTC)
        values: dict[Quantity, Value] = {}
        sources: dict[Quantity, str] = {}
        seen: set[Quantity] = set()
        notes: list[str] = []
        for _, record in reversed(self.records()):
            if not record.instrument.matches(instrument):
                continue
            note = _by_name_note(record, instrument)
            for q, v in record.values.items():
                if q in BUILD_QUANTITIES and record.firmware_build != build:
                    continue
                seen.add(q)
                if q not in values and not v.expired(now):
                    values[q], sources[q] = v, record.id
                    if note and note not in notes:
                        notes.append(note)
        for note in notes:
            log.warning("%s", note)
        expired = tuple(q for q in QUANTITIES if q in seen and q not in values)
        return Calibration(instrument, values, sources, f"store {self.directory}", expired,
                           tuple(notes))


def from_file(path: Path, instrument: Identity, now: datetime | None = None,
              build: str | None = None) -> Calibration:
    """The calibration of one record named by the operator, which must fit the bench (and,
    when it holds a window overhead and ``build`` is known, the bench's firmware build).

    Raises
    ------
    ConfigError
        The record is corrupt, for another instrument or firmware build, or one of its
        values has expired.
    """
    now = now or datetime.now(UTC)
    record = load_record(path)
    if not record.instrument.matches(instrument):
        raise ConfigError(path, "instrument", f"is for {record.instrument.label}, not for this "
                                              f"bench's {instrument.label}")
    held = [q for q in BUILD_QUANTITIES if q in record.values]
    if build is not None and record.firmware_build != build and held:
        raise ConfigError(path, "firmware", f"its {', '.join(held)} measured on "
                                            f"{record.firmware_build}, not on this bench's "
                                            f"{build} (run `rig calibrate {ROUTINES[held[0]]}`)")
    for q, v in record.values.items():
        if v.expired(now):
            raise ConfigError(path, f"values.{q}", f"expired on {v.expires_utc:%Y-%m-%d %H:%M} "
                                                   f"UTC (run `rig calibrate {ROUTINES[q]}`)")
    note = _by_name_note(record, instrument)
    if note:
        log.warning("%s", note)
    return Calibration(instrument, dict(record.values), {q: record.id for q in record.values},
                       f"file {path}", notes=(note,) if note else ())


def select(choice: str, fixture: Fixture, instrument: Identity,
           now: datetime | None = None, build: str | None = None) -> Calibration:
    """The calibration ``--calibration choice`` names for this bench: ``"latest"`` (the
    store's, :meth:`CalibrationStore.latest`), ``"none"`` (no values) or a record's path;
    ``build`` is the firmware build the window overhead must be of (:func:`build_of`).

    Raises
    ------
    ConfigError
        A record in the store, or the one named, is corrupt; the one named is for another
        instrument or has expired.
    """
    if choice == "none":
        return Calibration(instrument, {}, {}, "none")
    if choice == "latest":
        return CalibrationStore(calibration_dir(fixture)).latest(instrument, now, build)
    return from_file(Path(choice), instrument, now, build)


def select_for_capture(choice: str, fixture: Fixture, now: datetime | None = None
                       ) -> Calibration:
    """The calibration ``--calibration choice`` names for a capture file (``rig analyze``),
    which names neither its instrument nor its firmware build: ``"latest"`` takes the
    store's for the one instrument its records are of (its window overhead does not apply:
    the build is unknown), a record's path that record (its overhead too), ``"none"``
    nothing.

    Raises
    ------
    ConfigError
        A record is corrupt or expired, or the store holds records of several instruments
        (or none).
    """
    if choice == "none":
        return Calibration(Identity(kind="capture", name="file"), {}, {}, "none")
    if choice != "latest":
        return from_file(Path(choice), load_record(Path(choice)).instrument, now)
    store = CalibrationStore(calibration_dir(fixture))
    instruments = {r.instrument.key: r.instrument for _, r in store.records()}
    if len(instruments) != 1:
        names = ", ".join(i.label for i in instruments.values()) or "none"
        raise ConfigError(store.directory, "", f"holds records of {len(instruments)} "
                                               f"instruments ({names}): name the capture's "
                                               "record with --calibration PATH")
    return store.latest(next(iter(instruments.values())), now)
