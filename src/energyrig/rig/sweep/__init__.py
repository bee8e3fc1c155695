"""Sweep execution: the points of a plan measured one after another into a run directory.

>>> from energyrig.rig.plan import load_plan
>>> from energyrig.rig.sweep.run import start_sweep, resume_sweep
>>> outcome = start_sweep(load_plan("plans/quick.toml"), "runs/quick")
>>> outcome = resume_sweep("runs/quick")        # after a crash or Ctrl-C

What the executor guarantees:

- every finished point is written through :class:`energyrig.results.RunWriter` (atomically)
  while the next point is measured (one store at a time, in order, ended before the point
  after that starts), so a crash at any instant loses at most the point being measured and
  the one being stored, and ``resume_sweep`` measures exactly the points not stored yet
  (same plan, same seed, same order);
- Ctrl-C (SIGINT) or SIGTERM stops between two windows: the point being measured is dropped
  (it is measured again on resume), the run is left resumable; a second Ctrl-C aborts at once;
- a point that fails (self-test failure, DUT not answering, instrument error) is stored as
  ``failed`` with the reason, the bench is reopened (a crashed or hung host DUT and the
  emulator restart) and the sweep goes on; combinations the op cannot take are stored as
  ``skipped`` with the reason before the first measurement;
- each point takes windows until the 95 % CI half-width of the plan's metric is under its
  target fraction of the mean, between ``min_windows`` and ``max_windows``.

Each point is measured by the one point pipeline (:func:`energyrig.rig.pipeline.measure_point`)
on a :class:`~energyrig.rig.pipeline.PointBench` (the fixture's bench from
:func:`energyrig.rig.bench.open_bench`, or anything that prepares a point once and then
measures one window at a time); the sweep adds the adaptive rule and the store. It prints
nothing: what happens is a stream of typed events handed to a reporter
(:mod:`~energyrig.rig.sweep.events`), which ``cli/sweep.py`` draws.

The modules, each importing only those above it:

- :mod:`~energyrig.rig.sweep.state`: each board's plan, the outcome's counts;
- :mod:`~energyrig.rig.sweep.events`: the events and the ``Reporter`` protocol;
- :mod:`~energyrig.rig.sweep.stopping`: the stop request (signals) and the adaptive rule;
- :mod:`~energyrig.rig.sweep.boards`: benches, the survey of each board, calibration check;
- :mod:`~energyrig.rig.sweep.point`: one point measured, stored and reported;
- :mod:`~energyrig.rig.sweep.lanes`: a lab's places measured at once, one lane each;
- :mod:`~energyrig.rig.sweep.execute`: the executor (one bench at a time, or the lanes);
- :mod:`~energyrig.rig.sweep.lab`: the labgrid lab a sweep holds;
- :mod:`~energyrig.rig.sweep.run`: start, resume and remove a run;
- :mod:`~energyrig.rig.sweep.dryrun`: the points and duration a plan would take.
"""
