"""The simulated lab's programs (:mod:`energyrig.rig.labsim`): ``python -m energyrig.cli.labsim
--places N`` runs a lab until Ctrl-C (as ``rig lab sim``) and prints its coordinator and
places; with ``--bench NAME`` (internal: :class:`~energyrig.rig.labsim.SimLab` starts it) it
is one bench host, which answers ``ready`` on its stdout once it serves."""
from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Sequence
from pathlib import Path

from energyrig.fixtures.paths import default_fixture_path
from energyrig.rig.labsim import BENCH_PROGRAM, SimLab, serve_bench


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=f"python -m {BENCH_PROGRAM}",
        description="A simulated labgrid lab on loopback: a coordinator and N exporters of "
                    "simulated benches. Prints the coordinator's address and runs until "
                    "Ctrl-C.")
    parser.add_argument("--places", type=int, default=2, help="number of benches (places)")
    parser.add_argument("--fixture", type=Path, default=None,
                        help="the simulated fixture every bench runs (default: the default "
                             "fixture, fixtures/sim.toml, the host DUT; fixtures/sim-m4.toml: "
                             "the emulated Cortex-M4 board)")
    parser.add_argument("--seed", type=int, default=None,
                        help="emulator seed of the first bench (default: the fixture's)")
    parser.add_argument("--bench", help=argparse.SUPPRESS)  # one bench host (internal)
    parser.add_argument("--coordinator", help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bench:
        serve_bench(args.bench, args.coordinator, args.dir, args.fixture or default_fixture_path(),
                    args.seed or 0, ready=lambda: print("ready", flush=True))
        return
    run(args.places, args.fixture, args.seed)


def run(places: int, fixture: Path | None = None, seed: int | None = None) -> None:
    """Start a simulated lab, print its coordinator and places, serve until SIGINT/SIGTERM."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with SimLab(places, fixture, seed) as lab:
        print(f"coordinator {lab.coordinator}", flush=True)
        print(f"places {','.join(lab.places)}", flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
