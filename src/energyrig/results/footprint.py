"""The firmware's footprint: flash and RAM of the build without any op, and what each op adds.

``make firmware-footprint BOARD=...`` (:mod:`energyrig.rig.footprint`) builds the firmware
once with an empty catalogue and once per op with that op alone (``ER_OPS_ONLY``,
``firmware/ops/README.md``), the way pqm4 and study 5 of the literature tabulate code and
data size per algorithm, and writes ``footprint.json`` beside the build. ``rig ops`` shows
it, ``rig sweep`` copies the bench's into the run directory (:data:`RUN_FOOTPRINTS`) and
the report tabulates it.

Sizes come from the ELF's section and program headers, so no toolchain is needed to read
them:

* flash: every allocated section that has contents (code, read-only data, and the initial
  values of initialised data, which the startup code copies to RAM);
* RAM: every allocated section without contents (zeroed and no-init data: stacks, the
  arena, the heap) and every one whose run address is not its load address (initialised
  data; on a board that loads code into RAM, that code too).

RAM here is static RAM only: an op's buffers come from the arena and its crypto contexts
from the Mbed TLS heap, both sized per board and counted in the empty build; the stack an
op takes is ``stack_bytes`` of its ``run`` replies, its arena use ``arena_used`` of
``prep`` (``firmware/PROTOCOL.md``).
"""
from __future__ import annotations

import logging
import os
import struct
from pathlib import Path

from pydantic import Field

from energyrig.bounded import read_json
from energyrig.config import Strict, validate
from energyrig.errors import ConfigError

log = logging.getLogger(__name__)

#: The file beside a build that :mod:`energyrig.rig.footprint` writes.
FOOTPRINT = "footprint.json"
#: The directory of a run that holds the footprint of each board's firmware.
RUN_FOOTPRINTS = "footprint"

_SHF_ALLOC = 0x2
_PT_LOAD = 1
_SHT_SYMTAB = 2
_SHT_NOBITS = 8
_SHN_UNDEF = 0


class Memory(Strict):
    """Flash and static RAM of an image, bytes."""

    flash_bytes: int = Field(ge=0)
    ram_bytes: int = Field(ge=0)


class OpFootprint(Strict):
    """What one op adds to the firmware without any op (it alone in the catalogue), bytes.

    ``id`` is its ``ER_OP`` id (``aes_ecb_encrypt_hw``); ``op`` and ``backend`` as ``rig
    ops`` lists it.
    """

    id: str
    op: str
    backend: str
    flash_bytes: int
    ram_bytes: int


class Footprint(Strict):
    """A ``footprint.json``: one firmware build, with and without its ops.

    Attributes
    ----------
    board:
        The build's board target (``nrf52840dk/nrf52840``; ``host`` for the Linux build).
    zephyr:
        Zephyr's version, ``None`` for the host build.
    crypto:
        ``mbedtls-<version>`` the ops were built against, ``None`` where not found.
    toolchain:
        The C compiler's ``--version`` line.
    build_id:
        The firmware's build id (``git describe``; ``hello`` reports the same).
    empty, full:
        The firmware with no op and with every op.
    ops:
        What each op adds to ``empty``, built alone (ops sharing code each count it: the
        deltas do not add up to ``full``).
    """

    board: str
    zephyr: str | None
    crypto: str | None
    toolchain: str
    build_id: str
    empty: Memory
    full: Memory
    ops: tuple[OpFootprint, ...]

    def of(self, op: str, backend: str) -> OpFootprint | None:
        """The entry of ``op`` on ``backend``, if the footprint has one."""
        return next((o for o in self.ops if o.op == op and o.backend == backend), None)


def op_of_id(op_id: str) -> tuple[str, str]:
    """The op name and backend of an ``ER_OP`` id (``core/er_op.h``): ``-`` for ``_``,
    and a trailing ``_hw`` is the hardware backend."""
    base, hw = (op_id[:-3], True) if op_id.endswith("_hw") else (op_id, False)
    return base.replace("_", "-"), "hardware" if hw else "software"


def read_footprint(path: str | os.PathLike[str]) -> Footprint:
    """Read and validate a ``footprint.json``.

    Raises
    ------
    ConfigError
        The file is missing, not JSON, or a field is wrong (naming the file and the field).
    """
    file = Path(path)
    try:
        data = read_json(file, "footprint")
    except FileNotFoundError as exc:
        raise ConfigError(file, "", "no such footprint file (make firmware-footprint "
                                    "writes one)") from exc
    return validate(Footprint, data, file)


def write_footprint(footprint: Footprint, path: str | os.PathLike[str]) -> Path:
    """Write ``footprint`` as JSON to ``path`` (its directory made if need be); returns the
    path."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(footprint.model_dump_json(indent=1) + "\n", encoding="utf-8")
    log.info("footprint written to %s", file)
    return file


def run_footprints(run_dir: str | os.PathLike[str]) -> dict[str, Footprint]:
    """The footprints a sweep copied into ``run_dir``, by the fixture's board name."""
    folder = Path(run_dir) / RUN_FOOTPRINTS
    return {f.stem: read_footprint(f) for f in sorted(folder.glob("*.json"))}


def run_footprint_path(run_dir: str | os.PathLike[str], board: str) -> Path:
    """Where a run keeps the footprint of ``board``'s firmware."""
    return Path(run_dir) / RUN_FOOTPRINTS / f"{board.replace('/', '_')}.json"


class _Elf:
    """The sections, load segments and symbols of an ELF file (32 or 64 bit, either byte
    order)."""

    def __init__(self, path: Path) -> None:
        self.data = path.read_bytes()
        if self.data[:4] != b"\x7fELF" or self.data[4] not in (1, 2) or \
                self.data[5] not in (1, 2):
            raise ConfigError(path, "", "not an ELF file")
        wide = self.data[4] == 2
        order = "<" if self.data[5] == 1 else ">"
        header = struct.unpack_from(order + ("HHIQQQIHHHHHH" if wide else "HHIIIIIHHHHHH"),
                                    self.data, 16)
        phoff, shoff, phentsize, phnum, shentsize, shnum = (header[k] for k in (4, 5, 8, 9,
                                                                                10, 11))
        # (vaddr, paddr, memsz) of each load segment
        fmt, fields = ((order + "IIQQQQQQ", (0, 3, 4, 6)) if wide
                       else (order + "IIIIIIII", (0, 2, 3, 5)))
        heads = (struct.unpack_from(fmt, self.data, phoff + i * phentsize) for i in range(phnum))
        self.segments = [tuple(h[k] for k in fields[1:]) for h in heads if h[fields[0]] == _PT_LOAD]
        # (name offset, type, flags, addr, file offset, size, link) of each section
        fmt = order + ("IIQQQQIIQQ" if wide else "IIIIIIIIII")
        self.sections = [struct.unpack_from(fmt, self.data, shoff + i * shentsize)[:7]
                         for i in range(shnum)]
        self._sym = (order + "IBBHQQ", 3) if wide else (order + "IIIBBH", 5)

    def _load_address(self, addr: int) -> int:
        for vaddr, paddr, memsz in self.segments:
            if vaddr <= addr < vaddr + memsz:
                return paddr + addr - vaddr
        return addr

    def memory(self) -> Memory:
        alloc = [s for s in self.sections if s[2] & _SHF_ALLOC]
        return Memory(
            flash_bytes=sum(s[5] for s in alloc if s[1] != _SHT_NOBITS),
            ram_bytes=sum(s[5] for s in alloc
                          if s[1] == _SHT_NOBITS or self._load_address(s[3]) != s[3]))

    def defined_symbols(self) -> frozenset[str]:
        fmt, shndx_at = self._sym
        size = struct.calcsize(fmt)
        names: set[str] = set()
        for _, kind, _, _, offset, length, link in self.sections:
            if kind != _SHT_SYMTAB:
                continue
            strtab = self.sections[link][4]
            for at in range(offset + size, offset + length, size):  # entry 0 is null
                sym = struct.unpack_from(fmt, self.data, at)
                if sym[shndx_at] != _SHN_UNDEF:
                    start = strtab + sym[0]
                    names.add(self.data[start:self.data.index(b"\0", start)].decode())
        return frozenset(names)


def elf_memory(path: str | os.PathLike[str]) -> Memory:
    """Flash and static RAM of the ELF image at ``path`` (see the module docstring).

    Raises
    ------
    ConfigError
        The file is not an ELF file.
    """
    return _Elf(Path(path)).memory()


def elf_defines(path: str | os.PathLike[str], symbol: str) -> bool:
    """Whether the ELF image at ``path`` defines ``symbol`` (not merely refers to it)."""
    return symbol in _Elf(Path(path)).defined_symbols()
