"""The ``[instrument]`` table of a Joulescope fixture: :class:`JoulescopeConfig` (imports only
pydantic)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from energyrig.config import Strict


class JoulescopeConfig(Strict):
    """``kind = "joulescope"``: a Joulescope JS220 or JS110 through ``pyjoulescope_driver``.

    Attributes
    ----------
    device:
        The driver's device path (``u/js220/001234``); ``None``: the one attached.
    sample_rate_hz:
        On-instrument output sample rate (the driver's ``h/fs``), Hz.
    current_range:
        ``auto`` or a fixed range, as ``s/i/range/select`` names it (``2 A``: JS110 only).
    trigger_gpi:
        The general-purpose input carrying the trigger (0..3).
    min_pulse_s:
        A trigger level must last this long to start or end the window a collect waits for,
        s.
    history_s:
        Seconds of samples kept while not armed, the most ``arm(pre_s=...)`` can reach back.
    buffer_s:
        Capacity of the buffer while armed, s of samples (24 bytes per sample held).
    """

    kind: Literal["joulescope"] = "joulescope"
    device: str | None = None
    sample_rate_hz: int = Field(1_000_000, gt=0, le=2_000_000)
    current_range: Literal["auto", "10 A", "2 A", "180 mA", "18 mA", "1.8 mA", "180 µA",
                           "18 µA"] = "auto"
    trigger_gpi: int = Field(0, ge=0, le=3)
    min_pulse_s: float = Field(5e-6, ge=0)
    history_s: float = Field(1.0, gt=0)
    buffer_s: float = Field(20.0, gt=0)
