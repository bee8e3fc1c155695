"""The ``[instrument]`` table of a PPK2 fixture: :class:`Ppk2Config` (imports only pydantic)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from energyrig.config import Strict, between


class Ppk2Config(Strict):
    """``kind = "ppk2"``: a Nordic PPK2, as the fixture gives it and the driver uses it.

    Attributes
    ----------
    port:
        Serial port (``/dev/ttyACM0``); ``None`` finds the one PPK2 on USB (on the simulated
        bench: the emulator's pty).
    mode:
        ``"source"``: the PPK2 powers the DUT at ``supply_v`` (source meter);
        ``"ampere"``: the DUT has its own supply and the PPK2 is in series (ampere meter).
    supply_v:
        Source mode: the output voltage. Ampere mode: the external supply voltage (the
        capture's voltage and the calibration's supply term). 0.8..5.0 V.
    dut_power:
        Switch the PPK2's DUT power output on when the acquisition starts (off at stop).
    trigger_bit:
        Logic input that carries the trigger (0 = D0).
    min_pulse_s:
        A trigger level must last this long to start or end the window a collect waits for,
        s (default 3 samples: a corrupted byte flips one sample).
    history_s:
        Seconds of samples kept while not armed, the most ``arm(pre_s=...)`` can reach back.
    buffer_s:
        Capacity of the buffer while armed, s of samples (about 0.9 MB per second).
    metadata_timeout_s:
        How long to wait for the calibration metadata, s.
    """

    kind: Literal["ppk2"] = "ppk2"
    port: str | None = None
    mode: Literal["source", "ampere"] = "source"
    supply_v: float = 3.0
    dut_power: bool = True
    trigger_bit: int = Field(0, ge=0, le=7)
    min_pulse_s: float = Field(30e-6, ge=0)
    history_s: float = Field(1.0, gt=0)
    buffer_s: float = Field(120.0, gt=0)
    metadata_timeout_s: float = Field(5.0, gt=0)

    @field_validator("supply_v")
    @classmethod
    def _supply(cls, v: float) -> float:
        return between(v, 0.8, 5.0, "V")

    @property
    def supply_mv(self) -> int:
        """``supply_v`` in the unit of the PPK2's set-voltage command, mV."""
        return round(self.supply_v * 1000)
