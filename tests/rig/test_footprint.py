"""The per-op footprint: ER_OPS_ONLY on the host build (the catalogue it generates and the
code it leaves out), footprint.json written by the builder, the ELF reader, `rig ops` with a
footprint, `rig sweep` keeping it and the report's Footprint section."""
from __future__ import annotations

import json
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import ROOT
from support.synthetic import BOARDS, make_run
from typer.testing import CliRunner

from energyrig.cli.app import app
from energyrig.errors import ConfigError
from energyrig.fixtures import load_fixture
from energyrig.results.footprint import (
    FOOTPRINT,
    Footprint,
    Memory,
    OpFootprint,
    elf_defines,
    elf_memory,
    op_of_id,
    read_footprint,
    run_footprint_path,
    write_footprint,
)
from energyrig.results import load
from energyrig.results.report.page import Images, page_html
from energyrig.results.report.sections import report_tables
from energyrig.rig.flags import FLAGS
from energyrig.rig.footprint import build_footprint, build_with, catalogue_ids

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")

SIM = ROOT / "fixtures" / "sim.toml"
DUT = "energyrig-dut"


def _ops_reply(build_dir: Path) -> list[str]:
    """The op names of the built DUT's `ops` reply."""
    out = subprocess.run([str(build_dir / DUT), "--stdio"], input="ops\n", text=True, check=True,
                         capture_output=True, timeout=30).stdout
    return [op["name"] for op in json.loads(out.splitlines()[0])["ops"]]


@pytest.fixture(scope="module")
def host_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A configured host build of the firmware of its own (build/host stays as it is)."""
    build = tmp_path_factory.mktemp("host")
    subprocess.run(["cmake", "-S", str(ROOT / "firmware/port/host"), "-B", str(build), "-G",
                    "Ninja", "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
    return build


@pytest.mark.slow
def test_er_ops_only_selects_the_catalogue(host_build: Path) -> None:
    build_with(host_build, "sha256", DUT)
    assert catalogue_ids(host_build) == ["sha256"]
    assert _ops_reply(host_build) == ["sha256"]
    build_with(host_build, "none", DUT)
    assert catalogue_ids(host_build) == [] and _ops_reply(host_build) == []
    build_with(host_build, "iot-join;md5", DUT)  # names or ids, in the catalogue's order
    assert _ops_reply(host_build) == ["md5", "iot-join"]
    with pytest.raises(ConfigError, match="ER_OPS_ONLY: no op 'sha7'"):
        build_with(host_build, "sha7", DUT)


@pytest.mark.slow
def test_footprint_of_ops_built_alone(host_build: Path) -> None:
    fp = build_footprint(host_build, elf=DUT, target=DUT, ops=["sha256", "iot-join"])
    assert read_footprint(host_build / FOOTPRINT) == fp
    assert fp.board == "host" and fp.zephyr is None
    assert fp.crypto is not None and fp.crypto.startswith("mbedtls-")
    assert fp.toolchain and fp.build_id
    sha256, join = fp.ops
    assert (sha256.id, sha256.op, sha256.backend) == ("sha256", "sha256", "software")
    # iot-join links X25519, SHA-3 and AES-CTR: more code than SHA-256 alone
    assert 0 < sha256.flash_bytes < join.flash_bytes < fp.full.flash_bytes - fp.empty.flash_bytes
    assert len(_ops_reply(host_build)) == 37  # the build ends with the whole catalogue
    with pytest.raises(ConfigError, match="not in its catalogue: sha7"):
        build_footprint(host_build, elf=DUT, target=DUT, ops=["sha7"])


def _elf32(sections: list[tuple[str, int, int, int, int]],
           loads: list[tuple[int, int, int]]) -> bytes:
    """A little-endian ELF32 of section headers (name, type, flags, address, size) and load
    segments (vaddr, paddr, memsz), without contents."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n, *_ in sections) + b".shstrtab\0"
    heads = [struct.pack("<8I", 1, 0, v, p, m, m, 6, 4) for v, p, m in loads]
    shdrs = [bytes(40)]
    at = 1
    for name, kind, flags, addr, size in sections:
        shdrs.append(struct.pack("<10I", at, kind, flags, addr, 0, size, 0, 0, 4, 0))
        at += len(name) + 1
    phoff = 52
    stroff = phoff + 32 * len(heads)
    shoff = stroff + len(names)
    shdrs.append(struct.pack("<10I", at, 3, 0, 0, stroff, len(names), 0, 0, 1, 0))
    header = b"\x7fELF\x01\x01\x01" + bytes(9) + struct.pack(
        "<HHIIIIIHHHHHH", 2, 40, 1, 0, phoff, shoff, 0, 52, 32, len(heads), 40, len(shdrs),
        len(shdrs) - 1)
    return header + b"".join(heads) + names + b"".join(shdrs)


def test_elf_sizes_count_initial_values_in_flash_and_data_in_ram(tmp_path: Path) -> None:
    progbits, nobits, w, a, x = 1, 8, 1, 2, 4
    image = tmp_path / "board.elf"
    image.write_bytes(_elf32(
        [("text", progbits, a | x, 0x0, 1000), ("sw_isr_table", progbits, w | a, 0x3e8, 64),
         ("datas", progbits, w | a, 0x20000000, 100), ("bss", nobits, w | a, 0x20000064, 300),
         (".debug_info", progbits, 0, 0, 5000)],
        [(0x0, 0x0, 1064), (0x20000000, 0x428, 100), (0x20000064, 0x20000064, 300)]))
    # writable sw_isr_table stays in flash; datas' initial values are in flash, itself in RAM
    assert elf_memory(image) == Memory(flash_bytes=1164, ram_bytes=400)
    assert not elf_defines(image, "er_op_sha256")
    (tmp_path / "text.txt").write_text("not an ELF")
    with pytest.raises(ConfigError, match="not an ELF file"):
        elf_memory(tmp_path / "text.txt")


def test_the_host_dut_defines_its_ops() -> None:
    dut = ROOT / "build/host" / DUT
    assert elf_defines(dut, "er_op_sha256") and not elf_defines(dut, "er_op_sha7")
    assert elf_memory(dut).flash_bytes > 0


def test_op_of_id_follows_er_op_h() -> None:
    assert op_of_id("sha3_256") == ("sha3-256", "software")
    assert op_of_id("aes_ecb_encrypt_hw") == ("aes-ecb-encrypt", "hardware")


def _footprint(board: str = "host") -> Footprint:
    return Footprint(
        board=board, zephyr="4.0.0", crypto="mbedtls-3.6.2", toolchain="gcc 12.2",
        build_id="abc1234", empty=Memory(flash_bytes=34538, ram_bytes=201773),
        full=Memory(flash_bytes=127952, ram_bytes=215000),
        ops=(OpFootprint(id="sha256", op="sha256", backend="software", flash_bytes=3012,
                         ram_bytes=0),
             OpFootprint(id="aes_ecb_encrypt_hw", op="aes-ecb-encrypt", backend="hardware",
                         flash_bytes=900, ram_bytes=16)))


def test_a_bad_footprint_file_names_the_field(tmp_path: Path) -> None:
    path = write_footprint(_footprint(), tmp_path / "fp" / FOOTPRINT)
    doc = json.loads(path.read_text())
    doc["ops"][0]["flash_bytes"] = "many"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=r"ops\[0\]\.flash_bytes"):
        read_footprint(path)
    with pytest.raises(ConfigError, match="no such footprint file"):
        read_footprint(tmp_path / "none.json")


@pytest.mark.slow
def test_rig_ops_shows_flash_and_ram_with_a_footprint(
        tmp_path: Path, sim_fixture: Callable[..., Path]) -> None:
    path = write_footprint(_footprint(), tmp_path / FOOTPRINT)
    plain = CliRunner().invoke(app, ["ops", "--fixture", str(SIM)])
    assert plain.exit_code == 0 and "flash" not in plain.stdout
    shown = CliRunner().invoke(app, ["ops", "--fixture", str(SIM), "--footprint", str(path)])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())  # the title wraps
    assert "flash bytes" in text and "RAM bytes" in text
    assert "3 012" in text and "34 538 B flash" in text
    assert "(the DUT runs build" in text  # another build than the footprint's
    doc = json.loads(CliRunner().invoke(
        app, ["ops", "--fixture", str(SIM), "--footprint", str(path), "--json"]).stdout)
    by_name = {o["name"]: o for o in doc}
    assert by_name["sha256"]["flash_bytes"] == 3012 and by_name["sha256"]["ram_bytes"] == 0
    assert by_name["md5"]["flash_bytes"] is None  # not in the footprint
    # the fixture's dut.footprint, relative to the fixture file
    fixture = sim_fixture(**{"dut.footprint": str(FOOTPRINT)})
    assert load_fixture(fixture).footprint_path == tmp_path / FOOTPRINT
    via_fixture = CliRunner().invoke(app, ["ops", "--fixture", str(fixture)])
    assert via_fixture.exit_code == 0 and "3 012" in via_fixture.stdout


def _page(run_dir: Path) -> str:
    """The report's page of a run, without drawing its figures (the tables are the same)."""
    run = load(run_dir)
    return page_html(run, report_tables(run, FLAGS), Images())


def test_the_report_has_a_footprint_table(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", boards=BOARDS[:1], reps=1, n_windows=2)  # the board's
    assert "<h2>Footprint</h2>" not in _page(run)
    write_footprint(_footprint("nrf52840dk/nrf52840"), run_footprint_path(run, "nrf52840dk"))
    page = _page(run)
    assert "<h2>Footprint</h2>" in page and "nrf52840dk/nrf52840: build abc1234" in page
    assert "34,538 B of flash" in page and "<td class='num'>3,012 B</td>" in page
    assert "aes-ecb-encrypt (hardware)" not in page  # the run measured it in software
