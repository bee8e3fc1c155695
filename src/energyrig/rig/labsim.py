"""A simulated labgrid lab on loopback: a coordinator and N exporters, each exporting one
simulated bench, so the whole lab path runs on one machine.

::

    rig lab sim --places 3                         # or: python -m energyrig.cli.labsim

    with SimLab(places=2) as lab:                  # lab.coordinator: "127.0.0.1:PORT"
        with place_slots(lab.coordinator, lab.places, [load_fixture("fixtures/sim.toml")]) as s:
            ...
        lab.kill("bench-b")                        # a bench host dies

Each bench is one *bench host*: a supervisor process (``python -m energyrig.cli.labsim --bench
NAME``, :func:`serve_bench`, the leader of its own process group) that starts the fixture's
DUT (``COMMAND --pty --trigger-wire W``: by default ``fixtures/sim.toml``'s host DUT; with
``fixtures/sim-m4.toml`` the emulated Cortex-M4 board, its own QEMU and bridge) and
an emulated PPK2 (the fixture's ``[sim]`` power model, a seed of its own, so a serial
number and calibration records of its own) on the same wire, both on ptys, and runs
``labgrid-exporter`` publishing them as ``RawSerialPort`` resources ``dut`` and
``instrument`` (labgrid starts ``ser2net`` on each when the place is acquired and publishes
it as a ``NetworkSerialPort``, protocol rfc2217). :meth:`SimLab.kill` kills the whole group
at once — supervisor, DUT, emulator, exporter, ser2net — as a bench host losing power would.

The coordinator (``labgrid-coordinator``, its own process group, a free port, its state in
a temporary directory) gets one place per bench, named like the exporter, matching the
exporter's resources and tagged ``board=`` the fixture's board: written into its state file
(:data:`PLACES_FILE`) before it starts, which it restores its places from, so no
``labgrid-client`` call (a Python process of ~0.9 s of CPU each) creates them. The lab is up
once one look at the lab's resources (``labgrid-client -v resources``) finds every bench's.

Nothing outlives the lab, however it ends: the coordinator and each bench host are started
:func:`~energyrig.instruments.sim.process.tethered` to the process that started the lab (the
coordinator gets SIGKILL when it dies, a bench host SIGTERM, on which it stops its exporter,
DUT and emulator and then what is left of its process group: the ``ser2net`` processes
labgrid starts), the exporter to its bench host. The temporary directory (``rig-lab-*``)
holds an ``owner.lock`` its lab keeps locked; a lab killed before it could remove the
directory leaves it unlocked, and the next lab to start removes it
(:func:`remove_stale_workdirs`).
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Self

from energyrig.errors import LabError
from energyrig.fixtures.paths import default_fixture_path
from energyrig.instruments.progress import ProgressBound, cpu_time_s
from energyrig.instruments.sim.process import python_module, tethered
from energyrig.lab.place import DUT, INSTRUMENT, LabClient, client_program

log = logging.getLogger(__name__)

#: The resource group of a bench in its exporter's configuration.
GROUP = "bench"
#: Longest the lab may stay idle, or work, while it comes up, s (a ProgressBound: a loaded
#: host makes the start longer, not idler).
START_TIMEOUT_S = 60.0
#: Prefix of a simulated lab's temporary directory (in :func:`tempfile.gettempdir`).
WORKDIR_PREFIX = "rig-lab-"
#: The file in it that its lab keeps locked (``flock``) while it runs.
OWNER_LOCK = "owner.lock"
#: The program of a bench host (it answers ``ready`` on its stdout once it serves).
BENCH_PROGRAM = "energyrig.cli.labsim"
#: The coordinator's state file in its working directory: the places it restores on start
#: (labgrid 26's ``Coordinator.load``; it writes the file again on every change).
PLACES_FILE = "places.yaml"


def _claim(workdir: Path) -> int:
    """Lock ``workdir``'s :data:`OWNER_LOCK` for as long as this process holds the returned
    descriptor (the kernel drops the lock when the process dies, however it dies). The lock
    is taken before the file gets its name, so a named lock file is never free while its lab
    runs."""
    staged = workdir / f".{OWNER_LOCK}"
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(staged, workdir / OWNER_LOCK)
    return fd


def remove_stale_workdirs(root: Path | None = None) -> list[Path]:
    """Remove the temporary directories of simulated labs that died without removing them
    (killed with SIGKILL): this user's ``rig-lab-*`` directories in ``root`` (default: the
    system's temporary directory) whose :data:`OWNER_LOCK` nobody holds. Returns them."""
    removed = []
    for workdir in Path(root or tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*"):
        try:
            if workdir.is_symlink() or workdir.stat().st_uid != os.getuid():
                continue
            fd = os.open(workdir / OWNER_LOCK, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:  # not a lab's, or one that is still starting
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # its lab runs
            continue
        else:
            shutil.rmtree(workdir, ignore_errors=True)
            removed.append(workdir)
        finally:
            os.close(fd)
    if removed:
        log.info("removed the folders of simulated labs that were killed: %s",
                 ", ".join(map(str, removed)))
    return removed


def place_names(n: int) -> list[str]:
    """``bench-a``, ``bench-b``, ... (``bench-27`` beyond the alphabet)."""
    return [f"bench-{chr(ord('a') + i)}" if i < 26 else f"bench-{i + 1}" for i in range(n)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _program(name: str) -> str:
    """A console script of this environment (next to the interpreter)."""
    return str(Path(client_program()).with_name(name))


def _kill_group(proc: subprocess.Popen[bytes], timeout_s: float = 5.0) -> None:
    """SIGTERM the process group ``proc`` leads, SIGKILL what is left after ``timeout_s``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGTERM:  # the leader is gone; its children may linger
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        break
    proc.wait()


class SimLab:
    """A coordinator and ``places`` simulated bench hosts on loopback (a context manager).

    Parameters
    ----------
    places:
        How many benches (places ``bench-a``, ``bench-b``, ...).
    fixture:
        The simulated fixture whose DUT command and ``[sim]`` power model every bench runs
        (``None``: the default fixture, ``fixtures/sim.toml``, the host DUT;
        ``fixtures/sim-m4.toml``: the emulated Cortex-M4 board, whose op lasts its cycles at
        its clock however many places run, and whose QEMU sleeps while the board waits:
        docs/lab.md).
    seed:
        Bench *i*'s emulator runs with seed ``seed + i``, so each place's instrument has a
        serial number, and so calibration records, of its own (``None``: the fixture's
        ``[sim] seed``: ``bench-a``'s emulated PPK2 is then the fixture's own local bench's).

    Attributes
    ----------
    coordinator:
        ``127.0.0.1:PORT`` (for ``--lab``, ``LG_COORDINATOR``).
    places:
        The place names.
    """

    def __init__(self, places: int = 1, fixture: Path | None = None,
                 seed: int | None = None) -> None:
        if places < 1:
            raise LabError(f"a simulated lab needs at least one place, not {places}")
        self.places = place_names(places)
        self.fixture = Path(fixture) if fixture is not None else default_fixture_path()
        self.seed = seed
        self.coordinator = ""
        self._benches: dict[str, subprocess.Popen[bytes]] = {}
        self._coordinator: subprocess.Popen[bytes] | None = None
        self._stack = ExitStack()

    def __enter__(self) -> Self:
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self) -> None:
        from energyrig.fixtures import load_fixture

        fx = load_fixture(self.fixture)
        board = fx.dut.board
        seed = self.seed if self.seed is not None else fx.sim.seed if fx.sim else 0
        remove_stale_workdirs()
        workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX))
        self._stack.callback(os.close, _claim(workdir))  # unlocked once removed (LIFO)
        self._stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        self.coordinator = f"127.0.0.1:{_free_port()}"
        (workdir / PLACES_FILE).write_text(_places_state(self.places, board), encoding="utf-8")
        self._coordinator = subprocess.Popen(
            tethered([_program("labgrid-coordinator"), "-l", self.coordinator], signal.SIGKILL),
            cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        _wait_listening(self.coordinator, self._coordinator)
        for i, name in enumerate(self.places):
            (workdir / name).mkdir()
            self._benches[name] = subprocess.Popen(
                tethered([*python_module(BENCH_PROGRAM), "--bench", name,
                          "--coordinator", self.coordinator, "--dir", str(workdir / name),
                          "--fixture", str(self.fixture), "--seed", str(seed + i)]),
                stdout=subprocess.PIPE, start_new_session=True)
        for name, proc in self._benches.items():
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != b"ready":
                raise LabError(f"simulated bench {name} did not start (exit code "
                               f"{proc.poll()}; its errors are above)")
        client = LabClient(self.coordinator)
        wanted = {(name, GROUP, r) for name in self.places for r in (DUT, INSTRUMENT)}
        bound = ProgressBound(START_TIMEOUT_S, work=partial(cpu_time_s, self.pids()))
        while missing := wanted - client.available_resources():
            if bound.expired():
                raise LabError(f"simulated place {min(missing)[0]}: its resources did not "
                               f"appear, the lab idle for {START_TIMEOUT_S:g} s or busy for "
                               "as long")
            time.sleep(0.2)

    def kill(self, place: str) -> None:
        """Kill ``place``'s bench host at once (SIGKILL to its whole process group)."""
        proc = self._benches[place]
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def pids(self) -> list[int]:
        """Process group ids of the coordinator and the bench hosts."""
        procs = [self._coordinator, *self._benches.values()]
        return [p.pid for p in procs if p is not None]

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for proc in self._benches.values():
            _kill_group(proc)
            if proc.stdout is not None:
                proc.stdout.close()
        self._benches.clear()
        if self._coordinator is not None:
            _kill_group(self._coordinator)
            self._coordinator = None
        self._stack.close()


def _wait_listening(address: str, proc: subprocess.Popen[bytes]) -> None:
    host, port = address.rsplit(":", 1)
    bound = ProgressBound(START_TIMEOUT_S, work=partial(cpu_time_s, [proc.pid]))
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=1.0).close()
            return
        except OSError:
            if proc.poll() is not None or bound.expired():
                raise LabError(f"labgrid-coordinator on {address} did not start (exit code "
                               f"{proc.poll()})") from None
            time.sleep(0.05)


def _places_state(places: list[str], board: str) -> str:
    """The coordinator's :data:`PLACES_FILE` (JSON is YAML): each place of ``places``
    matching exporter NAME's bench (``NAME/bench/*``, as ``labgrid-client add-match`` adds
    it) and tagged ``board=`` ``board``."""
    return json.dumps({name: {"matches": [{"exporter": name, "group": GROUP, "cls": "*"}],
                              "tags": {"board": board}} for name in places})


def serve_bench(name: str, coordinator: str, workdir: Path, fixture_path: Path,
                seed: int, ready: Callable[[], None]) -> None:
    """Run one simulated bench host until SIGTERM: the emulator and the fixture's DUT on one
    trigger wire, exported to ``coordinator`` as exporter ``name``; ``ready()`` once they
    run (the program's handshake with :class:`SimLab`)."""
    from energyrig.fixtures import load_fixture
    from energyrig.fixtures.loader import resolve_command
    from energyrig.instruments.registry import family
    from energyrig.instruments.sim.power import PowerModel
    from energyrig.instruments.sim.process import EmulatorProcess, terminate
    from energyrig.rig.dut import DutProcess

    fx = load_fixture(fixture_path)
    if fx.sim is None:
        raise LabError(f"{fixture_path}: a simulated lab needs a fixture with [sim]")
    kind = family(fx.instrument.kind)
    assert kind.emulator is not None  # the fixture loader refuses [sim] without one
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    wire = workdir / "trigger.wire"
    with ExitStack() as stack:
        stack.callback(_end_group)
        emulator = stack.enter_context(EmulatorProcess(
            PowerModel.from_dict(fx.sim.power.model_dump()), wire=wire, module=kind.emulator,
            extra_args=["--latency-s", str(fx.sim.latency_s), "--seed", str(seed),
                        *kind.emulator_args(fx.instrument)]))
        dut = stack.enter_context(DutProcess(resolve_command(fx), "pty", trigger_wire=wire,
                                             board=fx.dut.board, timeout_s=fx.dut.timeout_s,
                                             connect=False))
        config = workdir / "exporter.yaml"  # YAML; JSON is YAML
        config.write_text(json.dumps({GROUP: {
            DUT: {"cls": "RawSerialPort", "port": dut.port, "speed": fx.dut.baudrate},
            INSTRUMENT: _instrument_export(emulator.port)}}))
        exporter = subprocess.Popen(
            tethered([_program("labgrid-exporter"), "-c", coordinator, "-n", name,
                      "--hostname", "127.0.0.1", str(config)]), cwd=workdir,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stack.callback(terminate, exporter, f"labgrid-exporter {name}", 5.0)
        ready()
        while not stop.wait(0.2):
            if exporter.poll() is not None:
                log.error("bench %s: labgrid-exporter exited (code %s)", name, exporter.poll())
                return


def _end_group() -> None:
    """SIGTERM what is left of this bench host's process group, itself excepted: the
    ``ser2net`` processes labgrid-exporter started for its ports and does not stop."""
    if os.getpgrp() != os.getpid():
        return  # not a group of its own: nothing here is only the bench host's
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(os.getpgrp(), signal.SIGTERM)


def _instrument_export(address: str) -> dict[str, object]:
    """The exporter's entry for an emulator at ``address``: its pty as a ``RawSerialPort``
    (a PPK2), or its VISA socket ``TCPIP::HOST::PORT::SOCKET`` as a ``PyVISADevice`` (a
    scope on the LAN; :meth:`energyrig.lab.place.Resource.address`)."""
    if address.startswith("TCPIP::"):
        return {"cls": "PyVISADevice", "type": "TCPIP", "url": address.removeprefix("TCPIP::")}
    return {"cls": "RawSerialPort", "port": address, "speed": 115200}
