"""The client side of a labgrid lab: acquire a place, read its resources, rewrite a fixture
for it, release it.

A *place* (labgrid's unit of exclusive use) groups the resources one bench host exports:

``dut``
    a ``NetworkSerialPort`` (a board's UART shared by ``ser2net``): the DUT link;
``instrument``
    a ``NetworkSerialPort`` (a PPK2's port) or a ``PyVISADevice`` (a scope on the LAN,
    ``type``/``url`` give the VISA resource ``TCPIP::10.0.0.5::INSTR``);

and carries the tag ``board=NAME``: a point whose board is ``NAME`` may run there.

Everything goes through ``labgrid-client`` (its documented command line:
https://labgrid.readthedocs.io/en/latest/man/client.html) with a timeout, so nothing here
holds a gRPC session or an event loop: ``places``, ``-p P show`` (the place, its tags, who
holds it and each matching or acquired resource as a Python literal), ``-p P acquire`` and
``-p P release``. Every failure is a :class:`~energyrig.errors.LabError` of one line.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from energyrig.errors import LabError

if TYPE_CHECKING:
    from energyrig.fixtures.schema import Fixture

log = logging.getLogger(__name__)

#: The environment variable labgrid itself reads for the coordinator's ``HOST:PORT``.
COORDINATOR_ENV = "LG_COORDINATOR"
#: The names of a place's resources the rig uses.
DUT = "dut"
INSTRUMENT = "instrument"
#: Longest a ``labgrid-client`` call may take, s.
CLIENT_TIMEOUT_S = 30.0
#: Longest to wait after acquiring for the exporter to start serving the ports, s.
SERVE_TIMEOUT_S = 10.0

_RESOURCE = re.compile(r"^(Matching|Acquired) resource '([^']+)' \(([^)]+)\):$")
#: A resource line of ``labgrid-client -v resources``:
#: ``    Resource 'dut' (bench-a/bench/NetworkSerialPort[/dut]):``.
_EXPORTED = re.compile(r"^ +Resource '([^']+)' \(([^/]+)/([^/]+)/")


@dataclass(frozen=True)
class Resource:
    """One resource of a place as the coordinator describes it.

    Attributes
    ----------
    name:
        Its name in the place (``dut``, ``instrument``).
    path:
        ``exporter/group/class/name``.
    cls:
        The labgrid resource class (``NetworkSerialPort``, ``PyVISADevice``).
    params:
        Its parameters (``host``, ``port``, ``speed``, ``protocol``; ``type``, ``url``).
    avail:
        Whether the exporter reports it present.
    """

    name: str
    path: str
    cls: str
    params: Mapping[str, Any]
    avail: bool

    @property
    def exporter(self) -> str:
        return self.path.split("/", 1)[0]

    @property
    def serving(self) -> bool:
        """A network serial port has its TCP port once the place is acquired."""
        return self.cls != "NetworkSerialPort" or self.params.get("port") is not None

    def address(self) -> str:
        """What pyserial or pyvisa opens: ``rfc2217://host:port?ign_set_control`` (labgrid's
        own serial driver's URL; ``ign_set_control``: ser2net on a port without modem lines
        does not acknowledge them), ``socket://host:port`` (protocol ``raw``) or a VISA
        resource ``TYPE::url::INSTR`` (``TYPE::url`` for a ``url`` ending in ``::SOCKET``)."""
        p = self.params
        if self.cls == "NetworkSerialPort":
            if p.get("port") is None:
                raise LabError(f"resource {self.path}: not served yet; acquire the place first")
            protocol = p.get("protocol", "rfc2217")
            if protocol == "rfc2217":
                return f"rfc2217://{p['host']}:{p['port']}?ign_set_control"
            if protocol == "raw":
                return f"socket://{p['host']}:{p['port']}"
            raise LabError(f"resource {self.path}: unknown serial protocol {protocol!r}")
        if self.cls == "PyVISADevice":
            # labgrid's own PyVISADriver opens TYPE::url::INSTR (VXI-11); a raw SCPI socket
            # (many LAN scopes' port 5555) is declared with url = "IP::PORT::SOCKET"
            url = str(p["url"])
            return f"{p['type']}::{url}" + ("" if url.endswith("::SOCKET") else "::INSTR")
        raise LabError(f"resource {self.path}: a {self.cls} is neither a NetworkSerialPort nor "
                       "a PyVISADevice; the rig cannot open it")


@dataclass(frozen=True)
class PlaceInfo:
    """A place as ``labgrid-client show`` describes it.

    Attributes
    ----------
    name:
        The place's name.
    tags:
        Its tags (``board``).
    acquired:
        Who holds it (``host/user``), or ``None``.
    resources:
        Its matching (free place) or acquired (held place) resources by name.
    orphaned:
        Names of acquired resources whose exporter is gone.
    """

    name: str
    tags: Mapping[str, str] = field(default_factory=dict)
    acquired: str | None = None
    resources: Mapping[str, Resource] = field(default_factory=dict)
    orphaned: tuple[str, ...] = ()

    @property
    def board(self) -> str:
        return self.tags.get("board", "")

    @property
    def host(self) -> str:
        """The bench host serving the place's DUT port, by its exporter's name (labgrid
        names an exporter after its host: ``labgrid-exporter --name``, by default the
        hostname; several exporters on one machine, as in the simulated lab, each have their
        own). ``""``: no ``dut`` resource."""
        dut = self.resources.get(DUT)
        return "" if dut is None else dut.exporter

    def resource(self, name: str) -> Resource:
        try:
            return self.resources[name]
        except KeyError:
            raise LabError(f"place {self.name}: no resource named {name!r} (it has "
                           f"{', '.join(sorted(self.resources)) or 'none'}); add a match "
                           f"for the exporter's {name!r} resource (labgrid-client -p "
                           f"{self.name} add-match EXPORTER/GROUP/*/{name})") from None

    @property
    def available(self) -> bool:
        """Both resources the rig needs are present and none of the place's is orphaned."""
        return not self.orphaned and all(
            n in self.resources and self.resources[n].avail for n in (DUT, INSTRUMENT))


def parse_show(name: str, text: str) -> PlaceInfo:
    """The :class:`PlaceInfo` of ``labgrid-client -p NAME show``'s output ``text``."""
    tags: dict[str, str] = {}
    acquired: str | None = None
    resources: dict[str, Resource] = {}
    orphaned: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("  tags: "):
            tags = dict(t.split("=", 1) for t in line[8:].split(", ") if "=" in t)
        elif line.startswith("  acquired: "):
            acquired = None if line[12:] == "None" else line[12:]
        elif line.startswith("Orphaned resource '"):
            orphaned.append(line.split("'")[1])
        elif m := _RESOURCE.match(line):
            body = []
            while i < len(lines) and lines[i].startswith("  "):
                body.append(lines[i])
                i += 1
            data = ast.literal_eval("\n".join(body).strip())
            params = dict(data.get("params", {}))
            params.update(params.pop("extra", None) or {})
            resources[m[2]] = Resource(name=m[2], path=m[3], cls=str(data.get("cls", "")),
                                       params=params, avail=bool(data.get("avail")))
    return PlaceInfo(name=name, tags=tags, acquired=acquired, resources=resources,
                     orphaned=tuple(orphaned))


def client_program() -> str:
    """``labgrid-client`` of this environment (next to the interpreter), else on PATH."""
    beside = Path(sys.executable).with_name("labgrid-client")
    found = str(beside) if beside.exists() else shutil.which("labgrid-client")
    if found is None:
        raise LabError("labgrid-client not found; install the rig with its lab extra "
                       "(pip install -e '.[lab]', or `make deps`)")
    return found


class LabClient:
    """``labgrid-client`` against one coordinator.

    Parameters
    ----------
    coordinator:
        ``HOST:PORT`` of the coordinator; ``None``: ``$LG_COORDINATOR``.
    timeout_s:
        Longest one call may take, s.
    """

    def __init__(self, coordinator: str | None = None, timeout_s: float = CLIENT_TIMEOUT_S
                 ) -> None:
        coordinator = coordinator or os.environ.get(COORDINATOR_ENV)
        if not coordinator:
            raise LabError(f"no labgrid coordinator: give --lab HOST:PORT, [lab] coordinator "
                           f"in the fixture, or set {COORDINATOR_ENV}")
        self.coordinator = coordinator
        self.timeout_s = timeout_s
        self._program = client_program()

    def run(self, *args: str, place: str | None = None) -> str:
        """Run ``labgrid-client -x COORDINATOR [-p place] ARGS``; its standard output."""
        argv = [self._program, "-x", self.coordinator]
        if place is not None:
            argv += ["-p", place]
        argv += args
        what = " ".join(argv[3:])
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout_s,
                                  env={**os.environ, "LG_PLACE": ""}, check=False)
        except subprocess.TimeoutExpired:
            raise LabError(f"lab {self.coordinator}: `labgrid-client {what}` did not finish "
                           f"within {self.timeout_s:g} s; is the coordinator running?") from None
        if done.returncode != 0:
            err = [ln for ln in done.stderr.splitlines() if ln.strip()]
            raise LabError(f"lab {self.coordinator}: `labgrid-client {what}` failed: "
                           f"{_reason(err[-1] if err else f'exit code {done.returncode}')}")
        return done.stdout

    def places(self) -> list[str]:
        """The names of the coordinator's places."""
        return [ln.split()[0] for ln in self.run("places").splitlines() if ln.strip()]

    def show(self, place: str) -> PlaceInfo:
        return parse_show(place, self.run("show", place=place))

    def available_resources(self) -> set[tuple[str, str, str]]:
        """Every resource an exporter reports present, as ``(exporter, group, name)``: the
        whole lab in one call (``-v resources`` lists only the available ones)."""
        return {(m[2], m[3], m[1]) for ln in self.run("-v", "resources").splitlines()
                if (m := _EXPORTED.match(ln))}

    def acquire(self, place: str) -> PlaceInfo:
        """Acquire ``place`` and wait until its network ports are served; its description."""
        self.run("acquire", place=place)
        deadline = time.monotonic() + SERVE_TIMEOUT_S
        while True:
            info = self.show(place)
            if all(r.serving for r in info.resources.values()) or time.monotonic() > deadline:
                return info
            time.sleep(0.1)

    def release(self, place: str) -> None:
        self.run("release", place=place)


def _reason(line: str) -> str:
    """labgrid-client's last error line, without its program prefix."""
    for prefix in ("labgrid-client: ", "error: ", "Error: "):
        line = line.removeprefix(prefix)
    return line.strip()


@contextlib.contextmanager
def acquired(client: LabClient, places: Sequence[str]) -> Iterator[list[PlaceInfo]]:
    """Every place of ``places`` held for the ``with`` block, their descriptions in that
    order. They are acquired at once (a ``labgrid-client`` each, a second or so of its
    start-up apiece) and released at once on the way out; when one cannot be acquired, the
    first such error (in ``places``' order) is raised once every place that was is released.
    """
    pool = ThreadPoolExecutor(max_workers=max(1, len(places)), thread_name_prefix="acquire")
    futures = [pool.submit(client.acquire, place) for place in places]
    try:
        yield [f.result() for f in futures]
    finally:
        pool.shutdown()  # every acquire ended, also after an interrupt while waiting
        held = [p for p, f in zip(places, futures) if not f.cancelled() and not f.exception()]
        with ThreadPoolExecutor(max_workers=max(1, len(held)),
                                thread_name_prefix="release") as releasing:
            errors = list(releasing.map(functools.partial(_release, client), held))
        for exc in filter(None, errors):
            log.warning("%s", exc)  # the coordinator went away: nothing is left to release


def _release(client: LabClient, place: str) -> LabError | None:
    """Release ``place``; the error if it could not be."""
    try:
        client.release(place)
    except LabError as exc:
        return exc
    return None


def fixture_for_place(fixture: Fixture, place: PlaceInfo) -> Fixture:
    """``fixture`` rewritten to reach its bench through ``place``: the DUT over the serial
    link at the place's ``dut`` port, the instrument at its ``instrument`` resource (written
    to the field its family declares, ``Family.address_field``, when the resource is of the
    class the family declares, ``Family.labgrid_resource``); ``[sim]`` and ``[lab]`` dropped
    (the place's exporter host runs whatever simulates the bench)."""
    instrument = place.resource(INSTRUMENT)
    family = fixture.family
    if instrument.cls != family.labgrid_resource:
        raise LabError(f"place {place.name}: its instrument is a {instrument.cls}, which a "
                       f"{fixture.instrument.kind} fixture ({fixture.path}) cannot use")
    dut = fixture.dut.model_copy(update={"link": "serial", "command": (),
                                         "port": place.resource(DUT).address()})
    return fixture.model_copy(update={
        "dut": dut, "sim": None, "lab": None,
        "instrument": fixture.instrument.model_copy(
            update={family.address_field: instrument.address()})})


@contextlib.contextmanager
def held_place(fixture: Fixture) -> Iterator[Fixture]:
    """The place ``fixture``'s ``[lab]`` names, held for the ``with`` block: yields the
    fixture rewritten for it (:func:`fixture_for_place`) and releases the place after."""
    lab = fixture.lab
    assert lab is not None, "held_place needs a fixture with [lab]"
    with acquired(LabClient(lab.coordinator), [lab.place]) as (info,):
        yield fixture_for_place(fixture, info)
