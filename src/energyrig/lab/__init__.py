"""A lab of benches through labgrid (https://labgrid.readthedocs.io): places, their network
serial ports, and a simulated lab on one machine.

- :mod:`~energyrig.lab.place`: the client side — acquire a place, read its resources,
  rewrite a fixture for it, release it (``labgrid-client``);
- :mod:`~energyrig.lab.sim`: a coordinator and exporters of simulated benches on loopback.
"""
