"""Names and content tests of Saleae Logic 2's raw-data CSV exports (standard library only:
the file-kind table imports this for every file it opens; the reader is
:mod:`energyrig.instruments.saleae`).

Logic 2's *Export Raw Data* (CSV) writes ``analog.csv`` and ``digital.csv`` into the folder
chosen (saleae/logic2-automation, ``Capture.export_raw_data_csv``: "produces exactly the
same format as used in the Logic 2 software"); their layout is Saleae's support article
"Binary and CSV Export Formats - 2025 Update" (saleae/gitbook-docs,
``faq/technical-faq/binary-and-csv-export-formats-2025-update.md``). docs/formats.md has
both.
"""
from __future__ import annotations

import codecs

#: The time column of both files, s from the capture's start.
TIME = "Time [s]"
#: The MSO waveform export's first column (time from the trigger, s): read past.
TRIGGER_TIME = "Trigger [s]"
#: File names Logic 2 gives the two exports in the folder chosen.
ANALOG_NAME = "analog.csv"
DIGITAL_NAME = "digital.csv"
#: A digital cell: 0 low, 1 high, X no data (a channel off, or a gap in the capture).
DIGITAL_CELLS = frozenset(("0", "1", "X"))


def header(head: bytes) -> list[str] | None:
    """The names of the first line when it is a Logic 2 export's header (``Time [s]`` first,
    or after ``Trigger [s]``), else ``None``."""
    first = head.split(b"\n", 1)[0].rstrip(b"\r").removeprefix(codecs.BOM_UTF8)
    try:
        names = first.decode("utf-8").split(",")
    except UnicodeDecodeError:
        return None
    if len(names) >= 2 and names[0] == TIME:
        return names
    if len(names) >= 3 and names[:2] == [TRIGGER_TIME, TIME]:
        return names
    return None


def is_digital(head: bytes) -> bool:
    """A digital export: the header, then a first row whose channel cells are 0, 1 or X (an
    analog export's hold volts with decimals; a bad cell further on is the reader's to
    report, by line)."""
    names = header(head)
    lines = head.split(b"\n")
    if names is None or names[0] != TIME or len(lines) < 3:  # no whole first row
        return False
    row = lines[1].rstrip(b"\r").decode("utf-8", errors="replace").split(",")
    return set(row[1:]) <= DIGITAL_CELLS


def is_saleae(head: bytes) -> bool:
    """Either export (the reader tells them apart by :func:`is_digital`)."""
    return header(head) is not None
