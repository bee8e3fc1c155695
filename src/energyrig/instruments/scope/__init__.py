"""Oscilloscopes over PyVISA (pyvisa-py by default), measuring by the shunt method.

Its doors, one module each:

- :mod:`.family`: the family record (``FAMILY``, with the VISA search) and :mod:`.config`:
  the fixture's ``[instrument]`` table (:class:`~.config.ScopeConfig`);
- transport: :mod:`.driver`, :class:`~.driver.Scope`, the
  :class:`~energyrig.instruments.base.Acquisition` over a PyVISA session
  (:mod:`energyrig.instruments.visa`);
- protocol: :mod:`.dialects`, one table row per family (Rigol DS1000Z, Rigol MSO5000, Siglent
  SDS on the newer and on the older (SDS1000X-E) command set, Keysight InfiniiVision X,
  Tektronix MSO/DPO4000), each citing the programming guide its commands follow, and
  :mod:`.protocol`, record planning and the SCPI of each step (pure functions);
- processing: :mod:`.processing`, the downloaded waveforms as a chunk (numpy).
- emulator: :mod:`.emulator`, a SCPI scope on loopback TCP for the simulated bench
  (``python -m energyrig.instruments.scope.emulator``).
"""
