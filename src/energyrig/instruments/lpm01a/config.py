"""The ``[instrument]`` table of an STM32 Power Shield fixture: :class:`Lpm01aConfig` (imports
only pydantic)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from energyrig.config import Strict, between

#: The sampling frequencies ``freq`` accepts, Hz (UM2243; the board's ``help``).
SAMPLE_RATES_HZ = (100_000, 50_000, 20_000, 10_000, 5_000, 2_000, 1_000, 500, 200, 100, 50,
                   20, 10, 5, 2, 1)
#: The fastest ``ascii_dec`` stream without a time limit, Hz (the board's ``help``: the table
#: of the longest acquisition for each format and frequency at 3686400 baud).
ASCII_MAX_RATE_HZ = 5_000


class Lpm01aConfig(Strict):
    """``kind = "lpm01a"``: an STM32 Power Shield (X-NUCLEO-LPM01A) on its USB virtual COM port.

    Attributes
    ----------
    port:
        Serial port (``/dev/ttyACM0``, a pyserial URL; on the simulated bench: the emulator's
        pty). The board has no USB serial number of its own to find it by: name the port.
    supply_v:
        The supply the shield gives the board (``volt``), 1.8..3.3 V.
    sample_rate_hz:
        Sampling frequency (``freq``), one of :data:`SAMPLE_RATES_HZ`, Hz.
    format:
        The data stream's format (``format``): ``bin_hexa`` (2 bytes a sample, up to 100 kHz)
        or ``ascii_dec`` (a text line a sample, at most :data:`ASCII_MAX_RATE_HZ`).
    dut_power:
        Switch the supply on when the acquisition starts (``pwr on``) and off at stop.
    min_pulse_s:
        A D7 level must last this long to start or end the window a collect waits for, s.
    history_s:
        Seconds of samples kept while not armed, the most ``arm(pre_s=...)`` can reach back.
    buffer_s:
        Capacity of the buffer while armed, s of samples.
    reply_timeout_s:
        How long the board may take to answer a command, s.
    """

    kind: Literal["lpm01a"] = "lpm01a"
    port: str | None = None
    supply_v: float = 3.3
    sample_rate_hz: int = 100_000
    format: Literal["bin_hexa", "ascii_dec"] = "bin_hexa"
    dut_power: bool = True
    min_pulse_s: float = Field(30e-6, ge=0)
    history_s: float = Field(1.0, gt=0)
    buffer_s: float = Field(120.0, gt=0)
    reply_timeout_s: float = Field(5.0, gt=0)

    @field_validator("supply_v")
    @classmethod
    def _supply(cls, v: float) -> float:
        return between(v, 1.8, 3.3, "V (the shield's supply range)")

    @field_validator("sample_rate_hz")
    @classmethod
    def _rate(cls, v: int) -> int:
        if v not in SAMPLE_RATES_HZ:
            raise ValueError(f"must be one of {', '.join(map(str, SAMPLE_RATES_HZ))} Hz "
                             "(the shield's freq values)")
        return v

    @field_validator("format")
    @classmethod
    def _format_rate(cls, v: str, info: ValidationInfo) -> str:
        rate = info.data.get("sample_rate_hz")
        if v == "ascii_dec" and rate is not None and rate > ASCII_MAX_RATE_HZ:
            raise ValueError(f"ascii_dec streams at most {ASCII_MAX_RATE_HZ} Hz without a time "
                             f'limit, not {rate} Hz; use "bin_hexa" or a lower sample_rate_hz')
        return v

    @property
    def supply_mv(self) -> int:
        """``supply_v`` in mV, as ``volt`` is given (``volt 3300m``)."""
        return round(self.supply_v * 1000)
