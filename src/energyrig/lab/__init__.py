"""A lab of benches through labgrid (https://labgrid.readthedocs.io): the client side of
its places (:mod:`~energyrig.lab.place`: acquire a place, read its resources, rewrite a
fixture for it, release it, all through ``labgrid-client``) and their status
(:mod:`~energyrig.lab.status`).

It sits below the rig, which builds on it: a bench on a place
(:class:`energyrig.rig.bench.PlaceBench`), the slots of a lab sweep
(:func:`energyrig.rig.sweep.lanes.place_slots`) and the simulated lab (:mod:`energyrig.rig.labsim`).
"""
