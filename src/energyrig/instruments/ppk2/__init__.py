"""Nordic Power Profiler Kit II (PPK2), a streaming instrument on USB serial.

Its doors, one module each:

- :mod:`.family`: the family record (``FAMILY``) and :mod:`.config`: the fixture's
  ``[instrument]`` table (:class:`~.config.Ppk2Config`);
- transport: :mod:`.driver`, the :class:`~energyrig.instruments.base.Acquisition` over a
  pyserial port with its reader thread (a
  :class:`~energyrig.instruments.streaming.StreamAcquisition`);
- protocol: :mod:`.protocol` (commands) and :mod:`.metadata` (the calibration text);
- processing: :mod:`.decode`, the vectorised decoder of 4-byte sample words (compiled kernel
  ``_decode.c``), and :mod:`.rawfile`, the ``.ppk2raw`` raw-stream file it reads back;
- the nRF Connect Power Profiler app's files: :mod:`.appformat` (names, content tests) and
  :mod:`.appfile` (its CSV export and saved ``.ppk2`` sessions).
- emulator: :mod:`.emulator`, a PPK2 on a pty for the simulated bench (``python -m
  energyrig.instruments.ppk2.emulator``).
"""
