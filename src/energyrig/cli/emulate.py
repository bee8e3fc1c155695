"""The emulator program: ``python -m energyrig.cli.emulate MODULE [OPTIONS]`` runs the emulator
``MODULE`` (an instrument family's ``emulator``, e.g. ``energyrig.instruments.ppk2.emulator``;
``MODULE --help`` lists its options) and prints the address a client opens (a pty path, a VISA
resource) on its first stdout line: the handshake
:class:`~energyrig.instruments.sim.process.EmulatorProcess` reads."""
from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from energyrig.instruments.sim.process import EMULATOR_PROGRAM


def _announce(address: str) -> None:
    print(address, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the emulator ``argv[0]`` with the rest of ``argv`` until SIGTERM, SIGINT or the
    parent's death."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0].startswith("-"):
        raise SystemExit(f"usage: python -m {EMULATOR_PROGRAM} MODULE [OPTIONS]")
    emulator = importlib.import_module(args[0])
    return int(emulator.main(args[1:], _announce))


if __name__ == "__main__":
    sys.exit(main())
