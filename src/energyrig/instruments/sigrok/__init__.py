"""sigrok: libsigrok devices driven through ``sigrok-cli``, and session files (``.sr``).

Its doors, one module each:

- :mod:`.family`: the family record (``FAMILY``) and :mod:`.config`: the fixture's
  ``[instrument]`` table (:class:`~.config.SigrokConfig`);
- transport: :mod:`.device`, sigrok-cli as a subprocess
  (:class:`~.device.SigrokDevice`, the :class:`~energyrig.instruments.base.Acquisition`);
- protocol: :mod:`.protocol`, sigrok-cli command lines and the parsing of its replies;
- processing: :mod:`.srfile`, session files read as a streamed
  :class:`~energyrig.capture.Capture`.
"""
