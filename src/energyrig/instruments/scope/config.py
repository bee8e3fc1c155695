"""The ``[instrument]`` table of an oscilloscope fixture: :class:`ScopeConfig`.

Imports only pydantic (the dialect table is imported when a ``dialect`` is validated).
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from energyrig.config import Strict


class ScopeConfig(Strict):
    """``kind = "scope"``: an oscilloscope over PyVISA measuring by the shunt method, as the
    fixture gives it and the driver uses it (V, A, Ω, s, Hz).

    Attributes
    ----------
    resource:
        VISA resource string as written for the scope (``TCPIP::192.168.1.50::INSTR``,
        ``TCPIP::host::5025::SOCKET``, ``USB0::0x1AB1::0x04CE::DS1ZA...::INSTR``); ``None``
        only on the simulated bench (the emulator's address is used).
    dialect:
        A :data:`~energyrig.instruments.scope.dialects.DIALECTS` name, or ``"auto"`` (from
        ``*IDN?``).
    shunt, supply, trigger:
        Channel numbers of the shunt probe, the supply probe (``None``: constant
        ``supply_v``) and the trigger GPIO.
    shunt_ohms:
        Shunt resistance, Ω (``i = v / R``); or ``None`` with ``current_scale_a_per_v``.
    current_scale_a_per_v:
        Current probe: amperes per volt at the scope input.
    supply_v:
        Nominal board supply, V (the constant supply without a supply channel; the vertical
        range of the supply channel; the default logic level).
    voltage_minus_shunt:
        The supply probe sits on the supply side of the shunt: board supply = supply − shunt.
    max_current_a:
        Highest current the board draws, A (vertical range of the shunt channel).
    trigger_level_v:
        Edge trigger level, V (default: half of ``supply_v``).
    sample_rate_hz:
        Sample rate to keep, Sa/s (windows longer than the record memory holds at this rate
        get less).
    probe_supply, probe_shunt, probe_trigger:
        Probe attenuation set on each channel (1 for 1×, 10 for 10×).
    window_margin:
        The record holds ``window_margin ×`` the expected window: the estimate is the last
        batch's time, and a batch on a loaded host, or a key generation, can take twice as
        long. A batch that outlasts the record fails its window.
    timeout_s:
        VISA I/O timeout, s (a deep record takes seconds to read).
    arm_timeout_s:
        Longest wait for the scope to report it is armed, s.
    visa_library:
        PyVISA backend: ``"@py"`` (pyvisa-py, pure Python) by default.
    """

    kind: Literal["scope"] = "scope"
    resource: str | None = None
    dialect: str = "auto"
    shunt: int = Field(2, ge=1, le=4)
    supply: int | None = Field(1, ge=1, le=4)
    trigger: int = Field(3, ge=1, le=4)
    shunt_ohms: float | None = Field(1.0, gt=0)
    current_scale_a_per_v: float | None = None
    supply_v: float = Field(3.3, gt=0)
    voltage_minus_shunt: bool = True
    max_current_a: float = Field(0.1, gt=0)
    trigger_level_v: float | None = None
    sample_rate_hz: float = Field(1e6, gt=0)
    probe_supply: float = Field(1.0, gt=0)
    probe_shunt: float = Field(1.0, gt=0)
    probe_trigger: float = Field(1.0, gt=0)
    window_margin: float = Field(2.0, ge=1)
    timeout_s: float = Field(10.0, gt=0)
    arm_timeout_s: float = Field(5.0, gt=0)
    visa_library: str = "@py"

    @field_validator("dialect")
    @classmethod
    def _dialect(cls, v: str) -> str:
        from energyrig.instruments.scope.dialects import DIALECTS

        if v != "auto" and v not in DIALECTS:
            raise ValueError(f"unknown dialect {v!r} (known: auto, {', '.join(DIALECTS)})")
        return v

    @model_validator(mode="after")
    def _wiring(self) -> ScopeConfig:
        """Channel clashes, shunt against current probe, supply channel for the subtraction."""
        used = [c for c in (self.supply, self.shunt, self.trigger) if c is not None]
        if len(set(used)) != len(used):
            raise ValueError(f"scope channels must differ: supply={self.supply}, "
                             f"shunt={self.shunt}, trigger={self.trigger}")
        if (self.shunt_ohms is None) == (self.current_scale_a_per_v is None):
            raise ValueError("give exactly one of shunt_ohms and current_scale_a_per_v")
        if self.voltage_minus_shunt and self.supply is None:
            raise ValueError("voltage_minus_shunt needs a supply channel")
        return self

    @property
    def amperes_per_volt(self) -> float:
        """Factor from the shunt channel's volts to amperes, A/V."""
        if self.shunt_ohms is not None:
            return 1.0 / self.shunt_ohms
        assert self.current_scale_a_per_v is not None
        return self.current_scale_a_per_v

    @property
    def level_v(self) -> float:
        """Trigger level, V."""
        return self.trigger_level_v if self.trigger_level_v is not None else self.supply_v / 2

    def roles(self) -> dict[str, tuple[int, float]]:
        """``role -> (channel, probe attenuation)`` of the channels in use."""
        out = {"shunt": (self.shunt, self.probe_shunt),
               "trigger": (self.trigger, self.probe_trigger)}
        if self.supply is not None:
            out["supply"] = (self.supply, self.probe_supply)
        return out

    def signal_range_v(self, role: str) -> tuple[float, float]:
        """Lowest and highest voltage the channel of ``role`` will see, V."""
        shunt_max = self.max_current_a / self.amperes_per_volt
        if role == "shunt":
            return -0.05 * shunt_max, shunt_max
        if role == "supply":
            return 0.95 * self.supply_v, 1.05 * self.supply_v + shunt_max
        return -0.1 * self.supply_v, 1.1 * self.supply_v
