"""The simulated bench's instruments: emulators that speak the real wire protocols.

- :mod:`~energyrig.instruments.sim.wire`: the virtual trigger wire (``firmware/TRIGGER_WIRE.md``)
  the host DUT publishes its edges on.
- :mod:`~energyrig.instruments.sim.power`: the board's power model and instrument faults.
- :mod:`~energyrig.instruments.sim.ppk2`: a PPK2 on a pty (``python -m energyrig.cli.emulate
  energyrig.instruments.sim.ppk2 --help``).
- :mod:`~energyrig.instruments.sim.truth`: the ground-truth log of every window's energy.
- :mod:`~energyrig.instruments.sim.process`: the command line all emulators share, and
  :class:`~energyrig.instruments.sim.process.EmulatorProcess` to run one in its own process.

A whole simulated PPK2 bench, as the rig wires it::

    with EmulatorProcess(model, wire=wire_path, truth=truth_path) as emu, \\
            Ppk2(emu.port, Ppk2Config(supply_v=model.supply_v)) as ppk:
        # start build/host/energyrig-dut --trigger-wire wire_path, prep an op, then per window:
        ppk.arm(pre_s=0.02, window_s=expected_s, post_s=0.01)
        ...                                   # "run n=N" to the DUT, wait for its reply
        windows = list(find_windows(ppk.collect(timeout_s=expected_s + 5)))
    (stream,), truths = read_truth(truth_path)
    true = stream.match(truths, windows[0].start_s)
"""
