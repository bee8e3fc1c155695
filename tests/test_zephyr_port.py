"""The Zephyr layer of the firmware, checked without Zephyr (firmware/port/zephyr/check_port.py).

The real tree must pass every check; each check must also catch the mistake it exists for,
shown on a copy of the tree with that one mistake made.
"""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
import yaml

FIRMWARE = Path(__file__).resolve().parents[1] / "firmware"


def _load_checker():
    spec = importlib.util.spec_from_file_location("check_port", FIRMWARE / "port" / "zephyr" / "check_port.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_port = _load_checker()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the firmware files the checker reads."""
    copy = tmp_path / "firmware"
    shutil.copytree(FIRMWARE, copy, ignore=shutil.ignore_patterns("fuzz", "tests", "corpus"))
    assert check_port.check(copy) == []
    return copy


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_the_firmware_tree_passes_every_check():
    assert check_port.check(FIRMWARE) == []


def test_west_pins_a_release_with_mbedtls_3_6():
    manifest = yaml.safe_load((FIRMWARE / "west.yml").read_text())["manifest"]
    (zephyr,) = [p for p in manifest["projects"] if p["name"] == "zephyr"]
    assert zephyr["revision"] == "v4.0.0"  # built and run, README "Verified Zephyr releases"
    assert "Mbed TLS is\n**3.6.2**" in (FIRMWARE / "port" / "zephyr" / "VERIFIED.md").read_text()


@pytest.mark.parametrize("revision", ["main", "v4.2-branch", "HEAD", "collab-4.2"])
def test_a_branch_revision_is_refused(tree: Path, revision: str):
    _edit(tree / "west.yml", "revision: v4.0.0", f"revision: {revision}")
    assert any("not a release tag or a commit" in p for p in check_port.check(tree))


def test_a_commit_revision_is_accepted(tree: Path):
    _edit(tree / "west.yml", "revision: v4.0.0", "revision: " + "a" * 40)
    assert check_port.check(tree) == []


def test_dropping_mbedtls_from_the_allowlist_is_caught(tree: Path):
    _edit(tree / "west.yml", "          - mbedtls ", "          - not-mbedtls ")
    assert any("mbedtls module" in p for p in check_port.check(tree))


def test_every_required_board_is_built_by_twister():
    assert set(check_port.REQUIRED_BOARDS) <= check_port.sample_boards(FIRMWARE)


def test_a_board_without_overlay_is_caught(tree: Path):
    (tree / "boards" / "nucleo_f401re.overlay").unlink()
    assert any(p.startswith("nucleo_f401re: no overlay") for p in check_port.check(tree))


def test_a_required_board_missing_from_sample_yaml_is_caught(tree: Path):
    _edit(tree / "sample.yaml", "    - nrf5340dk/nrf5340/cpuapp\n", "")
    assert "sample.yaml: required board nrf5340dk/nrf5340/cpuapp missing" in check_port.check(tree)


def test_a_space_separated_twister_list_is_caught(tree: Path):
    _edit(tree / "sample.yaml", "    extra_args:\n      - CONFIG_ER_ARENA_SIZE=8192",
          "    extra_args: CONFIG_ER_ARENA_SIZE=8192")
    problems = check_port.check(tree)
    assert "sample.yaml: energyrig.firmware.small_arena.extra_args must be a YAML list (Zephyr >= 4.1)" in problems


def test_a_board_list_in_common_and_a_scenario_is_caught(tree: Path):
    """twister concatenates the two lists: the nRF52840-only variant would build everywhere."""
    _edit(tree / "sample.yaml", "  build_only: true\n",
          "  build_only: true\n  platform_allow:\n    - native_sim/native/64\n")
    problems = check_port.check(tree)
    assert ("sample.yaml: energyrig.firmware.software_only.platform_allow is added to "
            "common.platform_allow by twister, not put in its place") in problems


@pytest.mark.parametrize(
    "old,new",
    [
        ("trigger-gpios", "trigger-pin"),  # wrong property name
        ("<&gpio0 25 GPIO_ACTIVE_HIGH>", "<25>"),  # no controller phandle
        ("\t\ttrigger-gpios", "\t\t/* trigger-gpios"),  # commented out (closed below)
    ],
)
def test_an_overlay_without_a_trigger_pin_is_caught(tree: Path, old: str, new: str):
    overlay = tree / "boards" / "esp32_devkitc_procpu.overlay"
    _edit(overlay, old, new)
    if new.endswith("/* trigger-gpios"):
        _edit(overlay, "GPIO_ACTIVE_HIGH>;", "GPIO_ACTIVE_HIGH>; */")
    assert any("esp32_devkitc_procpu.overlay: no zephyr,user" in p for p in check_port.check(tree))


def test_overlays_are_found_with_or_without_the_soc():
    assert check_port.overlay_candidates("esp32_devkitc/esp32/procpu") == [
        "esp32_devkitc_esp32_procpu.overlay",
        "esp32_devkitc_procpu.overlay",
    ]
    assert check_port.overlay_candidates("nucleo_f401re") == ["nucleo_f401re.overlay"]


def test_an_unverified_kconfig_symbol_is_caught(tree: Path):
    with (tree / "boards" / "nrf52840dk_nrf52840.conf").open("a") as f:
        f.write("CONFIG_MBEDTLS_SHA3=y\n")
    problems = check_port.check(tree)
    assert "CONFIG_MBEDTLS_SHA3 (nrf52840dk_nrf52840.conf): not in VERIFIED.md's Kconfig table" in problems


def test_an_unverified_symbol_in_sample_yaml_extra_args_is_caught(tree: Path):
    _edit(tree / "sample.yaml", "- CONFIG_ER_ARENA_SIZE=8192", "- CONFIG_ER_ARENA_SIZE=8192\n      - CONFIG_FPU=y")
    assert any(p.startswith("CONFIG_FPU (sample.yaml)") for p in check_port.check(tree))


def test_an_unverified_symbol_in_the_port_c_is_caught(tree: Path):
    _edit(tree / "port" / "zephyr" / "er_port_zephyr.c", "#if defined(CONFIG_ARCH_POSIX)", "#if defined(CONFIG_SOC_POSIX)")
    problems = check_port.check(tree)
    assert any(p.startswith("CONFIG_SOC_POSIX (er_port_zephyr.c)") for p in problems)
    assert "VERIFIED.md: CONFIG_ARCH_POSIX is listed but used nowhere" in problems


def test_a_misspelt_application_symbol_is_caught(tree: Path):
    _edit(tree / "boards" / "nucleo_f401re.conf", "CONFIG_ER_ARENA_SIZE=", "CONFIG_ER_ARENA_BYTES=")
    assert any(p.startswith("CONFIG_ER_ARENA_BYTES") and "firmware/Kconfig" in p for p in check_port.check(tree))


def test_commented_out_symbols_do_not_count(tree: Path):
    with (tree / "prj.conf").open("a") as f:
        f.write("# CONFIG_NOT_A_SYMBOL=y\n")
    assert check_port.check(tree) == []


def test_the_verified_table_names_a_zephyr_file_for_every_symbol():
    text = (FIRMWARE / "port" / "zephyr" / "VERIFIED.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `CONFIG_")]
    assert len(rows) == len(check_port.verified_symbols(FIRMWARE)) > 30
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 4 and "/" in cells[1] and cells[2], row


def test_a_core_private_include_in_the_port_is_caught(tree: Path):
    _edit(tree / "port" / "zephyr" / "main.c", '#include "er_proto.h"', '#include "er_proto.h"\n#include "er_runner.h"')
    assert any("includes core-private header er_runner.h" in p for p in check_port.check(tree))


def test_a_zephyr_include_in_portable_code_is_caught(tree: Path):
    _edit(tree / "core" / "er_runner.c", '#include "er_port.h"', '#include "er_port.h"\n#include <zephyr/kernel.h>')
    assert any("portable code includes <zephyr/kernel.h>" in p for p in check_port.check(tree))


def test_every_board_conf_has_an_overlay_and_every_overlay_a_board():
    boards = check_port.sample_boards(FIRMWARE)
    names = {n for b in boards for n in check_port.overlay_candidates(b)}
    overlays = {p.name for p in (FIRMWARE / "boards").glob("*.overlay")}
    assert overlays <= names
    confs = {p.stem for p in (FIRMWARE / "boards").glob("*.conf")}
    assert confs <= {Path(n).stem for n in names}


def test_the_checker_script_reports_and_fails(tree: Path, capsys):
    assert check_port.main(["check_port.py", str(tree)]) == 0
    (tree / "boards" / "nrf52840dk_nrf52840.overlay").unlink()
    assert check_port.main(["check_port.py", str(tree)]) == 1
    out = capsys.readouterr().out
    assert "nrf52840dk/nrf52840: no overlay" in out and "1 problem(s)" in out


def test_every_zephyr_api_of_the_port_is_in_the_verified_table():
    used = check_port.used_apis(FIRMWARE)
    # The cycle counter's API is among them, each with a row naming the Zephyr file.
    assert {"timing_init", "timing_start", "timing_counter_get", "timing_cycles_get",
            "timing_freq_get", "k_timer_start", "k_cycle_get_32"} <= set(used)
    assert set(used) <= check_port.verified_apis(FIRMWARE)


def test_an_unverified_zephyr_api_in_the_port_is_caught(tree: Path):
    _edit(tree / "port" / "zephyr" / "er_port_zephyr.c", "(void)k_msleep(CONFIG_ER_POLL_MS);",
          "(void)k_sleep(K_MSEC(CONFIG_ER_POLL_MS));")
    assert check_port.check(tree) == ["k_sleep (er_port_zephyr.c): not in VERIFIED.md's API table"]


def test_a_zephyr_api_dropped_from_the_verified_table_is_caught(tree: Path):
    verified = tree / "port" / "zephyr" / "VERIFIED.md"
    verified.write_text(verified.read_text().replace("timing_freq_get", "timing_rate_get"))
    assert check_port.check(tree) == ["timing_freq_get (er_port_zephyr.c): not in VERIFIED.md's API table"]


def test_api_names_in_comments_and_strings_do_not_count(tree: Path):
    with (tree / "port" / "zephyr" / "er_port_zephyr.c").open("a") as f:
        f.write('/* k_sleep() */\nstatic const char er_note[] = "k_yield()";\n')
    assert check_port.check(tree) == []


def _conf(name: str) -> dict[str, str]:
    lines = (FIRMWARE / name).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_cycles_come_from_the_cpu_cycle_counter_except_on_native_sim():
    assert _conf("prj.conf")["CONFIG_TIMING_FUNCTIONS"] == "y"
    assert _conf("boards/native_sim_native_64.conf")["CONFIG_TIMING_FUNCTIONS"] == "n"
    # The Cortex-M boards use the DWT, not the nRF TIMER2 fallback of the timing API.
    for board in ("nrf52840dk_nrf52840", "nrf5340dk_nrf5340_cpuapp", "nucleo_f401re"):
        assert _conf(f"boards/{board}.conf")["CONFIG_CORTEX_M_DWT"] == "y"
    assert "CONFIG_CORTEX_M_DWT" not in _conf("boards/esp32_devkitc_procpu.conf")
