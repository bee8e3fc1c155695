"""A JS220 recording as pyjls's own ``Writer`` lays it out: current and voltage float32,
GPI 0 (the trigger) u1, one block repeated (for the benchmarks' large files and the tests)."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def write_js220(path: Path, rate: int, current_a: np.ndarray, voltage_v: np.ndarray,
                high: np.ndarray, repeats: int = 1) -> int:
    """``repeats`` copies of one block of samples (``current_a`` A, ``voltage_v`` V, the
    trigger ``high``; whole bytes of trigger bits) at ``rate`` Hz; returns the samples
    written."""
    from pyjls import DataType, SignalType, Writer

    current = np.asarray(current_a, dtype=np.float32)
    volts = np.asarray(voltage_v, dtype=np.float32)
    bits = np.packbits(np.asarray(high, dtype=np.uint8), bitorder="little")
    block = len(current)
    with Writer(str(path)) as w:
        w.source_def(source_id=1, name="JS220-000001", vendor="Jetperch", model="JS220",
                     version="", serial_number="000001")
        for sid, name, dtype, units in ((1, "current", DataType.F32, "A"),
                                        (2, "voltage", DataType.F32, "V"),
                                        (3, "gpi[0]", DataType.U1, "")):
            w.signal_def(signal_id=sid, source_id=1, signal_type=SignalType.FSR,
                         data_type=dtype, sample_rate=rate, name=name, units=units)
        for start in range(0, repeats * block, block):
            w.fsr_f32(1, start, current)
            w.fsr_f32(2, start, volts)
            w.fsr(3, start, bits)
    return repeats * block
