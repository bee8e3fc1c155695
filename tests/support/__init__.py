"""Test support shared by the tests and ``benchmarks/``; not part of the installed package.

- :mod:`support.synthetic`: synthetic runs from a cost model, written through the store;
- :mod:`support.ppk2_reference`: the ``ppk2-api`` package on a pty, the reference the PPK2
  decoder is compared with;
- :mod:`support.browser`: Debian's headless Chromium through Playwright, to open the report;
- :mod:`support.paths`: ``ROOT`` (the repository), ``DATA`` (tests/data), ``SIM`` (the simulated
  bench's fixture), wherever a test file sits;
- :mod:`support.sweep`, :mod:`support.pipeline`: scripted benches for the sweep executor and
  the point pipeline; :mod:`support.bad_input`: ``rig`` in this process and its refusals;
- :mod:`support.energy_traces`, :mod:`support.scope_fake`, :mod:`support.sigrok_cli`,
  :mod:`support.zephyr`, :mod:`support.layers`: closed-form traces, a byte-level SCPI fake,
  sigrok-cli as a reference, a Zephyr board's driving, the package's import graph.

pytest puts ``tests/`` on ``sys.path`` (``pythonpath`` in ``pyproject.toml``); a benchmark
adds it itself before importing ``support``.
"""
