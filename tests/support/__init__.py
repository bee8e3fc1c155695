"""Test support shared by the tests and ``benchmarks/``; not part of the installed package.

- :mod:`support.synthetic`: synthetic runs from a cost model, written through the store;
- :mod:`support.ppk2_reference`: the ``ppk2-api`` package on a pty, the reference the PPK2
  decoder is compared with;
- :mod:`support.browser`: Debian's headless Chromium through Playwright, to open the report.

pytest puts ``tests/`` on ``sys.path`` (``pythonpath`` in ``pyproject.toml``); a benchmark
adds it itself before importing ``support``.
"""
