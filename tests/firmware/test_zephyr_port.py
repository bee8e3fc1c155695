"""The Zephyr layer of the firmware, checked without Zephyr (firmware/port/zephyr/check_port.py).

The real tree must pass every check; each check must also catch the mistake it exists for,
shown on a copy of the tree with that one mistake made.
"""
from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest
from support.paths import ROOT
import yaml

FIRMWARE = ROOT / "firmware"


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
    for name in ("er_port_zephyr.c", "er_port_conditions.c"):  # every use of it
        source = tree / "port" / "zephyr" / name
        source.write_text(source.read_text().replace("CONFIG_ARCH_POSIX", "CONFIG_SOC_POSIX"))
    problems = check_port.check(tree)
    assert any(p.startswith("CONFIG_SOC_POSIX (er_port_conditions.c, er_port_zephyr.c)") for p in problems)
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


# ---- issue 22: what a window holds on a board, read in the port's source ----

PORT = FIRMWARE / "port" / "zephyr"


def _code(path: Path) -> str:
    """C source without comments."""
    return check_port._strip_c_comments(path.read_text())


def _function(path: Path, name: str) -> str:
    """The body of a C function defined at file level in path (comments left out)."""
    match = re.search(rf"^\w[\w \*]*\b{name}\([^)]*\)\n\{{\n(.*?)^\}}\n", _code(path),
                      re.MULTILINE | re.DOTALL)
    assert match, f"{name} not defined in {path.name}"
    return match[1]


def _branch(body: str, condition: str) -> str:
    """The lines of body under `#if defined(<condition>)`, up to its #else/#elif/#endif."""
    match = re.search(rf"#if defined\({condition}\)\n(.*?)^#(?:else|elif|endif)", body,
                      re.MULTILINE | re.DOTALL)
    assert match, f"no #if defined({condition}) branch"
    return match[1]


def test_interrupts_are_masked_in_quiet_spans_where_the_cycle_counter_needs_none():
    begin = _function(PORT / "er_port_zephyr.c", "er_port_quiet_begin")
    end = _function(PORT / "er_port_zephyr.c", "er_port_quiet_end")
    assert "return irq_lock();" in _branch(begin, "CONFIG_TIMING_FUNCTIONS")
    assert "irq_unlock(key);" in _branch(end, "CONFIG_TIMING_FUNCTIONS")


def test_the_runner_opens_the_quiet_span_before_the_rising_edge_and_closes_it_after_the_falling():
    """The warm-up run is quiet, the settle idle before each window is not (it sleeps), and
    each window is quiet from before its rising edge to after its falling one."""
    steps = (r"er_port_quiet_begin|er_port_quiet_end|run\(\)|er_port_idle_ms|one_window\(|"
             r"er_port_trigger\(1|er_port_trigger\(0")

    def order(name: str) -> list[str]:
        body = _function(FIRMWARE / "core" / "er_runner.c", name)
        return [m[0] for m in re.finditer(steps, body)]

    assert order("batch_windows") == ["er_port_quiet_begin", "run()", "er_port_quiet_end",
                                      "er_port_idle_ms", "one_window("]
    assert order("one_window") == ["er_port_quiet_begin", "er_port_trigger(1", "run()",
                                   "er_port_trigger(0", "er_port_quiet_end"]


def test_a_masked_window_takes_its_time_from_the_cpu_cycles():
    """The SysTick loses its reload periods while its interrupt is masked: not the window's time."""
    span = _branch(_function(PORT / "er_port_zephyr.c", "er_port_span"), "CONFIG_TIMING_FUNCTIONS")
    assert "*elapsed_ns = mul_div(*cycles, ER_NS_PER_S, info.cycle_hz);" in span


def test_hello_says_whether_interrupts_reach_a_window():
    conditions = _code(PORT / "er_port_conditions.c")
    assert '{"window_irqs", "masked", 0}' in _branch(conditions, "CONFIG_TIMING_FUNCTIONS")
    assert '{"window_irqs", "enabled", 0}' in conditions
    assert '{"window_irqs", "none", 0}' in conditions


def test_every_condition_of_the_port_is_explained_in_the_readme():
    names = re.findall(r'\{"(\w+)", (?:"[^"]*"|ER_\w+), 0\}', _code(PORT / "er_port_conditions.c"))
    readme = (FIRMWARE / "README.md").read_text()
    assert "window_irqs" in names and "cpu_clock_source" in names
    for name in names:
        assert f"\n| `{name}` |" in readme, name


def test_the_readme_says_the_stack_mark_holds_no_exception_frame_of_the_window():
    readme = " ".join((FIRMWARE / "README.md").read_text().split())
    assert "no exception frame is stacked on the batch's stack while an op" in readme
    assert "interrupts (UART receive, the widening timer of `mark`) still do" not in readme


def test_the_nrf_port_requests_the_crystal_at_start_up():
    source = PORT / "er_port_zephyr.c"
    request = _function(source, "request_hfxo")
    assert "z_nrf_clock_control_get_onoff(CLOCK_CONTROL_NRF_SUBSYS_HF)" in request
    assert "onoff_request(mgr, &hfxo_client)" in request
    assert "sys_notify_fetch_result(&hfxo_client.notify, &result) == -EAGAIN" in request
    init = _function(source, "er_port_zephyr_init")
    assert "request_hfxo();" in _branch(init, "CONFIG_CLOCK_CONTROL_NRF")
    # Before the counters start, so that cpu_hz and the timing API see the crystal's clock.
    assert init.index("request_hfxo();") < init.index("counters_init()")
    # hello records the outcome as it records the RC case.
    assert '"hfxo" : "hfint-rc"' in _code(PORT / "er_port_conditions.c")


def test_an_unverified_nrf_clock_api_is_caught(tree: Path):
    _edit(tree / "port" / "zephyr" / "er_port_zephyr.c", "if (onoff_request(mgr, &hfxo_client) < 0)",
          "if (onoff_sync_request(mgr, &hfxo_client) < 0)")
    assert check_port.check(tree) == ["onoff_sync_request (er_port_zephyr.c): not in VERIFIED.md's API table"]


def test_native_sim_times_a_batch_with_the_host_clock():
    source = PORT / "er_port_zephyr.c"
    assert "return er_native_clock_ns();" in _branch(_function(source, "sys_cycles"), "CONFIG_ARCH_POSIX")
    assert "sys_hz = ER_NS_PER_S;" in _branch(_function(source, "counters_init"), "CONFIG_ARCH_POSIX")
    assert "k_busy_wait" not in _code(source)  # the simulated microsecond per reading is gone
    bottom = _code(PORT / "er_native_clock_bottom.c")
    assert "clock_gettime(CLOCK_MONOTONIC, &ts)" in bottom and "zephyr/" not in bottom
    cmake = (FIRMWARE / "CMakeLists.txt").read_text()
    assert re.search(r"if\(CONFIG_NATIVE_LIBRARY\)\s+target_sources\(native_simulator INTERFACE\s+"
                     r"\$\{CMAKE_CURRENT_SOURCE_DIR\}/port/zephyr/er_native_clock_bottom\.c\)", cmake)
