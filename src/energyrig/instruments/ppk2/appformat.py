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
CSV_NAMES = frozenset((CSV_TIME, CSV_CURRENT, CSV_PACKED, *(f"D{k}" for k in range(8))))

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
