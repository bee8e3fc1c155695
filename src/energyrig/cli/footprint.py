"""The footprint program: ``python -m energyrig.cli.footprint BUILD_DIR`` (``make
firmware-footprint``) builds the firmware's footprint (:func:`energyrig.rig.footprint.
build_footprint`) and says where it wrote it."""
from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from energyrig.errors import ConfigError
from energyrig.results.footprint import FOOTPRINT
from energyrig.rig.footprint import ZEPHYR_ELF, build_footprint


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (``make firmware-footprint``)."""
    parser = argparse.ArgumentParser(prog="python -m energyrig.cli.footprint",
                                     description="Build the firmware's footprint: flash and RAM "
                                                 "without any op and per op.")
    parser.add_argument("build_dir", type=Path, help="configured firmware build directory")
    parser.add_argument("--elf", default=ZEPHYR_ELF, help=f"image (default: {ZEPHYR_ELF})")
    parser.add_argument("--target", help="target that builds it (default: all)")
    parser.add_argument("--ops", default="", help="comma-separated ops (default: all)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        fp = build_footprint(args.build_dir, elf=args.elf, target=args.target,
                             ops=[o for o in args.ops.split(",") if o])
    except ConfigError as exc:
        print(f"footprint: error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.build_dir / FOOTPRINT}: {fp.board}, empty {fp.empty.flash_bytes} B flash "
          f"{fp.empty.ram_bytes} B RAM, {len(fp.ops)} ops")
    return 0


if __name__ == "__main__":
    sys.exit(main())
