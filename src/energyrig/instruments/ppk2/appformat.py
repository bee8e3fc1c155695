"""Names and content tests of the Power Profiler app's files (standard library only: the
file-kind table imports this for every file it opens; the readers are in :mod:`.appfile`).

Taken from NordicSemiconductor/pc-nrfconnect-ppk (docs/formats.md cites the files).
"""
from __future__ import annotations

import codecs

#: Header names of the app's CSV export (``exportChartAction.ts``).
CSV_TIME = "Timestamp(ms)"
CSV_CURRENT = "Current(uA)"
CSV_PACKED = "D0-D7"
#: The packed column of the development builds of April 2020 (before v3.0.0): ``Bits``
#: (commit a7b1157), then ``LAP0-LAP7`` (fc6268e); both hold the 8-bit word as binary text,
#: D7 first (``toString(2).padStart(8, '0')``).
CSV_PACKED_D7_FIRST = ("Bits", "LAP0-LAP7")
CSV_NAMES = frozenset((CSV_TIME, CSV_CURRENT, CSV_PACKED, *CSV_PACKED_D7_FIRST,
                       *(f"D{k}" for k in range(8))))
#: Layouts of the export's digital text (``--digital-layout``): D0 first (since v3.1.3) or
#: D7 first (v3.0.0 to v3.1.2 under the same ``D0-D7`` header, and the builds above).
CSV_LAYOUTS = ("d0-first", "d7-first")
#: Layouts of a session's 16-bit digital word: the app's bit pairs (big-endian), or a plain
#: D0..D7 bit mask (little-endian; m-mcgowan/ppk2-python ``save_ppk2``).
SESSION_LAYOUTS = ("pairs", "mask")

#: Members of a saved session (``saveFileHandler.ts``, ``FileBuffer.ts``, ``foldingBuffer.ts``).
SESSION_RAW = "session.raw"
SESSION_METADATA = "metadata.json"
SESSION_MINIMAP = "minimap.raw"
#: ``formatVersion`` in metadata.json the reader follows (the app's ``CURRENT_VERSION``).
FORMAT_VERSION = 2


def is_app_csv(head: bytes) -> bool:
    """The first line is the app's CSV header: its names only, ``Current(uA)`` among them."""
    first = head.split(b"\n", 1)[0].rstrip(b"\r").removeprefix(codecs.BOM_UTF8)
    try:
        names = first.decode("ascii").split(",")
    except UnicodeDecodeError:
        return False
    return CSV_CURRENT in names and set(names) <= CSV_NAMES


def is_app_session(head: bytes) -> bool:
    """A zip whose first member is one of a saved session's three."""
    if not head.startswith(b"PK\x03\x04") or len(head) < 30:
        return False
    name_len = int.from_bytes(head[26:28], "little")
    return head[30:30 + name_len].decode("ascii", errors="replace") in (
        SESSION_RAW, SESSION_METADATA, SESSION_MINIMAP)
