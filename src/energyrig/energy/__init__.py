"""The energy of one trigger window, in one home below the rig and the calibration, which
both use it (docs/ARCHITECTURE.md):

- :mod:`~energyrig.energy.record`: one window recorded, arm → run → collect
  (:func:`~energyrig.energy.record.record_window`);
- :mod:`~energyrig.energy.windows`: the windows of a record and their energy (the compiled
  kernel ``_energy``), their integrity flags;
- :mod:`~energyrig.energy.stats`: the statistics of a window's record its budget needs;
- :mod:`~energyrig.energy.budget`: the uncertainty budget of a window (and of a point's
  per-op figures, the windows' budgets combined);
- :mod:`~energyrig.energy.figures`: a window's stored figures, the window overhead taken out;
- :mod:`~energyrig.energy.cut`: the samples a window's trace keeps.

It imports only the bottom (capture, domain, errors): what it needs of a bench and an
instrument are Protocols of its own (:class:`~energyrig.energy.record.WindowBench`,
:class:`~energyrig.energy.figures.AdcSteps`), so no instrument family and no bench are
known here.
"""
