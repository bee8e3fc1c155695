"""The ``[instrument]`` table of an Otii fixture: :class:`OtiiConfig` (imports only pydantic)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from energyrig.config import Strict
from energyrig.instruments.otii.port import DEFAULT_PORT


class OtiiConfig(Strict):
    """``kind = "otii"``: a Qoitech Otii Arc or Ace driven through the Otii application's TCP
    server (V, A, s, Hz).

    Attributes
    ----------
    server:
        ``host:port`` of the Otii application's TCP server (Otii 3: *Settings → TCP server*,
        or ``otiicli``); ``None`` only on the simulated bench (the emulator's address).
    device:
        The device's name as Otii lists it (``"Arc"``, ``"Ace #2"``); ``None``: the only
        Arc or Ace attached.
    supply_v:
        The main output voltage the Otii supplies the board with, V.
    max_current_a:
        The main output's current limit (overcurrent protection), A.
    sample_rate_hz:
        Sample rate of the main current and voltage channels (``mc``, ``mv``), Sa/s.
    trigger_gpi:
        The digital input (GPI1 or GPI2 of the expansion port) the trigger GPIO drives.
    licensing:
        ``"auto"``: the client logs in (``credentials.json`` in the working directory or the
        ``OTII_USERNAME``/``OTII_PASSWORD`` environment) and reserves an Automation licence,
        returning it when done; ``"manual"``: the Otii application has done both.
    connect_timeout_s:
        How long to keep trying to reach the server, s.
    """

    kind: Literal["otii"] = "otii"
    server: str | None = f"127.0.0.1:{DEFAULT_PORT}"
    device: str | None = None
    supply_v: float = Field(3.3, ge=0.5, le=5.0)
    max_current_a: float = Field(0.5, gt=0, le=5.0)
    sample_rate_hz: int = Field(50_000, gt=0)
    trigger_gpi: Literal[1, 2] = 1
    licensing: Literal["auto", "manual"] = "auto"
    connect_timeout_s: float = Field(10.0, ge=0)

    @field_validator("server")
    @classmethod
    def _server(cls, v: str | None) -> str | None:
        if v is not None:
            split_server(v)
        return v

    @property
    def gpi_channel(self) -> str:
        """The client's name of the trigger input's channel (``"i1"``, ``"i2"``)."""
        return f"i{self.trigger_gpi}"


def split_server(address: str) -> tuple[str, int]:
    """``"host:port"`` (or ``"host"``: port 1905) -> ``(host, port)``.

    Raises
    ------
    ValueError
        The port is not a number in 1..65535.
    """
    host, sep, port = address.rpartition(":")
    if not sep:
        return address, DEFAULT_PORT
    if not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise ValueError(f"server {address!r}: give it as host:port (port 1..65535), "
                         f"e.g. 127.0.0.1:{DEFAULT_PORT}")
    return host, int(port)
