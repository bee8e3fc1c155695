"""The firmware built with a real Zephyr tree and run: native_sim as a Linux process,
``mps2/an385`` (a Cortex-M3) on ``qemu-system-arm``, driven over the protocol as the rig
drives a board. Every op is prepared, self-tested and run on the Cortex-M target, whose
stack marks must be real; the Mbed TLS configuration that reached each build is checked
against the intended one, from ``hello`` where the firmware runs and from the built ELF's
condition table (``er_crypto_conditions``) for the boards listed in
``ER_ZEPHYR_EXTRA_BOARDS`` (built, not run); and flash and RAM must fit each board's budget.

Needs the user's own Zephyr workspace (firmware/README.md): ``ZEPHYR_BASE`` (and
``ZEPHYR_MODULES`` outside a west workspace), the toolchain Zephyr's CMake finds
(``ZEPHYR_TOOLCHAIN_VARIANT``), and ``qemu-system-arm``. Skipped, saying so, without them.
Builds go through ``make firmware-zephyr`` into ``build/zephyr/<board>``.
"""
from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.paths import ROOT
from support.zephyr import check_crypto, smallest_prep, wait_until_listening

from energyrig.rig.dut import Dut, DutRefused, ProcessTransport, SerialTransport

ZEPHYR_BASE = os.environ.get("ZEPHYR_BASE", "")

pytestmark = [
    pytest.mark.skipif(
        not (ZEPHYR_BASE and (Path(ZEPHYR_BASE) / "VERSION").is_file()),
        reason="no Zephyr workspace: set ZEPHYR_BASE to a Zephyr tree (and ZEPHYR_MODULES "
               "outside a west workspace), see firmware/README.md"),
    # A first build compiles Zephyr, Mbed TLS and picolibc; the catalogue on QEMU takes minutes.
    pytest.mark.timeout(3600),
]

FLASH_SHARE_MAX = 0.75
RAM_SHARE_MAX = 0.95

EXTRA_BOARDS = os.environ.get("ER_ZEPHYR_EXTRA_BOARDS", "").split()


def build(board: str) -> tuple[Path, str]:
    """``make firmware-zephyr BOARD=board``, relinked so the linker reports memory use."""
    out = ROOT / "build" / "zephyr" / board.replace("/", "_")
    (out / "zephyr" / "zephyr.elf").unlink(missing_ok=True)
    env = dict(os.environ)
    if board.startswith("native_sim"):
        env["ZEPHYR_TOOLCHAIN_VARIANT"] = "host"  # a Linux program, whatever the cross toolchain
    done = subprocess.run(["make", "-C", str(ROOT), "firmware-zephyr", f"BOARD={board}"],
                          capture_output=True, text=True, timeout=3600, env=env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return out, done.stdout


def memory_use(build_log: str) -> dict[str, tuple[int, int]]:
    """``{"FLASH": (used, size), "RAM": ...}`` from the linker's --print-memory-usage."""
    units = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
    use = {}
    for m in re.finditer(r"^\s*(\w+):\s+(\d+) (B|KB|MB|GB)\s+(\d+) (B|KB|MB|GB)", build_log,
                         re.MULTILINE):
        use[m[1]] = (int(m[2]) * units[m[3]], int(m[4]) * units[m[5]])
    return use


def elf_conditions(elf: Path) -> dict[str, str | int]:
    """The ``er_crypto_conditions`` table of a 32-bit little-endian ELF, as hello sends it."""
    data = elf.read_bytes()
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
    sections = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize)
                for i in range(shnum)]

    def at(addr: int, size: int) -> bytes:
        for _, kind, flags, base, off, length, *_ in sections:
            if flags & 2 and kind != 8 and base <= addr < base + length:  # alloc, not NOBITS
                return data[off + addr - base:off + addr - base + size]
        raise AssertionError(f"{elf}: address {addr:#x} in no loaded section")

    def cstr(addr: int) -> str:
        raw = at(addr, 64)
        return raw[:raw.index(b"\0")].decode()

    symtab = next(s for s in sections if s[1] == 2)
    strtab = sections[symtab[6]]
    for i in range(symtab[5] // 16):
        name_off, value, size, *_ = struct.unpack_from("<IIIBBH", data, symtab[4] + i * 16)
        name = data[strtab[4] + name_off:data.index(b"\0", strtab[4] + name_off)]
        if name == b"er_crypto_conditions":
            table = at(value, size)
            break
    else:
        raise AssertionError(f"{elf}: no er_crypto_conditions")
    conditions: dict[str, str | int] = {}
    for name_ptr, text_ptr, number in struct.iter_unpack("<IIQ", table):
        if name_ptr:
            conditions[cstr(name_ptr)] = cstr(text_ptr) if text_ptr else number
    return conditions


@pytest.fixture(scope="module")
def mps2() -> Iterator[tuple[Dut, str]]:
    qemu = shutil.which("qemu-system-arm")
    if qemu is None:
        pytest.skip("qemu-system-arm not installed")
    out, log = build("mps2/an385")
    # -icount: virtual time advances with the instructions executed, so the SysTick cycles
    # of a run are a deterministic instruction count.
    proc = subprocess.Popen([qemu, "-machine", "mps2-an385", "-cpu", "cortex-m3", "-nographic",
                             "-vga", "none", "-monitor", "none", "-serial", "stdio",
                             "-icount", "shift=7,align=off,sleep=off",
                             "-kernel", str(out / "zephyr" / "zephyr.elf")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    try:
        wait_until_listening(proc)
        yield Dut(ProcessTransport(proc, "qemu mps2-an385"), timeout_s=30), log
    finally:
        proc.kill()
        proc.wait()


def test_mps2_every_op_prepared_self_tested_and_run(mps2: tuple[Dut, str]) -> None:
    dut, log = mps2
    hello = dut.hello()
    assert hello["board"] == "mps2/an385" and hello["port_status"] == 0
    check_crypto(hello["conditions"])
    assert hello["conditions"]["trace_unit"] in ("on", "off")
    # No DWT on QEMU: the SysTick needs its interrupt, so the window keeps interrupts on.
    assert hello["conditions"]["window_irqs"] == "enabled"
    flash, ram = memory_use(log)["FLASH"], memory_use(log)["RAM"]
    assert flash[0] <= FLASH_SHARE_MAX * flash[1] and ram[0] <= RAM_SHARE_MAX * ram[1]
    ops = dut.ops()
    assert len(ops) == hello["n_ops"]
    for op in ops:
        assert smallest_prep(dut, op)["selftest"] == "pass", op.name
        first = dut.run(1, timeout_s=600)
        assert first.n == 1 and first.cycles > 0, op.name
        assert first.stack_bytes > 0, f"{op.name}: no stack mark on a Cortex-M"
    empty = dut.run(0, timeout_s=30)
    assert empty.n == 0 and empty.raw["n_done"] == 0


def test_native_sim_answers_over_its_pty() -> None:
    out, _ = build("native_sim/native/64")
    proc = subprocess.Popen([str(out / "zephyr" / "zephyr.exe")], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        printed = ""
        pty = None
        while pty is None and len(printed) < 4096:  # Zephyr may warn first (entropy source)
            line = proc.stdout.readline()
            assert line, f"native_sim printed no pty: {printed!r}"
            printed += line
            pty = re.search(r"(/dev/pts/\d+)", line)
        time.sleep(0.2)
        dut = Dut(SerialTransport(pty[1]), timeout_s=10)
        hello = dut.hello()
        assert hello["board"] == "native_sim/native/64"
        check_crypto(hello["conditions"])
        assert hello["conditions"]["window_irqs"] == "none"
        assert hello["cycle_hz"] == 1_000_000_000  # the host's clock in ns
        assert dut.prep("sha256", payload_bytes=64)["selftest"] == "pass"
        batch = dut.run(3, timeout_s=10)
        # The host's time passes while the ops run, where simulated time did not (issue 22).
        assert batch.n == 3 and batch.cycles > 0 and batch.elapsed_ns == batch.cycles
        with pytest.raises(DutRefused, match="out of range"):
            dut.run(10 ** 10, timeout_s=10)
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("board", EXTRA_BOARDS or [pytest.param(
    "", marks=pytest.mark.skip(reason="no boards in ER_ZEPHYR_EXTRA_BOARDS"))])
def test_a_board_build_has_the_intended_crypto_and_fits(board: str) -> None:
    out, log = build(board)
    check_crypto(elf_conditions(out / "zephyr" / "zephyr.elf"))
    use = memory_use(log)
    assert use["FLASH"][0] <= FLASH_SHARE_MAX * use["FLASH"][1], use
    assert use["RAM"][0] <= RAM_SHARE_MAX * use["RAM"][1], use
