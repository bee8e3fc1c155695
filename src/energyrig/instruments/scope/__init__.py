"""Oscilloscopes over PyVISA (pyvisa-py by default), measuring by the shunt method.

- :mod:`.dialects`: one table row per family (Rigol DS1000Z, Rigol MSO5000, Siglent SDS on the
  newer and on the older (SDS1000X-E) command set, Keysight InfiniiVision X, Tektronix
  MSO/DPO4000), each citing the programming guide its commands follow;
- :mod:`.protocol`: settings, record planning and the SCPI of each step (pure functions);
- :mod:`.driver`: :class:`Scope`, the :class:`~energyrig.instruments.base.Acquisition` over a
  PyVISA session, and the numpy processing of the downloaded waveforms.
"""
from energyrig.instruments.scope.dialects import DIALECTS, Dialect, dialect_for_idn
from energyrig.instruments.scope.driver import Scope
from energyrig.instruments.scope.protocol import ScopeSettings

__all__ = ["DIALECTS", "Dialect", "Scope", "ScopeSettings", "dialect_for_idn"]
