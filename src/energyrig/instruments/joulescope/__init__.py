"""joulescope: Joulescope JS220/JS110 recordings (``.jls``) and instruments.

Its doors, one module each:

- :mod:`.family`: the family record (``FAMILY``) and :mod:`.config`: the fixture's
  ``[instrument]`` table (:class:`~.config.JoulescopeConfig`);
- transport: :mod:`.device`, the driver's pub/sub (:class:`~.device.Joulescope`, the
  :class:`~energyrig.instruments.base.Acquisition`);
- protocol: :mod:`.protocol`, its topics, settings and stream messages;
- processing: :mod:`.processing`, samples into chunks, and :mod:`.jlsfile`, JLS v2 files read through ``pyjls`` as a streamed
  :class:`~energyrig.capture.Capture`.
"""
