"""Otii 3 projects written as Otii 3 lays them out, as the MIT-licensed reader otiio 0.1.1
reads them (github.com/andyshinn/otiio, ``_layout.py`` and ``model.py``): the ``.otii3`` stub
beside ``data/``; ``data/meta/project_format`` and ``saved_version``;
``data/versions/<v>/data/project.json`` describing the recordings; each ``samples`` channel a
float32 little-endian ``data/data/project/<blob>/samples.dat``. Used by the tests and by
``benchmarks/reader_memory.py``."""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: The kind (``data_type``) of each channel these projects hold.
KINDS = {"mc": "current", "mv": "voltage", "av": "voltage", "sp": "voltage"}


def write_otii3(folder: Path, signals: Mapping[str, np.ndarray | Iterable[np.ndarray]],
                rate: float, *, fmt: str = "17", offsets_us: Mapping[str, float] | None = None,
                extra: Iterable[dict[str, Any]] = ()) -> Path:
    """A saved project in ``folder`` whose last recording holds ``signals`` (each an array,
    or blocks of one written in turn) at ``rate`` Hz, after an empty recording; ``extra``
    measurement entries are appended as they are. Returns the ``.otii3`` file."""
    data = folder / "data"
    (data / "meta").mkdir(parents=True)
    (data / "meta" / "project_format").write_text(fmt + "\n")
    (data / "meta" / "saved_version").write_text("v-2\n")
    measurements = []
    for k, (name, values) in enumerate(signals.items()):
        blob = data / "data" / "project" / f"blob-{k}"
        blob.mkdir(parents=True)
        with (blob / "samples.dat").open("wb") as out:
            for block in ([values] if isinstance(values, np.ndarray) else values):
                out.write(np.asarray(block, dtype="<f4").tobytes())
        measurements.append({"measurement": {"id": f"m{k}", "source": {
            "name": name, "data_type": KINDS.get(name, "voltage"), "type": "samples",
            "sample_rate": rate, "device": "dev-1"}}, "data": {"id": f"blob-{k}"},
            "offset": (offsets_us or {}).get(name, 0.0)})
    measurements += list(extra)
    project = {"name": "bench", "devices": [{"id": "dev-1", "type": "Ace",
                                             "settings": {"name": "Ace"}}],
               "recordings": [{"id": "old", "start_time": 0, "offset": 0, "measurements": []},
                              {"id": "rec-1", "start_time": 1_700_000_000_000, "offset": 0,
                               "measurements": measurements}]}
    described = data / "versions" / "v-2" / "data"
    described.mkdir(parents=True)
    (described / "project.json").write_text(json.dumps(project))
    stub = folder / "bench.otii3"
    stub.write_text(json.dumps({"name": "bench", "format": "otii3"}))
    return stub


def uart_log_measurement(offset_us: float = 0.0, blob: str = "blob-rx") -> dict[str, Any]:
    """The ``rx`` measurement of a recording (``write_otii3``'s ``extra``): a ``log`` output of
    Otii's virtual ``Uart`` device, as the devices of otiio's real test projects declare it."""
    return {"measurement": {"id": "m-rx", "source": {"type": "log", "id": 0, "group_id": 0,
                                                     "name": "rx", "device": "uart-1"}},
            "data": {"id": blob}, "offset": offset_us}


def write_uart_log(folder: Path, rows: Iterable[tuple[int, bytes | str]],
                   blob: str = "blob-rx") -> sqlite3.Connection:
    """The UART log of ``write_otii3``'s project in ``folder``: ``events.db`` in WAL mode with
    the table ``event(id, time, data)`` (time in µs from the recording's start, data the line),
    the layout github.com/nreinoso23/floodnet-energy-cadence (``scripts/common_otii.py``) reads
    from real Otii Arc projects. Returns the open connection: until it is closed the rows live
    in ``events.db-wal`` only, as in a project Otii has not checkpointed."""
    where = folder / "data" / "data" / "project" / blob
    where.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(where / "events.db")
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE event (id INTEGER PRIMARY KEY, time INTEGER, data BLOB)")
    con.executemany("INSERT INTO event (time, data) VALUES (?, ?)", list(rows))
    con.commit()
    return con
