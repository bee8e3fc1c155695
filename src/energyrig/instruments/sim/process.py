"""Emulators as processes: the command line they share, and starting one from Python.

Every emulator module of the simulated bench (``energyrig.instruments.ppk2.emulator``,
``energyrig.instruments.scope.emulator``) runs as ``python -m energyrig.cli.emulate MODULE --model
JSON [--wire PATH] [--truth PATH] [--seed N] [-v] ...`` (the program, which calls the module's
``main(argv, announce)``), prints the address a client opens (a pty path, a VISA resource) on
its first stdout line, and serves until SIGTERM/SIGINT or until its parent dies (a killed rig
leaves no emulator behind). :func:`emulator_parser`, :func:`parse_emulator_args` and
:func:`serve_until_stopped` give a module that command line; :class:`EmulatorProcess` starts
one and reads its address.

:func:`tethered` runs any program so that it dies with the process that starts it, however
that one dies (SIGKILL included): ``python -m energyrig.instruments.sim.process PARENT SIGNAL
-- PROGRAM ...`` asks the kernel for ``SIGNAL`` on its parent's death (Linux
``PR_SET_PDEATHSIG``, kept across ``exec``), then becomes ``PROGRAM``.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import logging
import os
import re
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Self

from energyrig.errors import InstrumentError
from energyrig.instruments.progress import ProgressBound, cpu_time_s

if TYPE_CHECKING:
    from energyrig.instruments.sim.power import PowerModel

log = logging.getLogger(__name__)

#: Interval between looks at a starting emulator, s.
_START_POLL_S = 0.1
#: The program every emulator runs in (``python -m EMULATOR_PROGRAM MODULE ...``).
EMULATOR_PROGRAM = "energyrig.cli.emulate"
#: Hands an emulator's address to whoever started it (the program prints it).
Announce = Callable[[str], None]
#: The log's format in an emulator's process (:func:`parse_emulator_args`), read back by
#: :func:`relay_log`.
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"
_LOG_LINE = re.compile(r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) ([\w.]+): (.*)")
#: The longest wait for an emulator's last log lines after it exited, s.
_RELAY_JOIN_S = 5.0


def relay_log(stream: IO[str]) -> None:
    """Log in this process each line an emulator's process writes on ``stream`` (its
    stderr), until it ends: under the emulator's logger and level (a line of another form,
    a traceback's, as an error), so the caller's handler shows it (``rig``: above its
    progress bar, not through it). A warning is counted as a repeat of those alike but for
    their numbers (``host is not reading; N samples dropped``: once per window under load)."""
    with stream:
        for raw in stream:
            line = raw.rstrip("\n")
            match = _LOG_LINE.fullmatch(line)
            if match is None:
                log.error("emulator: %s", line)
                continue
            level, name, message = match.groups()
            alike = re.sub(r"\b\d+(\.\d+)?\b", "N", message)  # not PPK2's 2
            extra = ({"repeats": f"emulator warnings like '{alike}'"}
                     if level == "WARNING" else None)
            logging.getLogger(name).log(getattr(logging, level), "%s", message, extra=extra)


def emulator_parser(module: str, description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every emulator takes."""
    parser = argparse.ArgumentParser(prog=f"python -m {EMULATOR_PROGRAM} {module}",
                                     description=description)
    parser.add_argument("--wire", type=Path, help="trigger wire socket to bind")
    parser.add_argument("--truth", type=Path, help="truth log (JSONL) to write")
    parser.add_argument("--model", default="{}",
                        help="power model as JSON (fields of PowerModel and a board "
                             "profile, e.g. '{\"profile\": \"nrf52840\", \"noise_a\": 1e-6}')")
    parser.add_argument("--seed", type=int, default=0, help="noise/fault seed")
    parser.add_argument("--load-switch", type=Path,
                        help="JSON file naming what the current input sees "
                             "(energyrig.instruments.sim.switch; default: the board)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what it does")
    return parser


def parse_emulator_args(parser: argparse.ArgumentParser,
                        argv: list[str] | None) -> tuple[argparse.Namespace, PowerModel]:
    """Parse the command line, set up logging and build the power model."""
    from energyrig.instruments.sim.power import PowerModel  # numpy: the emulator's own
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format=LOG_FORMAT)
    try:
        model = PowerModel.from_dict(json.loads(args.model))
    except (ValueError, TypeError) as exc:
        parser.error(f"--model: {exc}")
    return args, model


def serve_until_stopped(address: str, announce: Announce) -> None:
    """``announce(address)`` for the parent, then wait for SIGTERM/SIGINT or the parent's
    death."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    parent = os.getppid()  # before the announce: the parent may die as soon as it reads it
    announce(address)
    while not stop.wait(0.2):
        if os.getppid() != parent:
            log.warning("emulator at %s: its parent (pid %d) is gone; exiting", address, parent)
            return


def python_module(module: str) -> list[str]:
    """The command line that runs ``module`` of the installed package (``python -P -m
    MODULE``): ``-P`` keeps the working directory off ``sys.path``, so an ``energyrig/``
    folder where the rig was started (an unpacked archive) is never imported
    (docs/security.md)."""
    return [sys.executable, "-P", "-m", module]


#: prctl(2) option: the signal this process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int, sig: int) -> None:
    """Have the kernel send this process ``sig`` when its parent dies, however it dies
    (``PR_SET_PDEATHSIG``: kept across ``exec``; the parent is the *thread* that started this
    process).

    Raises
    ------
    OSError
        prctl failed (not Linux).
    ProcessLookupError
        The parent (pid ``parent``) died before the request took effect.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        raise ProcessLookupError(f"parent process {parent} is already gone")


def tethered(argv: Sequence[str], sig: int = signal.SIGTERM) -> list[str]:
    """The command line that runs ``argv`` so that it gets ``sig`` when this process (the
    thread calling :class:`subprocess.Popen`) dies, however it dies; ``SIGTERM`` lets it stop
    its own children, ``SIGKILL`` suits a program with nothing to clean up."""
    return [*python_module(__name__), str(os.getpid()), str(int(sig)), "--", *argv]


def _exec_tethered(args: Sequence[str]) -> None:
    """``PARENT SIGNAL -- PROGRAM [ARG ...]``: :func:`die_with_parent`, then exec ``PROGRAM``
    (exit code 1, nothing run, when the parent is already gone)."""
    parent, sig, dashes, *argv = args
    if dashes != "--" or not argv:
        raise SystemExit("usage: python -m energyrig.instruments.sim.process PARENT SIGNAL "
                         "-- PROGRAM [ARG ...]")
    try:
        die_with_parent(int(parent), int(sig))
    except ProcessLookupError:
        raise SystemExit(1) from None
    os.execvp(argv[0], argv)


def terminate(proc: subprocess.Popen[str] | subprocess.Popen[bytes], what: str,
              timeout_s: float = 10.0) -> None:
    """Stop a child: SIGTERM, then SIGKILL if it has not exited within ``timeout_s``; close
    its pipes. ``what`` names it in the log."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        log.error("%s (pid %d) ignored SIGTERM; killing it", what, proc.pid)
        proc.kill()
        proc.wait()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


#: The longest path a Unix socket can be bound at: ``sun_path``'s 108 bytes, less the NUL.
SOCKET_PATH_MAX = 107


def _socket_path(path: str | os.PathLike[str]) -> str:
    """``path`` for the trigger wire's Unix socket, or :class:`InstrumentError` if the kernel
    cannot bind it there (the emulator would die at start with ``AF_UNIX path too long``)."""
    text = os.fspath(path)
    size = len(os.fsencode(text))
    if size > SOCKET_PATH_MAX:
        raise InstrumentError(
            f"the trigger wire's socket {text} is {size} bytes long, and a Unix socket's path "
            f"may be at most {SOCKET_PATH_MAX}: set TMPDIR to a shorter directory")
    return text


class EmulatorProcess:
    """Run an emulator in its own process (``python -m energyrig.instruments.ppk2.emulator``).

    Parameters
    ----------
    model:
        Power model, passed as JSON.
    wire, truth:
        Paths of the trigger wire socket and the truth log.
    extra_args:
        More command-line options (``["--latency-s", "0.05"]``).
    start_timeout_s:
        How long the emulator may go without using the CPU, and how much CPU time it may
        use, before it has printed its address, s
        (:class:`~energyrig.instruments.progress.ProgressBound`).
    module:
        The emulator module to run; any with the same command line and first stdout line
        (``energyrig.instruments.scope.emulator`` prints a VISA resource instead of a pty path).

    Use as a context manager; :attr:`port` is the first line the emulator printed (the pty
    path, the VISA resource) once entered.
    """

    def __init__(self, model: PowerModel, wire: str | os.PathLike[str] | None = None,
                 truth: str | os.PathLike[str] | None = None, extra_args: list[str] | None = None,
                 start_timeout_s: float = 10.0,
                 module: str = "energyrig.instruments.ppk2.emulator") -> None:
        self.argv = [*python_module(EMULATOR_PROGRAM), module,
                     "--model", json.dumps(model.as_dict())]
        if wire is not None:
            self.argv += ["--wire", _socket_path(wire)]
        if truth is not None:
            self.argv += ["--truth", os.fspath(truth)]
        self.argv += extra_args or []
        self.start_timeout_s = start_timeout_s
        self.port = ""
        self._proc: subprocess.Popen[str] | None = None
        self._relay: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        """Process id of the running emulator."""
        return None if self._proc is None else self._proc.pid

    def __enter__(self) -> Self:
        # its log comes back through this process's (relay_log), on a pipe of its own:
        # terminate() closes the process's pipes while the relay may still read
        read_end, write_end = os.pipe()
        try:
            self._proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=write_end,
                                          text=True)
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        self._relay = threading.Thread(
            target=relay_log, args=(os.fdopen(read_end, encoding="utf-8", errors="replace"),),
            name=f"emulator {self._proc.pid} log", daemon=True)
        self._relay.start()
        assert self._proc.stdout is not None
        bound = ProgressBound(self.start_timeout_s, work=partial(cpu_time_s, [self._proc.pid]))
        ready: list[object] = []
        while not ready and self._proc.poll() is None and not bound.expired():
            ready, _, _ = select.select([self._proc.stdout], [], [], _START_POLL_S)
        ready = ready or select.select([self._proc.stdout], [], [], 0)[0]
        line = self._proc.stdout.readline().strip() if ready else ""
        if not line:
            try:
                code = self._proc.wait(timeout=1.0) if ready else None
            except subprocess.TimeoutExpired:
                code = None
            self.__exit__(None, None, None)
            raise InstrumentError(f"emulator did not start: no address after "
                                  f"{self.start_timeout_s:g} s without using the CPU or "
                                  f"{self.start_timeout_s:g} s of CPU time (exit code {code}; "
                                  f"its errors are above): {' '.join(self.argv)}")
        self.port = line
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._proc is None:
            return
        terminate(self._proc, "emulator")
        self._proc = None
        if self._relay is not None:  # its last lines (why it did not start) before going on
            self._relay.join(_RELAY_JOIN_S)
            self._relay = None


if __name__ == "__main__":
    _exec_tethered(sys.argv[1:])
