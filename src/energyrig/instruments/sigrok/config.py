"""The ``[instrument]`` table of a sigrok fixture: :class:`SigrokConfig` (imports only pydantic)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from energyrig.config import Strict

SIGROK_CLI = "sigrok-cli"


class SigrokConfig(Strict):
    """``kind = "sigrok"``: a libsigrok device through sigrok-cli, as the fixture gives it and
    the driver uses it (V, A, Ω, Hz).

    Attributes
    ----------
    driver:
        libsigrok driver name (``demo``, ``fx2lafw``, ``hantek-6xxx``).
    conn:
        Connection (``1.6`` USB bus.address, ``/dev/ttyUSB0``); ``None``: the first found.
    driver_options:
        Further scan options appended to ``--driver`` (``analog_channels``: ``"2"``).
    channels:
        Channels to enable (``--channels``); empty: the device's default set.
    samplerate_hz:
        Sample rate, Hz; required to size captures from a time window.
    config:
        Further device options for ``--config`` (``voltage_threshold``: ``"1.5"``).
    trigger:
        The channel carrying the trigger: a logic channel, or an analog one (a scope without
        logic inputs) thresholded at ``trigger_level_v`` (V, e.g. 1.65 for 3.3 V logic) with
        ``trigger_hysteresis_v`` (V, default 10 % of the level;
        :mod:`energyrig.instruments.threshold`).
    current:
        The analog channel carrying the current (scaled by ``shunt_ohms`` or
        ``current_scale_a_per_v``).
    voltage:
        The supply: an analog channel name, or a constant in volts.
    voltage_minus_shunt:
        The voltage channel sits on the supply side of the shunt: board supply = supply −
        shunt volts.
    sigrok_cli:
        The ``sigrok-cli`` executable.
    """

    kind: Literal["sigrok"] = "sigrok"
    driver: str
    conn: str | None = None
    driver_options: dict[str, str] = {}
    channels: tuple[str, ...] = ()
    samplerate_hz: float | None = Field(None, gt=0)
    config: dict[str, str] = {}
    trigger: str | None = None
    trigger_level_v: float | None = Field(None, allow_inf_nan=False)
    trigger_hysteresis_v: float | None = Field(None, ge=0, allow_inf_nan=False)
    current: str | None = None
    voltage: str | float | None = None
    shunt_ohms: float | None = Field(None, gt=0)
    current_scale_a_per_v: float | None = None
    voltage_minus_shunt: bool = False
    sigrok_cli: str = SIGROK_CLI

    @field_validator("conn")
    @classmethod
    def _conn_fits(cls, v: str | None) -> str | None:
        if v is not None and ":" in v:
            raise ValueError(f"{v!r} cannot contain ':' (sigrok-cli separates options with ':')")
        return v

    @field_validator("driver_options", "config")
    @classmethod
    def _options_fit(cls, v: dict[str, str]) -> dict[str, str]:
        """What sigrok-cli's ``key=value:key=value`` syntax can carry."""
        for key, value in v.items():
            if ":" in key or ":" in value or "=" in key:
                raise ValueError(f"{key}={value!r} cannot contain ':' (sigrok-cli separates "
                                 "options with ':')")
        return v

    @field_validator("samplerate_hz")
    @classmethod
    def _whole_hz(cls, v: float | None) -> float | None:
        if v is not None and v != round(v):
            raise ValueError(f"must be a whole number of Hz (sigrok-cli's samplerate), got {v}")
        return v

    @model_validator(mode="after")
    def _level_needs_trigger(self) -> SigrokConfig:
        if self.trigger is None and (self.trigger_level_v is not None
                                     or self.trigger_hysteresis_v is not None):
            raise ValueError("trigger_level_v/trigger_hysteresis_v need trigger "
                             "(the analog channel to threshold, e.g. trigger = 'CH2')")
        return self
