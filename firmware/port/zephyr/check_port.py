#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keep the Zephyr layer of the firmware honest on a machine without Zephyr.

Checks, from the files alone:

- ``west.yml`` pins Zephyr to a release tag or a commit, never a branch, and imports Mbed TLS;
- ``sample.yaml`` writes twister's list-valued keys as YAML lists (Zephyr 4.1 and later);
- every board of ``sample.yaml`` has an overlay whose ``/zephyr,user`` node has
  ``trigger-gpios = <&label pin flags>``, and every required board is in ``sample.yaml``;
- every ``CONFIG_`` symbol of ``prj.conf``, ``boards/*.conf``, ``sample.yaml`` and
  ``port/zephyr`` is either defined by ``firmware/Kconfig`` or a row of the Kconfig table of
  ``port/zephyr/VERIFIED.md`` (which names the Zephyr file it was checked in), and every row
  is used;
- every Zephyr C API name (``k_``, ``K_``, ``timing_``, ``gpio_``, ``uart_``, ``DT_`` ... prefixes)
  in ``port/zephyr``'s C is named in the API table of ``port/zephyr/VERIFIED.md``;
- ``port/zephyr`` includes no core-private header, and ``core``/``ops`` include no Zephyr header.

Usage: ``check_port.py [FIRMWARE_DIR]``; prints one line per problem, exits 1 if any.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

#: Board targets the firmware must support (issue 3).
REQUIRED_BOARDS = (
    "nrf52840dk/nrf52840",
    "nrf5340dk/nrf5340/cpuapp",
    "esp32_devkitc/esp32/procpu",
    "nucleo_f401re",
    "native_sim/native/64",
    "mps2/an385",
)

#: Core headers that are the core's contract with a port (everything else in core/ is private).
CORE_PUBLIC_HEADERS = frozenset({"er_port.h", "er_proto.h", "er_op.h", "er_arena.h", "er_registry.h",
                                 "er_stack.h"})

PINNED_REVISION = re.compile(r"^(v\d+\.\d+\.\d+(-rc\d+)?|[0-9a-f]{40})$")
CONFIG_SYMBOL = re.compile(r"\bCONFIG_[A-Z0-9_]+\b")
TRIGGER_PROPERTY = re.compile(r"trigger-gpios\s*=\s*<\s*&\w+\s+\d+\s+[^>]+>\s*;")
#: Names of Zephyr's C API by prefix (kernel, timing, GPIO, UART, devices, devicetree, IRQ,
#: system clock, crypto, nRF clock control, on-off services, notifications); the port's own
#: names use none of them.
ZEPHYR_API_NAME = re.compile(
    r"\b(?:k_\w+|K_[A-Z0-9_]+|timing_\w+|gpio_\w+|GPIO_[A-Z0-9_]+|uart_\w+|device_\w+"
    r"|DEVICE_[A-Z0-9_]+|DT_[A-Z0-9_]+|irq_\w+|sys_clock_\w+|cipher_\w+|CAP_[A-Z0-9_]+"
    r"|CRYPTO_[A-Z0-9_]+|z_nrf_\w+|CLOCK_CONTROL_[A-Z0-9_]+|onoff_\w+|sys_notify_\w+)\b")
C_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)


def _strip_c_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.DOTALL)


def check_west(firmware: Path) -> list[str]:
    """The zephyr project of west.yml: pinned revision and the Mbed TLS module."""
    path = firmware / "west.yml"
    manifest = yaml.safe_load(path.read_text())["manifest"]
    zephyr = [p for p in manifest.get("projects", []) if p.get("name") == "zephyr"]
    if len(zephyr) != 1:
        return [f"{path}: no single project named zephyr"]
    problems = []
    revision = str(zephyr[0].get("revision", ""))
    if not PINNED_REVISION.match(revision):
        problems.append(f"{path}: zephyr revision {revision!r} is not a release tag or a commit")
    allow = (zephyr[0].get("import") or {}).get("name-allowlist", [])
    if "mbedtls" not in allow:
        problems.append(f"{path}: the zephyr import does not allow the mbedtls module")
    return problems


#: twister keys that take YAML lists only since Zephyr 4.1 (release-notes-4.1: "Space-separated
#: lists support has been removed from Twister configuration files").
TWISTER_LIST_KEYS = ("arch_exclude", "arch_allow", "depends_on", "extra_args", "extra_sections",
                     "platform_exclude", "platform_allow", "tags", "toolchain_exclude",
                     "toolchain_allow")


def _sample_sections(firmware: Path) -> dict[str, dict]:
    doc = yaml.safe_load((firmware / "sample.yaml").read_text())
    sections = {"common": doc.get("common") or {}}
    sections.update({name: test or {} for name, test in (doc.get("tests") or {}).items()})
    return sections


def sample_boards(firmware: Path) -> set[str]:
    """Every platform named by platform_allow in sample.yaml (common and tests)."""
    boards: set[str] = set()
    for section in _sample_sections(firmware).values():
        allow = section.get("platform_allow", [])
        boards.update(allow.split() if isinstance(allow, str) else allow)
    return boards


def check_sample(firmware: Path) -> list[str]:
    """sample.yaml: list-valued twister keys written as lists, and never in both ``common``
    and a scenario: twister concatenates the two lists (twisterlib/config_parser.py,
    ``get_scenario``), so a scenario could not narrow what ``common`` allows."""
    sections = _sample_sections(firmware)
    problems = [f"sample.yaml: {name}.{key} must be a YAML list (Zephyr >= 4.1)"
                for name, section in sections.items()
                for key in TWISTER_LIST_KEYS
                if key in section and not isinstance(section[key], list)]
    problems += [f"sample.yaml: {name}.{key} is added to common.{key} by twister, not put in its place"
                 for name, section in sections.items() if name != "common"
                 for key in ("platform_allow", "extra_args")
                 if key in section and key in sections["common"]]
    return problems


def overlay_candidates(board: str) -> list[str]:
    """File names Zephyr accepts for a board target: all qualifiers, or without the SoC."""
    parts = board.split("/")
    names = ["_".join(parts) + ".overlay"]
    if len(parts) == 3:
        names.append(f"{parts[0]}_{parts[2]}.overlay")
    return names


def check_boards(firmware: Path) -> list[str]:
    """Required boards in sample.yaml; an overlay with a trigger pin for each board."""
    boards = sample_boards(firmware)
    problems = [f"sample.yaml: required board {b} missing" for b in REQUIRED_BOARDS if b not in boards]
    for board in sorted(boards):
        overlays = [firmware / "boards" / n for n in overlay_candidates(board)]
        found = [p for p in overlays if p.is_file()]
        if not found:
            problems.append(f"{board}: no overlay (expected one of {[p.name for p in overlays]})")
            continue
        text = _strip_c_comments(found[0].read_text())
        user = re.search(r"zephyr,user\s*\{(.*?)\}\s*;", text, flags=re.DOTALL)
        if user is None or not TRIGGER_PROPERTY.search(user.group(1)):
            problems.append(f"{found[0]}: no zephyr,user {{ trigger-gpios = <&gpio pin flags>; }}")
    return problems


def app_symbols(firmware: Path) -> set[str]:
    """CONFIG_ names of the symbols firmware/Kconfig defines."""
    text = (firmware / "Kconfig").read_text()
    return {"CONFIG_" + name for name in re.findall(r"^\s*(?:menu)?config\s+(\w+)", text, re.MULTILINE)}


def verified_symbols(firmware: Path) -> set[str]:
    """First column of the Kconfig table in port/zephyr/VERIFIED.md."""
    section = _verified_section(firmware, "Kconfig symbols")
    return set(re.findall(r"^\|\s*`(CONFIG_[A-Z0-9_]+)`\s*\|", section, re.MULTILINE))


def used_symbols(firmware: Path) -> dict[str, set[str]]:
    """Each CONFIG_ symbol of the Zephyr layer, with the files that use it."""
    files = [firmware / "prj.conf", firmware / "sample.yaml"]
    files += sorted((firmware / "boards").glob("*.conf"))
    files += sorted(p for p in (firmware / "port" / "zephyr").rglob("*") if p.suffix in (".c", ".h"))
    used: dict[str, set[str]] = {}
    for path in files:
        text = path.read_text()
        if path.suffix == ".conf":
            text = re.sub(r"#[^\n]*", "", text)
        elif path.suffix in (".c", ".h"):
            text = _strip_c_comments(text)
        for symbol in CONFIG_SYMBOL.findall(text):
            used.setdefault(symbol, set()).add(path.name)
    return used


def check_kconfig(firmware: Path) -> list[str]:
    """Every symbol used is the application's own or verified; every verified row is used."""
    own = app_symbols(firmware)
    verified = verified_symbols(firmware)
    used = used_symbols(firmware)
    problems = []
    for symbol, files in sorted(used.items()):
        if symbol.startswith("CONFIG_ER_"):
            if symbol not in own:
                problems.append(f"{symbol} ({', '.join(sorted(files))}): not defined in firmware/Kconfig")
        elif symbol not in verified:
            problems.append(f"{symbol} ({', '.join(sorted(files))}): not in VERIFIED.md's Kconfig table")
    problems += [f"VERIFIED.md: {s} is listed but used nowhere" for s in sorted(verified - set(used))]
    return problems


def _verified_section(firmware: Path, title: str) -> str:
    text = (firmware / "port" / "zephyr" / "VERIFIED.md").read_text()
    return text.split(f"## {title}", 1)[-1].split("\n## ", 1)[0]


def verified_apis(firmware: Path) -> set[str]:
    """Every C name inside backticks in the API table of port/zephyr/VERIFIED.md."""
    section = _verified_section(firmware, "APIs, macros and CMake functions")
    return {name for code in re.findall(r"`([^`]+)`", section)
            for name in re.findall(r"[A-Za-z_]\w*", code)}


def used_apis(firmware: Path) -> dict[str, set[str]]:
    """Each Zephyr API name of port/zephyr's C (comments and strings left out), with its files."""
    used: dict[str, set[str]] = {}
    for path in sorted((firmware / "port" / "zephyr").rglob("*")):
        if path.suffix in (".c", ".h"):
            text = C_STRING.sub('""', _strip_c_comments(path.read_text()))
            for name in ZEPHYR_API_NAME.findall(text):
                used.setdefault(name, set()).add(path.name)
    return used


def check_apis(firmware: Path) -> list[str]:
    """Every Zephyr API the port calls was read in Zephyr's source (VERIFIED.md's API table)."""
    verified = verified_apis(firmware)
    return [f"{name} ({', '.join(sorted(files))}): not in VERIFIED.md's API table"
            for name, files in sorted(used_apis(firmware).items()) if name not in verified]


def check_includes(firmware: Path) -> list[str]:
    """port/zephyr uses the core only through its contract; core and ops stay portable."""
    core_headers = {p.name for p in (firmware / "core").glob("*.h")}
    problems = []
    for path in sorted((firmware / "port" / "zephyr").rglob("*")):
        if path.suffix not in (".c", ".h"):
            continue
        for _, header in INCLUDE_LINE.findall(_strip_c_comments(path.read_text())):
            name = Path(header).name
            if name in core_headers and name not in CORE_PUBLIC_HEADERS:
                problems.append(f"{path}: includes core-private header {header}")
    for directory in ("core", "ops"):
        for path in sorted((firmware / directory).rglob("*")):
            if path.suffix not in (".c", ".h"):
                continue
            for _, header in INCLUDE_LINE.findall(_strip_c_comments(path.read_text())):
                if header.startswith("zephyr/"):
                    problems.append(f"{path}: portable code includes <{header}>")
    return problems


def check(firmware: Path) -> list[str]:
    """All checks; an empty list means the Zephyr layer is consistent."""
    return (check_west(firmware) + check_sample(firmware) + check_boards(firmware)
            + check_kconfig(firmware) + check_apis(firmware) + check_includes(firmware))


def main(argv: list[str]) -> int:
    firmware = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    problems = check(firmware)
    for problem in problems:
        print(problem)
    print(f"{firmware}: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
