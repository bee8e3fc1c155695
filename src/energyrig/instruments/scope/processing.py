"""Oscilloscope processing: the downloaded waveforms as a capture chunk (numpy, no I/O).

Tested by feeding it arrays; :mod:`energyrig.instruments.scope.driver` calls it with what it
downloaded. Units: V in, A and V out, s.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.instruments.scope.config import ScopeConfig
from energyrig.instruments.threshold import AnalogTrigger, Schmitt


def to_chunk(config: ScopeConfig, volts: dict[str, npt.NDArray[np.float64]],
             clipped: npt.NDArray[np.bool_], period_s: float) -> Chunk:
    """One chunk from the channels' volts (keys ``shunt``, ``trigger``, optional ``supply``).

    Works in place on the arrays of ``volts`` (a deep record is tens of MB per channel):
    the shunt's volts become the current, the supply's the board's supply.
    """
    logic = Schmitt(AnalogTrigger(config.level_v))(volts["trigger"])
    shunt = volts["shunt"]
    voltage: npt.NDArray[np.float64] | float = volts.get("supply", config.supply_v)
    if isinstance(voltage, np.ndarray) and config.voltage_minus_shunt:
        voltage -= shunt
    current = np.multiply(shunt, config.amperes_per_volt, out=shunt)
    return Chunk(start_index=0, period_s=period_s, current_a=current, voltage_v=voltage,
                 logic=logic, saturated=clipped)
