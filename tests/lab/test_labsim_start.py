"""A simulated lab comes up without a ``labgrid-client`` process per place and step.

Each ``labgrid-client`` call is a Python process of its own (~0.9 s of CPU, most of it
labgrid's imports), and a lab start used to make four per place, one after the other
(``create``, ``add-match``, ``set-tags``, then ``show`` until its resources were there): a
3-place lab took 31-34 s to start at load 16, 12-13 s without them (docs/performance.md,
"The slow tier's waits"). Its places are now in the coordinator's state file before it
starts, and one ``-v resources`` call looks at every bench's resources at once.
"""
from __future__ import annotations

import pytest

from energyrig.lab.place import LabClient
from energyrig.rig.labsim import SimLab

RESOURCES = """\
Exporter 'bench-a':
  Group 'bench' (bench-a/bench/*):
    Resource 'dut' (bench-a/bench/NetworkSerialPort[/dut]):
      {'acquired': None,
       'avail': True,
       'cls': 'NetworkSerialPort',
       'params': {'host': '127.0.0.1', 'port': None, 'speed': 115200}}
Exporter 'bench-b':
  Group 'scope' (bench-b/scope/*):
    Resource 'instrument' (bench-b/scope/PyVISADevice[/instrument]):
      {'avail': True, 'cls': 'PyVISADevice', 'params': {'type': 'TCPIP', 'url': 'h'}}
"""


def test_the_lab_s_resources_are_read_in_one_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, ...]] = []

    def run(self: LabClient, *args: str, place: str | None = None) -> str:
        calls.append(args)
        return RESOURCES

    monkeypatch.setattr(LabClient, "run", run)
    assert LabClient("127.0.0.1:1").available_resources() == {
        ("bench-a", "bench", "dut"), ("bench-b", "scope", "instrument")}
    assert calls == [("-v", "resources")]


@pytest.mark.slow
def test_a_lab_s_places_exist_once_it_is_up_without_a_client_call_per_place(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, ...]] = []
    real = LabClient.run

    def run(self: LabClient, *args: str, place: str | None = None) -> str:
        calls.append(args)
        return real(self, *args, place=place)

    monkeypatch.setattr(LabClient, "run", run)
    with SimLab(2) as lab:
        starting = list(calls)
        client = LabClient(lab.coordinator)
        assert client.places() == lab.places == ["bench-a", "bench-b"]
        for name in lab.places:
            info = client.show(name)
            # the default fixture's host DUT; the place matches its own exporter's bench
            assert (info.board, info.host, info.available) == ("host", name, True)
            assert sorted(info.resources) == ["dut", "instrument"]
    # Coming up, the lab only looked at its resources, every bench's in each look.
    assert starting and set(starting) == {("-v", "resources")}
