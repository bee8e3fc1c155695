"""What ``pyjoulescope_driver`` is told and what it sends: topics, settings and the stream
messages, with no I/O (the driver's pub/sub is the transport, :mod:`.device`).

Topic names are those of the driver's own recorder (``pyjoulescope_driver/record.py``,
``_SIGNALS``: ``s/i/ctrl`` and ``s/i/!data`` for current, ``s/v/...`` for voltage,
``s/gpi/{k}/...`` for general-purpose input k) and of its JS220 device (``h/fs``: output
sample rate, Hz; ``s/i/range/mode``: ``auto`` or ``manual``; ``s/i/range/select``: the range;
a JS110 takes ``s/i/range/select`` = ``auto`` instead, as the driver's examples do).
A stream message (the binding's ``_on_cbk`` for a stream payload) is a dict with
``sample_id`` (in instrument samples), ``decimate_factor``, ``sample_rate`` and ``data``:
float32 samples, or u1 samples packed 8 per byte, least significant bit first.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.instruments.joulescope.config import JoulescopeConfig

CURRENT = "s/i"
VOLTAGE = "s/v"


def gpi(k: int) -> str:
    """The signal topic prefix of general-purpose input ``k``."""
    return f"s/gpi/{k}"


def signals(config: JoulescopeConfig) -> tuple[str, str, str]:
    """Current, voltage and trigger signal prefixes, in that order."""
    return CURRENT, VOLTAGE, gpi(config.trigger_gpi)


def setup(config: JoulescopeConfig, device_path: str) -> list[tuple[str, object]]:
    """``(topic, value)`` relative to ``device_path`` to publish before streaming: the output
    rate, then the current range (a JS110 takes ``auto`` as a range, a JS220 as a mode)."""
    out: list[tuple[str, object]] = [("h/fs", int(config.sample_rate_hz))]
    if "/js110/" in f"{device_path}/":
        return [*out, ("s/i/range/select", config.current_range)]
    manual = config.current_range != "auto"
    out.append(("s/i/range/mode", "manual" if manual else "auto"))
    if manual:
        out.append(("s/i/range/select", config.current_range))
    return out


def index_of(value: Mapping[str, Any]) -> int:
    """Output sample index of a stream message's first sample."""
    return int(value["sample_id"]) // max(1, int(value["decimate_factor"]))


def samples(value: Mapping[str, Any], bits: bool) -> npt.NDArray[Any]:
    """A stream message's samples: float64, or 0/1 as uint8 for a u1 signal."""
    data = np.asarray(value["data"])
    if bits:
        return np.unpackbits(data.astype(np.uint8, copy=False), bitorder="little")
    return data.astype(np.float64)
