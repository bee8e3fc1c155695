"""STM32 Power Shield (X-NUCLEO-LPM01A), a streaming instrument on a USB virtual COM port.

Its doors, one module each:

- :mod:`.family`: the family record (``FAMILY``) and :mod:`.config`: the fixture's
  ``[instrument]`` table (:class:`~.config.Lpm01aConfig`);
- transport: :mod:`.driver`, the acquisition over a pyserial port with its reader thread (a
  :class:`~energyrig.instruments.streaming.StreamAcquisition`);
- protocol: :mod:`.protocol` (text commands, ``ack``/``error`` replies, numbers);
- processing: :mod:`.processing`, the data stream (``bin_hexa``, ``ascii_dec``, timestamps,
  D7 events) decoded into chunks;
- emulator: :mod:`.emulator`, a Power Shield on a pty for the simulated bench.
"""
