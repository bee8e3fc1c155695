"""An instrument family is one folder, whole (issue 21, item 3): its config, its driver and
its emulator live in ``instruments/<kind>/``; the fixture's config union is built from
:data:`~energyrig.instruments.registry.FAMILIES`; a lab place rewrites each family's address
through the field the family declares; shared transports (VISA, the streaming base) sit
beside the families, and nothing outside a family folder and the registry imports one."""
from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import pytest
from support.layers import nodes

import energyrig
from energyrig.errors import LabError
from energyrig.fixtures.schema import DutConfig, Fixture
from energyrig.instruments.joulescope.device import Joulescope
from energyrig.instruments.ppk2.driver import Ppk2
from energyrig.instruments.registry import FAMILIES, InstrumentConfig
from energyrig.instruments.streaming import StreamAcquisition
from energyrig.lab.place import PlaceInfo, Resource, fixture_for_place

SRC = Path(energyrig.__file__).resolve().parents[1]
INSTRUMENTS = SRC / "energyrig" / "instruments"
#: What a place's instrument resource of each labgrid class looks like, and its address.
RESOURCES = {
    "NetworkSerialPort": ({"host": "h", "port": 2}, "rfc2217://h:2?ign_set_control"),
    "PyVISADevice": ({"type": "TCPIP", "url": "10.0.0.9"}, "TCPIP::10.0.0.9::INSTR"),
}
#: The least each family's table needs beyond its kind.
NEEDS: dict[str, dict[str, object]] = {"sigrok": {"driver": "demo"}}
#: An address of each family, as its ``open`` takes it (none is reached: nothing starts).
ADDRESSES = {"ppk2": "/dev/ttyACM0", "scope": "TCPIP::192.0.2.1::INSTR", "sigrok": "1.6",
             "joulescope": "u/js220/000001", "lpm01a": "/dev/ttyACM0",
             "otii": "192.0.2.1:1905"}


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports (``from a import b``: ``a``)."""
    found: set[str] = set()
    for node in nodes(path):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def _fixture(kind: str) -> Fixture:
    instrument = FAMILIES[kind].config.model_validate({"kind": kind, **NEEDS.get(kind, {})})
    return Fixture(dut=DutConfig(link="stdio", command=("bin/dut",)), instrument=instrument)


def _place(cls: str) -> PlaceInfo:
    params, _ = RESOURCES[cls]
    return PlaceInfo("p", {"board": "host"}, "me", {
        "dut": Resource("dut", "e/g/NetworkSerialPort/dut", "NetworkSerialPort",
                        {"host": "h", "port": 1}, True),
        "instrument": Resource("instrument", f"e/g/{cls}/instrument", cls, params, True)})


@pytest.mark.parametrize("kind", list(FAMILIES))
def test_each_family_folder_holds_its_config_driver_and_emulator(kind: str) -> None:
    assert set(ADDRESSES) == set(FAMILIES)
    fam = FAMILIES[kind]
    package = f"energyrig.instruments.{kind}"
    assert fam.config.__module__ == f"{package}.config"
    config = fam.config.model_validate({"kind": kind, **NEEDS.get(kind, {})})
    driver = fam.open(config, ADDRESSES[kind])
    assert type(driver).__module__.startswith(f"{package}.")
    if fam.emulator is not None:
        assert fam.emulator == f"{package}.emulator"
        assert (INSTRUMENTS / kind / "emulator.py").is_file()


def test_the_shared_sim_folder_holds_no_emulator() -> None:
    emulators = {f.emulator for f in FAMILIES.values() if f.emulator is not None}
    assert emulators  # the simulated bench has at least one
    shared = {f"energyrig.instruments.sim.{p.stem}" for p in (INSTRUMENTS / "sim").glob("*.py")}
    assert not emulators & shared
    assert not any(m.startswith("energyrig.instruments.sim.") for m in emulators)


def test_the_config_union_is_built_from_the_family_records() -> None:
    union = typing.get_args(InstrumentConfig)[0]
    assert typing.get_args(union) == tuple(f.config for f in FAMILIES.values())
    # the registry names no config model by hand: it imports the family records only
    imported = _imports(INSTRUMENTS / "registry.py")
    families = {m for m in imported if m.startswith("energyrig.instruments.")
                and m.count(".") == 3}
    assert families == {f"energyrig.instruments.{k}.family" for k in FAMILIES}


@pytest.mark.parametrize("kind", list(FAMILIES))
def test_a_place_rewrites_each_familys_address_through_its_declared_field(kind: str) -> None:
    fam = FAMILIES[kind]
    fx = _fixture(kind)
    for cls, (_, address) in RESOURCES.items():
        if cls == fam.labgrid_resource:
            placed = fixture_for_place(fx, _place(cls))
            assert getattr(placed.instrument, fam.address_field) == address
            assert placed.instrument.kind == kind and placed.sim is None
        else:
            with pytest.raises(LabError, match=f"its instrument is a {cls}, which a {kind} "):
                fixture_for_place(fx, _place(cls))


def test_the_lab_follows_a_familys_declaration_not_its_kind(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A family that declared a serial place resource and an address field other than the
    PPK2's ``port`` (sigrok's ``conn``) is reached through it: nothing in the lab knows which
    family has which field."""
    served = dataclasses.replace(FAMILIES["sigrok"], labgrid_resource="NetworkSerialPort")
    monkeypatch.setitem(typing.cast(dict, FAMILIES), "sigrok", served)
    placed = fixture_for_place(_fixture("sigrok"), _place("NetworkSerialPort"))
    assert placed.instrument.conn == "rfc2217://h:2?ign_set_control"


def test_a_family_declares_an_address_field_its_config_has() -> None:
    """Checked when the family's model is first imported (``Family.config``), which every
    fixture's table does (:data:`InstrumentConfig`)."""
    with pytest.raises(ValueError, match="address_field 'port' is not a field of SigrokConfig"):
        _ = dataclasses.replace(FAMILIES["sigrok"], address_field="port").config


def test_nothing_outside_a_family_folder_and_the_registry_imports_a_family() -> None:
    """The rig asks the registry and the instrument's declared capabilities (a streaming
    instrument is a :class:`StreamAcquisition`), never a family's module."""
    prefixes = tuple(f"energyrig.instruments.{k}" for k in FAMILIES)
    wrong = {}
    for path in SRC.joinpath("energyrig").rglob("*.py"):
        rel = path.relative_to(INSTRUMENTS).parts if path.is_relative_to(INSTRUMENTS) else ()
        if rel and (rel[0] in FAMILIES or rel == ("registry.py",)):
            continue
        hits = sorted(m for m in _imports(path) if m.startswith(prefixes))
        if hits:
            wrong[str(path.relative_to(SRC))] = hits
    assert not wrong


def test_the_streaming_families_share_one_collect_loop() -> None:
    for cls in (Ppk2, Joulescope):
        assert issubclass(cls, StreamAcquisition)
        for name in ("_mark", "_collect_window", "wait_received", "_wait_stream"):
            assert getattr(cls, name) is getattr(StreamAcquisition, name), (cls, name)


def test_only_the_shared_visa_module_opens_a_visa_resource() -> None:
    opening = sorted(str(p.relative_to(INSTRUMENTS)) for p in INSTRUMENTS.rglob("*.py")
                     if "open_resource(" in p.read_text(encoding="utf-8"))
    assert opening == ["visa.py"]


def test_no_import_circle_among_the_instruments_type_checking_ones_included() -> None:
    """``base.py`` declares what an acquisition reports (``Limits``, ``InstrumentInfo``): the
    family record names ``base.py`` for typing, and nothing of ``base.py`` names the record."""
    from support.layers import GRAPH

    graph = {m: {t for t in GRAPH[m] if t.startswith("energyrig.instruments")}
             for m in GRAPH if m.startswith("energyrig.instruments")}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            assert nxt not in path, f"import circle: {' -> '.join([*path, nxt])}"
            if nxt not in done:
                visit(nxt, [*path, nxt])
        done.add(node)

    for module in sorted(graph):
        visit(module, [module])
