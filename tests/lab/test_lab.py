"""The labgrid lab: a place's description, the fixture rewritten for it, the rfc2217 receive
loop, and a simulated lab of two places end to end (acquire, measure, release, status, bad
input, a bench host killed, no process left)."""
from __future__ import annotations

import json
import queue
import signal
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psutil
import pytest
from support.paths import ROOT
from serial import rfc2217
from support.fixtures import write_fixture
from support.lab import rig_lab_sim
from typer.testing import CliRunner

from energyrig.calibration.store import (
    CALIBRATION_DIR_ENV,
    CalibrationStore,
    Identity,
    Measured,
    new_record,
)
from energyrig.cli.app import app
from energyrig.domain import Point
from energyrig.errors import DutError, LabError
from energyrig.fixtures import load_fixture
from energyrig.instruments.serialurl import Rfc2217Serial
from energyrig.lab.place import (
    COORDINATOR_ENV,
    LabClient,
    PlaceInfo,
    Resource,
    acquired,
    fixture_for_place,
    parse_show,
)
from energyrig.rig.bench import open_bench
from energyrig.rig.dut import open_dut
from energyrig.rig.flags import DURATION_MISMATCH
from energyrig.rig.labsim import SimLab
from energyrig.rig.sweep.lanes import place_slots
from energyrig.rig.pipeline import measure_point, reps_done

SIM = ROOT / "fixtures" / "sim.toml"
#: The simulated board's power in a hash window: fixtures/sim.toml's nrf52840 profile,
#: 3.6 mA at 3.0 V (energyrig.instruments.sim.power.PROFILES).
HASH_POWER_W = 3.6e-3 * 3.0
SIM_SCOPE = ROOT / "fixtures" / "sim-scope.toml"
#: fixtures/sim-scope.toml's board hashing: the esp32 profile's 38 mA at 3.3 V, W.
SCOPE_HASH_POWER_W = 38e-3 * 3.3

SHOW = """\
Place 'bench-a':
  tags: board=host, room=2
  matches:
    bench-a/bench/*
  acquired: vm/root
  acquired resources:
    bench-a/bench/NetworkSerialPort/dut
    bench-a/bench/NetworkSerialPort/instrument
  created: 2026-11-23 23:34:26.202235
  changed: 2026-11-23 23:34:29.637434
Acquired resource 'dut' (bench-a/bench/NetworkSerialPort/dut):
  {'acquired': 'bench-a',
   'avail': True,
   'cls': 'NetworkSerialPort',
   'params': {'extra': {'path': '/dev/pts/2',
                        'proxy': 'localhost',
                        'proxy_required': False},
              'host': '10.0.0.7',
              'port': 39007,
              'speed': 115200}}
Acquired resource 'instrument' (bench-a/bench/PyVISADevice/instrument):
  {'acquired': 'bench-a',
   'avail': False,
   'cls': 'PyVISADevice',
   'params': {'type': 'TCPIP', 'url': '10.0.0.9', 'extra': {}}}
"""


def test_show_is_parsed_into_tags_holder_and_resources() -> None:
    info = parse_show("bench-a", SHOW)
    assert info.tags == {"board": "host", "room": "2"}
    assert info.board == "host" and info.acquired == "vm/root" and info.host == "bench-a"
    dut, scope = info.resource("dut"), info.resource("instrument")
    assert dut.address() == "rfc2217://10.0.0.7:39007?ign_set_control"
    assert dut.exporter == "bench-a" and dut.params["path"] == "/dev/pts/2"
    assert scope.address() == "TCPIP::10.0.0.9::INSTR"
    assert not info.available  # the scope's exporter reports it absent
    with pytest.raises(LabError, match="place bench-a: no resource named 'power'"):
        info.resource("power")


def test_a_raw_port_and_a_port_not_served_yet() -> None:
    raw = Resource("dut", "h/g/NetworkSerialPort/dut", "NetworkSerialPort",
                   {"host": "h", "port": 5, "protocol": "raw"}, True)
    assert raw.address() == "socket://h:5"
    idle = Resource("dut", "h/g/NetworkSerialPort/dut", "NetworkSerialPort",
                    {"host": "h", "port": None}, True)
    with pytest.raises(LabError, match="h/g/NetworkSerialPort/dut: not served yet"):
        idle.address()


def test_a_scope_on_the_lan_is_a_visa_resource() -> None:
    vxi11 = Resource("instrument", "h/g/PyVISADevice/instrument", "PyVISADevice",
                     {"type": "TCPIP", "url": "10.0.0.9"}, True)
    assert vxi11.address() == "TCPIP::10.0.0.9::INSTR"  # as labgrid's PyVISADriver opens it
    raw = Resource("instrument", "h/g/PyVISADevice/instrument", "PyVISADevice",
                   {"type": "TCPIP", "url": "10.0.0.9::5555::SOCKET"}, True)
    assert raw.address() == "TCPIP::10.0.0.9::5555::SOCKET"


@pytest.mark.slow
def test_a_simulated_scope_place_measures_through_its_visa_resource() -> None:
    """A place whose instrument is a LAN scope: the scope emulator's SCPI socket exported as
    a PyVISADevice, the DUT through ser2net; a point measured through the place."""
    fx = load_fixture(SIM_SCOPE)
    with SimLab(1, fixture=SIM_SCOPE) as lab, \
            place_slots(lab.coordinator, lab.places, [fx], None) as (slot,):
        assert slot.fixture.instrument.resource.startswith("TCPIP::127.0.0.1::")
        with slot.open() as bench:
            point = Point(op="sha256", board=bench.board, payload_bytes=1024)
            result = measure_point(bench, point, until=reps_done(2))
    assert result.ok, result.reason
    assert len(result.estimate) == 2
    for w in result.estimate:
        # The one flag a loaded machine may rightly raise here: a host DUT taken off its core
        # inside the window makes the window disagree with the firmware's own time.
        assert set(w.flags) <= {DURATION_MISMATCH}, w.flags
        # the scope bench's board: the fixture's power model, hash family, at 3.3 V
        assert w.energy_j / w.duration_s == pytest.approx(SCOPE_HASH_POWER_W, rel=0.05)


class _Lab:
    """A client of a lab whose places each wait, when acquired, until every place of the lab
    is being acquired (one at a time, the first would wait for ever: its barrier breaks after
    a minute instead); ``refuses`` names the places it will not give."""

    def __init__(self, places: int, refuses: frozenset[str] = frozenset()) -> None:
        self.together = threading.Barrier(places, timeout=60)
        self.refuses = refuses
        self.held: set[str] = set()
        self.released: list[str] = []

    def acquire(self, place: str) -> PlaceInfo:
        self.together.wait()
        if place in self.refuses:
            raise LabError(f"`labgrid-client -p {place} acquire` failed: held by someone else")
        self.held.add(place)
        return PlaceInfo(name=place, tags={}, acquired="me", resources={})

    def release(self, place: str) -> None:
        self.held.remove(place)
        self.released.append(place)


def test_the_places_are_acquired_at_once_and_released_on_the_way_out() -> None:
    lab = _Lab(3)
    with acquired(lab, ["a", "b", "c"]) as infos:  # type: ignore[arg-type]
        assert [i.name for i in infos] == ["a", "b", "c"] and lab.held == {"a", "b", "c"}
    assert not lab.held and sorted(lab.released) == ["a", "b", "c"]


def test_a_place_refused_releases_the_others_and_names_itself() -> None:
    lab = _Lab(3, refuses=frozenset({"b", "c"}))
    with (pytest.raises(LabError, match="-p b acquire` failed"),
          acquired(lab, ["a", "b", "c"])):  # type: ignore[arg-type]
        pass
    assert not lab.held and lab.released == ["a"]


def test_the_fixture_is_rewritten_for_the_place() -> None:
    info = PlaceInfo("p", {"board": "host"}, "me", {
        name: Resource(name, f"e/g/NetworkSerialPort/{name}", "NetworkSerialPort",
                       {"host": "h", "port": port}, True)
        for name, port in (("dut", 1), ("instrument", 2))})
    fx = fixture_for_place(load_fixture(SIM), info)
    assert (fx.dut.link, fx.dut.port, fx.dut.command) == (
        "serial", "rfc2217://h:1?ign_set_control", ())
    assert fx.instrument.port == "rfc2217://h:2?ign_set_control"
    assert fx.sim is None and fx.lab is None
    assert fx.measure == load_fixture(SIM).measure


def test_the_rfc2217_loop_unescapes_data_and_hands_on_telnet_commands() -> None:
    IAC, SB, SE, WILL = rfc2217.IAC, rfc2217.SB, rfc2217.SE, rfc2217.WILL
    port = Rfc2217Serial()  # not opened: the loop runs on a socket pair
    ours, theirs = socket.socketpair()
    port._socket, port.is_open, port._read_buffer = ours, True, queue.Queue()
    seen: list[tuple[bytes, ...]] = []
    port._telnet_negotiate_option = lambda cmd, opt: seen.append((cmd, opt))
    port._telnet_process_subnegotiation = lambda sub: seen.append((sub,))
    stream = (b"ab" + IAC + IAC + b"cd" + IAC + WILL + rfc2217.BINARY
              + IAC + SB + b"x" + IAC + IAC + b"y" + IAC + SE + b"ef")
    reader = threading.Thread(target=port._telnet_read_loop)
    reader.start()
    for cut in (3, 5, 9, 12, len(stream)):  # pieces that split an IAC pair and a command
        theirs.sendall(stream[:cut])
        stream = stream[cut:]
        if not stream:
            break
    theirs.close()
    reader.join(timeout=5)
    chunks = []
    while (chunk := port._read_buffer.get_nowait()) is not None:
        chunks.append(chunk)
    assert b"".join(chunks) == b"ab\xffcdef"
    assert seen == [(WILL, rfc2217.BINARY), (b"x\xffy",)]
    ours.close()


# -- a simulated lab of two places ----------------------------------------------------------

@pytest.fixture(scope="module")
def lab() -> Iterator[SimLab]:
    with SimLab(places=2, fixture=SIM) as sim:  # the host DUT's: lab-sim.toml's bench
        yield sim


def lab_fixture(tmp_path: Path, lab: SimLab, place: str,
                monkeypatch: pytest.MonkeyPatch) -> Path:
    """fixtures/lab-sim.toml naming ``place`` of ``lab`` (the coordinator from the
    environment, as labgrid's own tools take it)."""
    monkeypatch.setenv(COORDINATOR_ENV, lab.coordinator)
    return write_fixture(tmp_path / "lab.toml", "lab-sim.toml", **{"lab.place": place})


def status(lab: SimLab) -> dict[str, dict[str, object]]:
    out = CliRunner().invoke(app, ["lab", "status", "--lab", lab.coordinator, "--json",
                                   "--fixture", str(SIM)])
    assert out.exit_code == 0, out.output
    # stdout alone: a bench open in this process may log to stderr meanwhile (under load, a
    # stream loss its PPK2 driver warns of), and Click's output holds both
    return {p["name"]: p for p in json.loads(out.stdout)["places"]}


def test_a_lab_fixture_acquires_measures_and_releases(
        lab: SimLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fx = load_fixture(lab_fixture(tmp_path, lab, "bench-a", monkeypatch))
    with open_bench(fx) as bench:
        assert status(lab)["bench-a"]["holder"] is not None
        point = Point(op="sha256", board=bench.board, payload_bytes=1024)
        result = measure_point(bench, point, until=reps_done(2))
    assert result.ok, result.reason
    for w in result.windows:
        assert w.lost_samples == 0
        assert w.energy_j / (w.samples * 1e-5) == pytest.approx(HASH_POWER_W, rel=0.05)
    places = status(lab)
    assert places["bench-a"]["holder"] is None and places["bench-a"]["available"]
    assert places["bench-b"] == {**places["bench-b"], "board": "host", "host": "bench-b",
                                 "resources": ["dut", "instrument"]}


def test_a_lab_fixture_s_dut_alone_holds_the_place_meanwhile(
        lab: SimLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_dut(load_fixture(lab_fixture(tmp_path, lab, "bench-b", monkeypatch))) as dut:
        assert status(lab)["bench-b"]["holder"] is not None
        assert dut.hello()["board"] == "host"
        assert dut.transport.name.startswith("rfc2217://127.0.0.1:")
    assert status(lab)["bench-b"]["holder"] is None


def test_status_shows_the_newest_calibration_of_the_board(
        lab: SimLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CALIBRATION_DIR_ENV, str(tmp_path))
    fx = load_fixture(SIM)
    store = CalibrationStore(tmp_path)
    offset = {"offset_a": Measured(value=1e-6, u=1e-8, method="open input")}
    ppk2 = Identity(kind="ppk2", name="PPK2", serial="E1")
    for day, board, kind in ((1, "host", "ppk2"), (2, "host", "ppk2"), (3, "esp32", "ppk2"),
                             (4, "host", "scope")):
        who = ppk2 if kind == "ppk2" else Identity(kind="scope", name="DS1054Z")
        store.save(new_record(fx, who, {"board": board}, offset,
                              now=datetime(2026, 11, day, tzinfo=UTC)))
    cal = status(lab)["bench-a"]["calibration"]
    assert cal == {"id": "20261102T000000Z-ppk2-offset_a",
                   "created_utc": "2026-11-02T00:00:00+00:00",
                   "instrument": "ppk2 'PPK2' serial E1", "quantities": ["offset_a"]}


def test_status_table(lab: SimLab) -> None:
    out = CliRunner().invoke(app, ["lab", "status", "--lab", lab.coordinator])
    assert out.exit_code == 0, out.output
    assert "bench-a" in out.output and "bench-b" in out.output and "free" in out.output


def test_bad_input_is_one_line(lab: SimLab) -> None:
    fx = load_fixture(SIM)
    with (pytest.raises(LabError, match="`labgrid-client -p nowhere acquire` failed") as exc,
          place_slots(lab.coordinator, ["nowhere"], [fx])):
        pass
    assert "\n" not in str(exc.value)
    with pytest.raises(LabError, match="did not finish|Could not connect") as exc:
        LabClient("127.0.0.1:1", timeout_s=20).places()
    client = LabClient(lab.coordinator)
    client.run("create", place="no-dut")
    client.run("add-match", "bench-b/bench/*/instrument", place="no-dut")
    client.run("set-tags", "board=host", place="no-dut")
    try:
        with (pytest.raises(LabError, match="place no-dut: no resource named 'dut'"),
              place_slots(lab.coordinator, ["no-dut"], [fx])):
            pass
        assert client.show("no-dut").acquired is None  # released on the way out
    finally:
        client.run("delete", place="no-dut")


def test_slots_and_a_killed_bench_host(lab: SimLab) -> None:
    fx = load_fixture(SIM)
    with place_slots(lab.coordinator, lab.places, [fx]) as slots:
        assert [(s.name, s.board, s.host) for s in slots] == [
            ("bench-a", "host", "bench-a"), ("bench-b", "host", "bench-b")]
        assert all(s.alive() for s in slots)
        with slots[1].open() as bench:
            assert bench.hello["board"] == "host"
            lab.kill("bench-b")
            # the broken connection ends the request ("read failed"), not its timeout
            # ("did not answer ... within 5 s")
            with pytest.raises(DutError, match="DUT on rfc2217://127.0.0.1:.*: read failed"):
                bench.dut.hello()
        assert slots[0].alive() and not slots[1].alive()
    assert status(lab)["bench-a"]["holder"] is None


@pytest.mark.slow
def test_rig_lab_sim_serves_until_interrupted_and_leaves_no_process() -> None:
    with rig_lab_sim(["bench-a"]) as (rig, coordinator):
        assert LabClient(coordinator).places() == ["bench-a"]
        procs = [psutil.Process(rig.pid), *psutil.Process(rig.pid).children(recursive=True)]
        # rig; coordinator; the bench host: supervisor, emulator, DUT, exporter
        assert len(procs) >= 6
        rig.send_signal(signal.SIGINT)
        assert rig.wait() == 0
    alive = [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert alive == []
