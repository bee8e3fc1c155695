"""The trigger wire's clock field (issue 22 item 5): the emulated board's bridge sends each
edge with the CPU clock in force (20 bytes), the host build without it (16 bytes), and the
listener takes both, a short record's clock being 0 (not stated)."""
from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

from energyrig.instruments.sim.wire import TriggerWire


def _drain(wire: TriggerWire, n: int) -> list:
    got: list = []
    deadline = time.monotonic() + 10.0
    while len(got) < n and time.monotonic() < deadline:
        got.extend(wire.drain())
        time.sleep(0.005)
    return got


def test_short_and_clocked_records_both_arrive(tmp_path: Path) -> None:
    path = tmp_path / "wire"
    with TriggerWire(path) as wire, socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.sendto(struct.pack("<QBBHI", 100, 1, 0, 2, 0), str(path))            # host build
        sock.sendto(struct.pack("<QBBHII", 200, 0, 0, 0, 1, 16_000_000), str(path))  # bridge
        got = _drain(wire, 2)
        assert [int(r["clock_hz"]) for r in got] == [0, 16_000_000]
        assert [int(r["t_ns"]) for r in got] == [100, 200]
        assert [int(r["family"]) for r in got] == [2, 0]
        assert wire.healthy
