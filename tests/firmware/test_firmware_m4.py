"""The firmware's ARM build on an emulated Cortex-M4: the bare-metal port
``firmware/port/qemu-m4`` (``make firmware-qemu``, part of ``make test``) on QEMU's
``mps2-an386``, driven over the protocol as the rig drives a board. No Zephyr tree needed.

Every op is prepared at its smallest parameters (its known-answer self-test passes) and run;
its stack mark is real; its first recorded run does the work of the later ones (within 2 %),
counted deterministically: with ``-icount`` the SysTick cycles are virtual time, which
advances with the instructions executed. The trigger's edges, written by the port on UART1,
carry the cycle counter at each edge. With ``-s`` the per-op table is printed (the one in
firmware/README.md, "On the emulated Cortex-M4").
"""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from support.paths import ROOT

from energyrig.rig.dut import Dut, ProcessTransport
from support.zephyr import check_crypto, smallest_prep, wait_until_listening

ELF = ROOT / "build" / "qemu-m4" / "energyrig-m4.elf"
#: One instruction is 2^5 ns of virtual time; a SysTick cycle (25 MHz) is 40 ns.
ICOUNT_SHIFT = 5
#: Ops whose work differs between runs by design (as in firmware/tests/test_window_work.sh):
#: rsa-keygen searches for new primes in each run.
VARIABLE_OPS = {"rsa-keygen"}
FIRST_RUN_TOLERANCE = 0.02
#: The counter's resolution, cycles.
TICK = 1

pytestmark = pytest.mark.timeout(1800)


@dataclass
class Board:
    dut: Dut
    #: UART1: one line per trigger edge, "<level> <cycles, 16 hex digits> <accel> <family>"
    edges: Path

    def edge_lines(self) -> list[tuple[int, int, int]]:
        """(level, cycles, family wire id) of every edge so far."""
        return [(int(level), int(at, 16), int(family)) for level, at, _, family
                in (line.split() for line in self.edges.read_text().splitlines())]


@pytest.fixture(scope="module")
def m4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    qemu = shutil.which("qemu-system-arm")
    assert qemu, "qemu-system-arm is not installed: make deps (scripts/install-deps.sh)"
    assert ELF.is_file(), f"{ELF} is not built: make firmware-qemu"
    edges = tmp_path_factory.mktemp("m4") / "edges.txt"
    proc = subprocess.Popen([qemu, "-machine", "mps2-an386", "-nographic", "-monitor", "none",
                             "-serial", "stdio", "-serial", f"file:{edges}",
                             "-icount", f"shift={ICOUNT_SHIFT},align=off,sleep=on",
                             "-kernel", str(ELF)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    try:
        wait_until_listening(proc)
        yield Board(Dut(ProcessTransport(proc, "qemu mps2-an386"), timeout_s=30), edges)
    finally:
        proc.kill()
        proc.wait()


def test_hello_reads_like_a_board(m4: Board) -> None:
    hello = m4.dut.hello()
    assert hello["board"] == "mps2-an386" and hello["port_status"] == 0
    assert hello["crypto"].startswith("mbedtls-3.6.")
    check_crypto(hello["conditions"])
    assert hello["conditions"]["optimization"] == "-Os"
    assert hello["cycle_hz"] == 25_000_000


def test_every_op_self_tested_run_and_its_first_run_like_the_later(m4: Board) -> None:
    dut = m4.dut
    ops = dut.ops()
    assert len(ops) == dut.hello()["n_ops"] == 37
    rows = []
    for op in ops:
        prep = smallest_prep(dut, op)
        assert prep["selftest"] == "pass", op.name
        runs = [dut.run(1, timeout_s=600) for _ in range(3)]
        assert all(r.raw["n_done"] == 1 and r.cycles > 0 for r in runs), op.name
        assert all(r.stack_bytes > 0 for r in runs), f"{op.name}: no stack mark"
        ratio = runs[0].cycles / ((runs[1].cycles + runs[2].cycles) / 2)
        if op.name not in VARIABLE_OPS:
            assert abs(ratio - 1) <= FIRST_RUN_TOLERANCE, f"{op.name}: first/later {ratio:.3f}"
        params = " ".join(f"{k}={prep[k]}" for k in ("key_bits", "curve", "payload_bytes")
                          if prep.get(k) is not None)
        rows.append((op.name, params, max(r.stack_bytes for r in runs), runs[0].cycles, ratio))
    print("\n| Op | Parameters | stack_bytes | cycles (first run) | first / later |")
    print("|---|---|---|---|---|")
    for name, params, stack, cycles, ratio in rows:
        print(f"| `{name}` | {params} | {stack} | {cycles} | {ratio:.3f} |")


def test_a_run_is_deterministic_and_its_edges_carry_the_cycle_count(m4: Board) -> None:
    dut = m4.dut
    assert dut.prep("sha256", payload_bytes=1024)["selftest"] == "pass"
    runs = [dut.run(4, timeout_s=60) for _ in range(2)]
    # The same instructions each time; a reading is the 40 ns SysTick cycle in progress, so
    # two spans of the same instructions differ by at most the one cycle they straddle.
    assert runs[0].cycles > 0 and abs(runs[0].cycles - runs[1].cycles) <= TICK
    empty = dut.run(0, timeout_s=30)
    edges = m4.edge_lines()[-6:]
    assert [level for level, _, _ in edges] == [1, 0, 1, 0, 1, 0]
    # A batch's rising edge carries its op's family (TRIGGER_WIRE.md: hash is 2).
    assert [family for _, _, family in edges] == [2, 0, 2, 0, 2, 0]
    windows = [fall - rise for (_, rise, _), (_, fall, _) in zip(edges[::2], edges[1::2])]
    # The edges hold the batch and the same fixed overhead around it each time (each of the
    # four readings within its tick); an empty batch's edges hold that overhead alone.
    overheads = [window - run.cycles for window, run in zip(windows, runs)]
    assert abs(overheads[0] - overheads[1]) <= 2 * TICK and overheads[0] > 0
    assert empty.cycles <= windows[2] < runs[0].cycles / 100
    # A SysTick cycle is 40 ns: the reply's own time agrees with its cycles.
    assert runs[0].elapsed_ns == runs[0].cycles * 40


@pytest.mark.slow
def test_the_rig_opens_the_emulated_board_over_its_uart(tmp_path: Path) -> None:
    """fixtures/sim-m4.toml: the rig starts the board (energyrig-m4-dut, QEMU) and talks the
    protocol over the emulated UART0's pty as over a board's; the edges the board writes on
    UART1 reach the virtual trigger wire with the op's family."""
    from energyrig.fixtures.loader import load_fixture
    from energyrig.instruments.sim.wire import TriggerWire, family_name
    from energyrig.rig.dut import open_dut

    fixture = load_fixture(ROOT / "fixtures" / "sim-m4.toml")
    wire = TriggerWire(tmp_path / "wire")
    wire.open()
    try:
        with open_dut(fixture, trigger_wire=tmp_path / "wire") as dut:
            assert dut.hello()["board"] == fixture.dut.board == "mps2-an386"
            assert dut.prep("sha256", payload_bytes=64)["selftest"] == "pass"
            run = dut.run(3, timeout_s=60)
            assert run.raw["n_done"] == 3 and run.cycles > 0
            # The board wrote both edges before its reply; the bridge sends them as it
            # reads them from QEMU: wait for them, generously on a loaded machine.
            edges = wire.drain()
            deadline = time.monotonic() + 60
            while len(edges) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
                edges = np.concatenate([edges, wire.drain()])
    finally:
        wire.close()
    assert list(edges["level"]) == [1, 0] and list(edges["seq"]) == [0, 1]
    assert family_name(int(edges["family"][0])) == "hash"
