"""The Otii family record (:data:`FAMILY`): Qoitech Otii Arc and Ace over the Otii
application's TCP server.

Cheap to import: the client (``otii_tcp_client``) and the driver are imported when an Otii is
opened or searched for.
"""
from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from energyrig.instruments.family import Family, FileKind, Found
from energyrig.instruments.otii.port import DEFAULT_PORT

if TYPE_CHECKING:
    from energyrig.instruments.base import Acquisition
    from energyrig.instruments.otii.config import OtiiConfig

#: How long ``rig instruments`` waits for a local Otii server to accept, s.
PROBE_TIMEOUT_S = 0.5


def open_otii(config: OtiiConfig, server: str | None) -> Acquisition:
    """The Otii at ``server`` (``host:port``; ``None``: the fixture's)."""
    from energyrig.instruments.otii.driver import Otii

    return Otii(config, server)


def scan() -> list[Found]:
    """The Arcs and Aces the Otii application on this host lists (none when no Otii TCP server
    listens on port 1905)."""
    from energyrig.instruments.otii.config import OtiiConfig
    from energyrig.instruments.otii.driver import list_devices

    address = f"127.0.0.1:{DEFAULT_PORT}"
    try:
        socket.create_connection(("127.0.0.1", DEFAULT_PORT), PROBE_TIMEOUT_S).close()
    except OSError:
        return []
    return [Found("otii", address, f"{kind} {name}",
                  f'kind = "otii"\nserver = "{address}"\ndevice = "{name}"')
            for kind, name in list_devices(OtiiConfig(server=address))]


def emulator_args(config: OtiiConfig) -> list[str]:
    """The emulator plays the device type the fixture's ``device`` names (``"Arc"``; else an
    Ace): its sample rates and its current's step are that type's."""
    return ["--device-type", "Arc"] if config.device == "Arc" else []


def is_otii3(head: bytes) -> bool:
    """Whether ``head`` starts like an ``.otii3`` stub (a JSON object; the project is the
    ``data/`` folder beside it)."""
    return head.lstrip()[:1] == b"{"


#: The first line of every file of Otii's CSV export.
CSV_HEADER = b'"Timestamp","Value"'


def is_otii_csv(head: bytes) -> bool:
    """Whether ``head`` starts with the header line of Otii's CSV export."""
    return head.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].rstrip(b"\r") == CSV_HEADER


#: Otii's CSV export, one file per channel (the reader: :mod:`.csvexport`).
OTII_CSV = FileKind("Otii CSV export", (".csv",), is_otii_csv,
                    "energyrig.instruments.otii.csvexport:open_otii_csv")
#: Otii 3's project files (the reader: :mod:`.projectfile`).
OTII3 = FileKind("Otii 3 project", (".otii3",), is_otii3,
                 "energyrig.instruments.otii.projectfile:open_otii3")

FAMILY = Family(
    kind="otii",
    config_model="energyrig.instruments.otii.config:OtiiConfig",
    open=open_otii,
    scan=scan,
    address_field="server",
    emulator="energyrig.instruments.otii.emulator",
    emulator_args=emulator_args,
    file_kinds=(OTII3, OTII_CSV),
)
