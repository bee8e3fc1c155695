"""Window marks of an Otii recording: the level of a trigger from its transitions, and the
transitions the UART log's text marks.

**The UART log of a saved project** (channel ``rx``, a ``log`` output of Otii's virtual
``Uart`` device in ``project.json``): its data folder ``data/data/project/<blob>/`` holds an
SQLite database ``events.db``, in WAL mode (rows may still sit in ``events.db-wal``), with a
table ``event(id, time, data)``: ``time`` in microseconds from the recording's start,
``data`` the received text as a BLOB, one row per line. No Qoitech document states this; it
is the layout a published analysis reads from four real Otii Arc projects
(github.com/nreinoso23/floodnet-energy-cadence, ``scripts/common_otii.py``,
``rec4_uart_rows``; 4,963 rows of one recording), and the devices' declaration of ``rx`` as a
``log`` channel is in the real projects of ``otiio``'s tests
(github.com/andyshinn/otiio, ``tests/data/*/data/versions/*/data/project.json``). The
database is copied (with its ``-wal`` and ``-shm``) to a temporary folder before it is
opened, so the project is never written and rows only in the WAL are read.

A row marks a window edge when its text, control characters removed and whitespace trimmed
(as Qoitech's client strips an ``rx`` value: ``otii_tcp_client.recording``), starts with the
start or the stop text: the trigger is high from a start mark to the first stop mark after
it. Times are seconds on the project's timeline: the row's time plus the log measurement's
``offset`` (µs), as a samples channel's are placed.
"""
from __future__ import annotations

import shutil
import sqlite3
import tempfile
import unicodedata
from pathlib import Path

import numpy as np
import numpy.typing as npt

from energyrig.errors import CaptureError, ChannelError

#: The UART log's database in its data folder, and the files SQLite keeps beside it.
EVENTS_DB = "events.db"
SQLITE_SIDE_FILES = ("-wal", "-shm")


def levels_at(t_s: npt.NDArray[np.float64], times_s: npt.NDArray[np.float64],
              values: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The level (0/1) at each time ``t_s`` (s) of an input that takes ``values[k]`` at
    ``times_s[k]`` (s, rising order), low before the first transition; a transition at a
    sample's exact time counts for that sample."""
    k = np.searchsorted(times_s, t_s, side="right") - 1
    if not len(values):
        return np.zeros(len(t_s), dtype=np.uint8)
    return np.where(k >= 0, values[np.maximum(k, 0)], 0).astype(np.uint8)


def line_text(data: bytes | str | None) -> str:
    """A UART log row's text: UTF-8 (undecodable bytes replaced), control characters
    removed, whitespace trimmed."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data or "")
    return "".join(ch for ch in text if unicodedata.category(ch)[0] != "C").strip()


def uart_transitions(folder: Path, source: str, start: str, stop: str, offset_s: float
                     ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.uint8]]:
    """The trigger's transitions ``(times in s, levels)`` the UART log in ``folder`` marks:
    high at each row starting with ``start`` while low, low at the first row starting with
    ``stop`` after it (both texts trimmed as the rows are).

    Raises
    ------
    CaptureError
        No ``events.db`` in ``folder``, or one SQLite cannot read as the log's table.
    ChannelError
        No row starts with ``start`` (naming how many rows were read).
    """
    start, stop = start.strip(), stop.strip()
    db = folder / EVENTS_DB
    if not db.is_file():
        raise CaptureError(source, f"the UART log (rx) has no {EVENTS_DB} in {folder}: a "
                                   "copy of the project without its log data?")
    times: list[float] = []
    levels: list[int] = []
    rows = 0
    with tempfile.TemporaryDirectory(prefix="energyrig-otii-log-") as tmp:
        for name in (EVENTS_DB + suffix for suffix in ("", *SQLITE_SIDE_FILES)):
            if (folder / name).is_file():
                shutil.copyfile(folder / name, Path(tmp) / name)
        con = sqlite3.connect(Path(tmp) / EVENTS_DB)
        try:
            for time_us, data in con.execute("SELECT time, data FROM event ORDER BY time, id"):
                rows += 1
                text = line_text(data)
                high = bool(levels) and levels[-1] == 1
                if (text.startswith(stop) if high else text.startswith(start)):
                    times.append(offset_s + float(time_us) / 1e6)
                    levels.append(0 if high else 1)
        except (sqlite3.Error, TypeError, ValueError) as exc:
            wal = ("" if (folder / (EVENTS_DB + "-wal")).is_file() else
                   f" (no {EVENTS_DB}-wal beside it: Otii may keep the whole log there; copy "
                   "the project with it)")
            raise CaptureError(source, f"the UART log {db} is not the table event(id, time, "
                                       f"data) Otii writes: {exc}{wal}") from exc
        finally:
            con.close()
    if not levels:
        raise ChannelError(source, f"trigger: no line of the UART log (rx, {rows} rows) starts "
                                   f"with {start!r}: give the text the firmware prints at a "
                                   "window's start (--uart-start)")
    return np.array(times, dtype=np.float64), np.array(levels, dtype=np.uint8)
