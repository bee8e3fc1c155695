"""Oscilloscope CSV exports (a scope's front-panel *Save as CSV*): :func:`open_scope_csv`.

Four layouts, told apart by the rows above the samples (docs/formats.md, "Oscilloscope CSV
export", has an example of each and its source):

Rigol (DS1000Z, DS2000, DS4000)
    ``X,CH1,CH2,Start,Increment,`` then the units row ``Sequence,Volt,Volt,<start>,<increment>``;
    column ``X`` is the sample number: time = start + X × increment.
Keysight / Agilent InfiniiVision
    ``x-axis,1,2`` then the units row ``second,Volt,Volt``; time in seconds. Channel ``1`` is
    read as ``CH1`` (a number given to ``--voltage`` is a constant).
Tektronix (MSO/MDO/TBS and the 4/5/6 series)
    ``key,value`` metadata rows (``Model``, ``Horizontal Units``, ``Sample Interval``, ...),
    then ``TIME,CH1,CH2``; time in the metadata's ``Horizontal Units`` (only ``s`` is read).
Siglent (SDS1000X-E and its ``bin2csv``)
    metadata rows (``Record Length,Analog:N``, ``Sample Interval``, ``Source,CH1``, ...), then
    ``Second,Volt`` (or ``Second,Value``); time in seconds. The one waveform column is read as
    the ``Source`` row's channel (``CH1``) when there is one.

The samples are read by :class:`~energyrig.instruments.csvfile.CsvCapture` with the layout
found here (:class:`~energyrig.instruments.csvfile.CsvLayout`), so they stream in chunks and
every check of the generic reader holds. The scope records volts: the current is a channel
(default the first) with ``--shunt-ohms`` or ``--current-scale``; the supply voltage and the
trigger channel must be named (an analog trigger with ``--trigger-level``).
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from energyrig.errors import CaptureError, ChannelError

if TYPE_CHECKING:  # imported when a file is opened: the sniffer stays cheap (no numpy)
    from energyrig.instruments.csvfile import CsvCapture
    from energyrig.instruments.fileopts import CaptureOptions

#: Lines of the head searched for the column header (Tektronix writes about 20 above it).
_MAX_HEADER_LINE = 48
_HEAD_BYTES = 4096


@dataclass(frozen=True)
class ScopeCsvLayout:
    """What :func:`find_layout` found in a scope export's head.

    Attributes
    ----------
    vendor:
        ``"Rigol"``, ``"Keysight"``, ``"Tektronix"`` or ``"Siglent"``.
    header_line:
        Lines above the column header.
    units_row:
        A units row follows the header.
    time_column:
        The header's first cell.
    channels:
        The waveform columns, as the header names them.
    time_offset_s, time_scale_s:
        time = offset + value × scale, s.
    rename:
        Header cells read as other names (Keysight's ``1`` as ``CH1``, Siglent's ``Volt`` as
        its ``Source``).
    """

    vendor: str
    header_line: int
    units_row: bool
    time_column: str
    channels: tuple[str, ...]
    time_offset_s: float = 0.0
    time_scale_s: float = 1.0
    rename: tuple[tuple[str, str], ...] = ()


def _rows(head: str) -> list[list[str]]:
    lines = head.splitlines()[:_MAX_HEADER_LINE + 2]
    return [[cell.strip() for cell in row] for row in csv.reader(io.StringIO("\n".join(lines)))]


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _metadata(rows: list[list[str]]) -> dict[str, str]:
    return {row[0].lstrip("#").strip().lower(): (row[1] if len(row) > 1 else "")
            for row in rows if row and row[0]}


def _channels(header: list[str], skip: set[str]) -> tuple[str, ...]:
    return tuple(c for c in header[1:] if c and c not in skip)


def find_layout(head: str, source: str = "") -> ScopeCsvLayout | None:
    """The layout of a scope export from its first lines, or ``None`` when it is none of
    the four.

    Raises
    ------
    CaptureError
        The head is one vendor's layout but a part of it is not as that vendor writes it
        (naming the line and what was expected).
    """
    rows = _rows(head)
    for h, header in enumerate(rows[:_MAX_HEADER_LINE]):
        first = header[0].lower() if header else ""
        below = rows[h + 1] if h + 1 < len(rows) else []
        if first == "x" and "Start" in header and "Increment" in header:
            return _rigol(header, below, h, source)
        if first == "x-axis" and h == 0 and not (below and below[0].lower() == "second"):
            raise CaptureError(source, f"Keysight CSV export: line {h + 2} should be the units "
                                       "row 'second,Volt,...' (an export layout the rig does "
                                       "not know)")
        if first == "x-axis" and h == 0:
            rename = tuple((c, f"CH{c}") for c in _channels(header, set()) if c.isdigit())
            names = dict(rename)
            return ScopeCsvLayout("Keysight", h, True, header[0],
                                  tuple(names.get(c, c) for c in _channels(header, set())),
                                  rename=rename)
        if first == "time" and h > 0:
            meta = _metadata(rows[:h])
            if "horizontal units" in meta or "record length" in meta:
                unit = meta.get("horizontal units", "s")
                if unit.lower() != "s":
                    raise CaptureError(source, f"Tektronix CSV export: Horizontal Units "
                                               f"'{unit}': only seconds (s) are read")
                return ScopeCsvLayout("Tektronix", h, False, header[0],
                                      _channels(header, set()))
        if first == "second" and h > 0:
            meta = _metadata(rows[:h])
            if "record length" in meta or "source" in meta:
                channels = _channels(header, set())
                source_channel = meta.get("source", "")
                rename = (((channels[0], source_channel),)
                          if source_channel and len(channels) == 1 else ())
                return ScopeCsvLayout("Siglent", h, False, header[0],
                                      tuple(dict(rename).get(c, c) for c in channels),
                                      rename=rename)
    return None


def _rigol(header: list[str], below: list[str], h: int, source: str) -> ScopeCsvLayout:
    """Rigol's layout: the units row holds Start and Increment under their names."""
    start_at, step_at = header.index("Start"), header.index("Increment")
    if not below or below[0] != "Sequence" or len(below) <= max(start_at, step_at):
        raise CaptureError(source, f"Rigol CSV export: line {h + 2} should be the units row "
                                   "'Sequence,Volt,...,<start>,<increment>' (an export layout "
                                   "the rig does not know)")
    start, step = _number(below[start_at]), _number(below[step_at])
    if start is None or step is None or not step > 0:
        raise CaptureError(source, f"Rigol CSV export: line {h + 2}: Start "
                                   f"'{below[start_at]}' and Increment '{below[step_at]}' "
                                   "must be numbers, the increment > 0 s")
    return ScopeCsvLayout("Rigol", h, True, header[0],
                          _channels(header, {"Start", "Increment"}), start, step)


def is_scope_csv(head: bytes) -> bool:
    """Whether the first bytes are one of the four scope exports (a head that is a vendor's
    layout with a wrong part passes too: the reader then says what is wrong)."""
    if not head or b"\x00" in head:
        return False
    try:
        text = head.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError:
        return False
    try:
        return find_layout(text) is not None
    except CaptureError:
        return True


def _options(layout: ScopeCsvLayout, options: CaptureOptions, source: str) -> CaptureOptions:
    """The generic reader's options: the layout's time column, the current defaulting to the
    first channel; the trigger and the supply voltage must be given."""
    channels = ", ".join(layout.channels) or "(none)"
    if not layout.channels:
        raise ChannelError(source, f"{layout.vendor} CSV export with no waveform column")
    if options.trigger is None:
        raise ChannelError(source, f"{layout.vendor} CSV export: name the trigger channel with "
                                   f"--trigger (the channels are {channels}), an analog one "
                                   "with --trigger-level VOLTS")
    if options.voltage is None:
        raise ChannelError(source, f"{layout.vendor} CSV export: give the supply voltage, a "
                                   f"channel (--voltage CH2; the channels are {channels}) or a "
                                   "constant (--voltage 3.3)")
    return replace(options, time=layout.time_column, time_unit=None,
                   current=options.current or layout.channels[0])


def open_scope_csv(path: Path, options: CaptureOptions) -> CsvCapture:
    """Reader of :func:`energyrig.instruments.files.file_kinds` for scope CSV exports.

    Raises
    ------
    CaptureError
        The head is not one of the four layouts, or a part of it is wrong.
    ChannelError
        The trigger or voltage is not given, or a channel named is not in the file.
    """
    from energyrig.instruments.csvfile import ENCODING, CsvCapture, CsvLayout

    source = str(path)
    try:
        with Path(path).open("rb") as f:
            head = f.read(_HEAD_BYTES).decode(ENCODING, errors="replace")
    except OSError as exc:
        raise CaptureError(source, f"cannot read: {exc.strerror or exc}") from exc
    layout = find_layout(head, source)
    if layout is None:
        raise CaptureError(source, "not a Rigol, Keysight, Tektronix or Siglent CSV export "
                                   "(no column header of theirs in the first lines)")
    return CsvCapture(path, _options(layout, options, source),
                      layout=CsvLayout(layout.header_line, layout.units_row,
                                       layout.time_offset_s, layout.time_scale_s,
                                       layout.rename))
