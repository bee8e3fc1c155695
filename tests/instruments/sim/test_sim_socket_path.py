"""The trigger wire's Unix socket path: one the kernel cannot bind is refused before the
emulator starts, with what to do (under pytest-xdist a test's TMPDIR once made it 108 bytes
long, and the emulator died at start with ``AF_UNIX path too long``)."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

from energyrig.errors import InstrumentError
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.process import SOCKET_PATH_MAX, EmulatorProcess


def _path(tmp_path: Path, size: int) -> Path:
    """A path under ``tmp_path`` of ``size`` bytes."""
    base = str(tmp_path) + "/"
    return Path(base + "w" * (size - len(base)))


def test_the_limit_is_the_kernels(tmp_path: Path) -> None:
    for size, binds in ((SOCKET_PATH_MAX, True), (SOCKET_PATH_MAX + 1, False)):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.bind(str(_path(tmp_path, size)))
                bound = True
            except OSError:
                bound = False
        assert bound is binds, size


def test_a_wire_path_too_long_to_bind_is_refused_naming_tmpdir(tmp_path: Path) -> None:
    wire = _path(tmp_path, SOCKET_PATH_MAX + 1)
    with pytest.raises(InstrumentError, match=r"108 bytes long.*at most 107.*set TMPDIR"):
        EmulatorProcess(PowerModel(), wire=wire)
    assert not wire.exists()


def test_a_wire_path_at_the_limit_is_taken(tmp_path: Path) -> None:
    wire = _path(tmp_path, SOCKET_PATH_MAX)
    assert EmulatorProcess(PowerModel(), wire=wire).argv[-1] == str(wire)
