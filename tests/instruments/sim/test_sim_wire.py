"""The virtual trigger wire: record layout of firmware/TRIGGER_WIRE.md and the listener."""
from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

import numpy as np
import pytest

from energyrig.errors import InstrumentError
from energyrig.instruments.sim.wire import (
    EDGE_DTYPE,
    TriggerWire,
    edge_records,
    family_name,
    send_edges,
)
from energyrig.opfamilies import NAMES


def _wait_for(wire: TriggerWire, n: int, timeout_s: float = 2.0) -> np.ndarray:
    got = []
    deadline = time.monotonic() + timeout_s
    while sum(len(g) for g in got) < n and time.monotonic() < deadline:
        got.append(wire.drain())
        time.sleep(0.005)
    return np.concatenate(got) if got else np.zeros(0, EDGE_DTYPE)


def test_record_layout_matches_the_spec() -> None:
    rec = edge_records([0x0102030405060708], [1], accel=1, seq0=0xA0B0C0D0, family=0x0302,
                       clock_hz=64_000_000)
    assert rec.tobytes() == struct.pack("<QBBHII", 0x0102030405060708, 1, 1, 0x0302,
                                        0xA0B0C0D0, 64_000_000)
    assert EDGE_DTYPE.itemsize == 20


def test_family_ids_are_the_places_of_the_op_families() -> None:
    # the firmware's order (tests/test_op_families.py holds the rows to it), from 1
    assert [family_name(i) for i in range(1, len(NAMES) + 1)] == list(NAMES)
    assert [family_name(i) for i in (0, 2, 3, 99)] == ["", "hash", "public-key", ""]


def test_edges_arrive_in_order_with_their_family(tmp_path: Path) -> None:
    path = tmp_path / "wire"
    edges = edge_records([100, 200, 300, 400], [1, 0, 1, 0], accel=[0, 0, 1, 1],
                         family=[2, 0, 3, 0])
    with TriggerWire(path) as wire:
        send_edges(path, edges)
        got = _wait_for(wire, 4)
        assert wire.healthy and wire.received == 4
    assert got.tobytes() == edges.tobytes()
    assert got["family"].tolist() == [2, 0, 3, 0]
    assert not path.exists()


def test_seq_gap_is_counted_and_flagged(tmp_path: Path) -> None:
    path = tmp_path / "wire"
    edges = edge_records([100, 200, 300, 400], [1, 0, 1, 0])
    with TriggerWire(path) as wire:
        send_edges(path, edges[[0, 3]])  # seq 0 then seq 3: two lost
        _wait_for(wire, 2)
        assert wire.lost_edges == 2
        assert not wire.healthy


def test_malformed_datagram_and_time_going_back_are_flagged(tmp_path: Path) -> None:
    path = tmp_path / "wire"
    with TriggerWire(path) as wire:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"short", str(path))
        send_edges(path, edge_records([500, 400], [1, 0]))
        _wait_for(wire, 2)
        assert wire.malformed == 1
        assert wire.out_of_order == 1
        assert not wire.healthy


def test_dut_restart_is_not_a_loss(tmp_path: Path) -> None:
    path = tmp_path / "wire"
    with TriggerWire(path) as wire:
        send_edges(path, edge_records([100, 200], [1, 0]))
        send_edges(path, edge_records([300, 400], [1, 0]))  # seq starts at 0 again
        _wait_for(wire, 4)
        assert wire.restarts == 1 and wire.healthy


def test_stale_socket_is_replaced_but_a_file_is_not(tmp_path: Path) -> None:
    stale = tmp_path / "stale"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(stale))
    with TriggerWire(stale):
        pass
    plain = tmp_path / "plain"
    plain.write_text("keep me")
    with pytest.raises(InstrumentError, match="not a socket"):
        TriggerWire(plain).open()
    assert plain.read_text() == "keep me"


def test_drain_sees_every_edge_sent_before_it_was_called(tmp_path: Path) -> None:
    # The listener thread may not have run yet: drain reads the socket itself.
    path = tmp_path / "wire"
    with TriggerWire(path) as wire:
        for k in range(50):
            send_edges(path, edge_records([1000 * k], [k % 2], seq0=k))
            assert int(wire.drain()["seq"][-1]) == k
        assert wire.healthy
