"""Build a firmware's footprint (the program: ``python -m energyrig.cli.footprint BUILD_DIR``).

``make firmware-footprint BOARD=<target>`` configures the Zephyr build of ``BOARD`` and then
runs this on it. On a configured CMake build directory of the firmware (Ninja), it builds:

1. the empty catalogue (``-DER_OPS_ONLY=none``): the firmware without any op;
2. each op alone (``-DER_OPS_ONLY=<id>``): only the generated catalogue changes, so each
   build is incremental, and ``--gc-sections`` leaves out the code of every other op;
3. the whole catalogue again (``-DER_OPS_ONLY=all``), so the directory ends as it began;

reads each image's flash and static RAM (:func:`energyrig.results.footprint.elf_memory`) and
writes ``footprint.json`` (:class:`~energyrig.results.footprint.Footprint`) into the build
directory. An op whose family leaves it out of this build (its Mbed TLS module not built)
is not listed.
"""
from __future__ import annotations

import logging
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from energyrig.errors import ConfigError
from energyrig.results.footprint import (
    FOOTPRINT,
    Footprint,
    OpFootprint,
    elf_defines,
    elf_memory,
    op_of_id,
    write_footprint,
)

log = logging.getLogger(__name__)

#: The image of a Zephyr build, relative to its build directory.
ZEPHYR_ELF = "zephyr/zephyr.elf"


def _cache(build_dir: Path, name: str) -> str | None:
    """A variable of the build's CMakeCache.txt."""
    found = re.search(rf"^{name}:[A-Z]+=(.*)$", (build_dir / "CMakeCache.txt").read_text(),
                      re.MULTILINE)
    return found.group(1) if found else None


def build_with(build_dir: Path, only: str, target: str | None = None) -> None:
    """Reconfigure ``build_dir`` with ``ER_OPS_ONLY=only`` and build it (or ``target``).

    Raises
    ------
    ConfigError
        The configure or the build failed (with the end of its output).
    """
    log.info("building %s with ER_OPS_ONLY=%s", build_dir, only)
    for command in (["cmake", f"-DER_OPS_ONLY={only}", str(build_dir)],
                    ["cmake", "--build", str(build_dir),
                     *(["--target", target] if target else [])]):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ConfigError(build_dir, "ER_OPS_ONLY", f"{' '.join(command)} failed:\n"
                                                        f"{done.stdout[-3000:]}{done.stderr}")


def catalogue_ids(build_dir: Path) -> list[str]:
    """The ``ER_OP`` ids of the catalogue the build generated (``er_catalogue.c``)."""
    text = (build_dir / "er_catalogue.c").read_text(encoding="utf-8")
    return re.findall(r"^\t&er_op_(\w+),$", text, re.MULTILINE)


def _toolchain(build_dir: Path) -> str:
    compiler = _cache(build_dir, "CMAKE_C_COMPILER") or "cc"
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True,
                             check=False).stdout
    return version.splitlines()[0] if version else compiler


def _build_id(build_dir: Path) -> str:
    """ER_BUILD_ID as the build compiled it (build.ninja's flags)."""
    found = re.search(r'-DER_BUILD_ID=\\"([^"\\]*)\\"', (build_dir / "build.ninja").read_text())
    return found.group(1) if found else "unknown"


def _zephyr_version(build_dir: Path) -> str | None:
    header = build_dir / "zephyr/include/generated/zephyr/version.h"
    found = re.search(r'KERNEL_VERSION_STRING\s+"([^"]+)"',
                      header.read_text()) if header.is_file() else None
    return found.group(1) if found else None


def _crypto(build_dir: Path) -> str | None:
    """``mbedtls-<version>`` of the first Mbed TLS header directory the build includes (the
    host build's is a cache variable)."""
    ninja = (build_dir / "build.ninja").read_text()
    dirs = [_cache(build_dir, "MBEDTLS_INCLUDE_DIR"), *re.findall(r"-I(\S+)", ninja)]
    for inc in dict.fromkeys(d for d in dirs if d):
        for header in ("build_info.h", "version.h"):
            path = Path(inc) / "mbedtls" / header
            found = re.search(r'MBEDTLS_VERSION_STRING\s+"([^"]+)"',
                              path.read_text()) if path.is_file() else None
            if found:
                return f"mbedtls-{found.group(1)}"
    return None


def build_footprint(build_dir: str | Path, *, elf: str = ZEPHYR_ELF, target: str | None = None,
                    ops: Sequence[str] = ()) -> Footprint:
    """Build the footprint of the firmware in ``build_dir`` and write ``footprint.json`` there.

    Parameters
    ----------
    build_dir:
        A configured CMake build directory of the firmware (Zephyr's or the host's), Ninja.
    elf:
        The image, relative to ``build_dir``.
    target:
        The target that builds it (``None``: everything).
    ops:
        The ids or names of the ops to measure (none: every op of the catalogue).

    Raises
    ------
    ConfigError
        A configure or build failed (with its output), or ``ops`` names an op the build
        does not have.
    """
    build_dir = Path(build_dir)
    image = build_dir / elf
    build_with(build_dir, "all", target)
    full = elf_memory(image)
    ids = catalogue_ids(build_dir)
    wanted = [o.replace("-", "_") for o in ops] or ids
    unknown = sorted(set(wanted) - set(ids))
    if unknown:
        raise ConfigError(build_dir, "ops", f"not in its catalogue: {', '.join(unknown)}")
    build_with(build_dir, "none", target)
    empty = elf_memory(image)
    entries = []
    try:
        for op_id in wanted:
            build_with(build_dir, op_id, target)
            if not elf_defines(image, f"er_op_{op_id}"):
                log.info("%s: not in this build (its Mbed TLS module is not built)", op_id)
                continue
            alone = elf_memory(image)
            name, backend = op_of_id(op_id)
            entries.append(OpFootprint(id=op_id, op=name, backend=backend,
                                       flash_bytes=alone.flash_bytes - empty.flash_bytes,
                                       ram_bytes=alone.ram_bytes - empty.ram_bytes))
    finally:
        build_with(build_dir, "all", target)
    footprint = Footprint(board=_cache(build_dir, "BOARD") or "host",
                          zephyr=_zephyr_version(build_dir), crypto=_crypto(build_dir),
                          toolchain=_toolchain(build_dir), build_id=_build_id(build_dir),
                          empty=empty, full=full, ops=tuple(entries))
    write_footprint(footprint, build_dir / FOOTPRINT)
    return footprint
