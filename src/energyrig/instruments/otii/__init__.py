"""Qoitech Otii Arc and Ace through Otii's TCP scripting interface (the ``otii-tcp-client``
package, Qoitech's own client).

Its doors, one module each:

- :mod:`.family`: the family record (``FAMILY``) and :mod:`.config`: the fixture's
  ``[instrument]`` table (:class:`~.config.OtiiConfig`);
- transport and protocol: :mod:`.driver`, :class:`~.driver.Otii`, the
  :class:`~energyrig.instruments.base.Acquisition` over the client (one recording per window);
- emulator: :mod:`.emulator`, the server side of the interface on loopback TCP for the
  simulated bench (``python -m energyrig.cli.emulate energyrig.instruments.otii.emulator``).
"""
