"""The emulated Cortex-M4 board's bridge (firmware/port/qemu-m4/energyrig-m4-dut) leaves no
board running: it ends when the rig that started it is gone, however the rig ended (the
pipe on its standard input closes), and QEMU ends with the bridge, even a killed one."""
from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.paths import ROOT

BRIDGE = ROOT / "firmware" / "port" / "qemu-m4" / "energyrig-m4-dut"
ELF = ROOT / "build" / "qemu-m4" / "energyrig-m4.elf"


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def _gone(pid: int) -> bool:
    """``pid`` has exited (a zombie not yet reaped by its new parent counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z"
    except FileNotFoundError:
        return True


def _wait_gone(pid: int) -> None:
    """Wait, on the board's own exit and nothing else (pytest's timeout is the backstop)."""
    while not _gone(pid):
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        os.sched_yield()


@pytest.fixture
def bridge() -> Iterator[subprocess.Popen[bytes]]:
    assert ELF.is_file(), f"{ELF} is not built: make firmware-qemu"
    proc = subprocess.Popen([str(BRIDGE), "--pty"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith(b"/dev/pts/")  # serving
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _qemu(bridge: subprocess.Popen[bytes]) -> int:
    (qemu,) = _children(bridge.pid)
    assert "qemu-system-arm" in Path(f"/proc/{qemu}/cmdline").read_text()
    return qemu


def test_the_bridge_and_its_board_end_when_the_rig_is_gone(bridge):
    qemu = _qemu(bridge)
    assert bridge.stdin is not None
    bridge.stdin.close()  # what a rig killed with SIGKILL leaves behind
    assert bridge.wait() == 0
    _wait_gone(qemu)


def test_the_board_ends_with_a_killed_bridge(bridge):
    qemu = _qemu(bridge)
    os.kill(bridge.pid, signal.SIGKILL)
    bridge.wait()
    _wait_gone(qemu)
