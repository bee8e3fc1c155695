"""The op families are declared once, in the firmware, and the host keeps one data row of
each (src/energyrig/opfamilies.toml): a family the firmware declares without its row, or a
row the firmware does not declare, fails here."""
from __future__ import annotations

import re

import pytest
from support.paths import ROOT

from energyrig.errors import DutError
from energyrig.fixtures import load_fixture
from energyrig.instruments.sim.power import PROFILES, FamilyCurrent
from energyrig.opfamilies import NAMES, OP_FAMILIES, firmware_mismatch
from energyrig.rig.bench import open_bench
from energyrig.rig.dut import DutProcess

FIRMWARE = (str(ROOT / "build" / "host" / "energyrig-dut"),)


def _declared() -> list[str]:
    """The names of ``er_families`` in firmware/core/er_family.c, in order."""
    source = (ROOT / "firmware" / "core" / "er_family.c").read_text()
    table = re.search(r"er_families\[\]\s*=\s*\{([^}]*)\}", source)
    assert table is not None
    return re.findall(r'"([^"]+)"', table.group(1))


def test_the_rows_are_the_families_the_firmware_source_declares() -> None:
    assert firmware_mismatch(_declared()) == ""


@pytest.mark.slow
def test_the_built_firmware_lists_the_rows_and_each_op_names_one() -> None:
    with DutProcess(FIRMWARE, "stdio") as proc:
        assert proc.dut is not None
        hello, ops = proc.dut.hello(), proc.dut.ops()
    assert firmware_mismatch(hello["families"]) == ""
    assert {op.family for op in ops} <= set(hello["families"])
    assert {op.family for op in ops} == set(NAMES)  # the host build has an op of each


def test_a_family_without_its_row_and_a_row_without_its_family_are_named() -> None:
    assert firmware_mismatch([*NAMES, "ml-kem"]) == "no data row for ml-kem"
    assert firmware_mismatch(NAMES[:-1]) == (f"a data row for {NAMES[-1]} that the firmware "
                                             "does not declare")
    assert "order" in firmware_mismatch(NAMES[::-1])


def test_each_row_is_whole() -> None:
    for fam in OP_FAMILIES:
        assert fam.prefixes and set(fam.currents) <= set(PROFILES)
        for board, current in fam.currents.items():  # the profile draws the row's figure
            assert PROFILES[board]["families"][fam.name] == FamilyCurrent(**current)


@pytest.mark.slow
def test_a_sim_bench_refuses_a_firmware_whose_families_are_not_the_rows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("energyrig.opfamilies.NAMES", (*NAMES, "ml-kem"))
    with pytest.raises(DutError, match="a data row for ml-kem that the firmware does not"):
        with open_bench(load_fixture(ROOT / "fixtures" / "sim.toml")):
            pass
