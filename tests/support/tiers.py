"""The two tiers of the suite (a pytest plugin, loaded by tests/conftest.py): ``make check``
runs the tests marked neither ``slow`` nor ``pipeline`` (``pytest -m "not slow and not
pipeline"``), ``make test`` runs them all. ``pipeline`` marks an integration test, a whole
pipeline end to end (a report drawn with its figures, a browser, a ``rig report`` child); a
test that requests a fixture of :data:`PIPELINE_FIXTURES` is marked so when it is collected.

A test that starts a bench — the host build of the firmware, QEMU, an instrument emulator's
process, a labgrid lab, or a ``rig`` child that opens one — belongs to the slow tier. Two
things keep it there without a list of names:

- marked by what it uses: a test that requests a fixture named in :data:`BENCH_FIXTURES`
  (a module-scoped bench, a lab) is marked ``slow`` when it is collected;
- checked by what it does: while a test not marked ``slow`` runs (its fixtures' set-up and
  tear-down included), starting one of those programs fails the test, saying what it started
  and to mark it ``@pytest.mark.slow`` (or the module: ``pytestmark = pytest.mark.slow``).
  The check is on in every run, so ``make test`` (CI) finds an unmarked bench test too.
"""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Generator, Sequence
from pathlib import PurePath
from typing import Any

import pytest

#: Fixtures (of any test module) that start a bench for the tests that request them.
BENCH_FIXTURES = frozenset({"bench", "lab", "m4", "mps2", "bridge", "kept_run"})
#: Fixtures that run a whole pipeline for the tests that request them (a headless browser
#: driving a report, a full run's report with every figure drawn): those tests are marked
#: ``pipeline``, in ``make test`` but not ``make check``.
PIPELINE_FIXTURES = frozenset({"browser", "full_report"})
#: The ``rig`` commands that open a bench (a DUT, an instrument, a lab).
BENCH_COMMANDS = frozenset({"run", "sweep", "calibrate", "ops", "lab"})
#: Programs of a bench: the host DUT and the Cortex-M4 one (energyrig-dut, energyrig-m4-dut),
#: QEMU, and a lab's labgrid coordinator and exporter and ser2net.
_BENCH_PROGRAM = re.compile(r"energyrig(-\w+)?-dut|qemu-system-.*|labgrid-(coordinator|exporter)"
                            r"|ser2net")
_RIG_MODULES = ("energyrig.cli.app", "from energyrig.cli.app import main; main()")
#: Modules whose process is part of a bench: an instrument emulator, a simulated lab's bench.
_BENCH_MODULES = ("energyrig.cli.emulate", "energyrig.cli.labsim")
_RIG_OPTIONS = frozenset({"-v", "--verbose", "-q", "--quiet"})

_running: list[pytest.Item] = []
_started: dict[str, list[str]] = {}


def bench_program(args: Any) -> str | None:
    """What part of a bench the command line ``args`` (as :class:`subprocess.Popen` takes it)
    starts, or ``None`` if it starts none. The program is the first word, the script a
    Python runs, or the command after ``--`` (a tethered child,
    :func:`energyrig.instruments.sim.process.tethered`)."""
    words = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    argv = [w.decode() if isinstance(w, bytes) else os.fspath(w) for w in words]
    if len(argv) == 1 and " " in argv[0]:        # a shell line
        argv = argv[0].split()
    programs = argv[:1]
    if argv and PurePath(argv[0]).name.startswith("python") and len(argv) > 1:
        programs.append(argv[1])
    if "--" in argv:
        programs.append(argv[argv.index("--") + 1] if argv[-1] != "--" else "")
    for program in programs:
        if _BENCH_PROGRAM.fullmatch(PurePath(program).name):
            return f"the bench program {program}"
    for module in _BENCH_MODULES:
        if module in argv:
            return f"{module} (an emulator or a lab's bench)"
    for i, arg in enumerate(argv):
        if arg in _RIG_MODULES:
            command = next((a for a in argv[i + 1:] if a not in _RIG_OPTIONS), "")
            if command in BENCH_COMMANDS:
                return f"`rig {command}` in a child process"
    return None


def _guarded_init(original: Any) -> Any:
    def __init__(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        what = bench_program(args)
        if what is not None and _running and _running[-1].get_closest_marker("slow") is None:
            item = _running[-1]
            _started.setdefault(item.nodeid, []).append(what)
            pytest.fail(f"{item.nodeid} starts {what} but is not marked slow: mark it "
                        "@pytest.mark.slow (or its module: pytestmark = pytest.mark.slow), "
                        "tests/README.md", pytrace=False)
        original(self, args, *rest, **kw)

    return __init__


def pytest_configure(config: pytest.Config) -> None:
    """Watch every child process the tests start."""
    original = subprocess.Popen.__init__
    subprocess.Popen.__init__ = _guarded_init(original)  # type: ignore[method-assign]
    config.add_cleanup(lambda: setattr(subprocess.Popen, "__init__", original))


def pytest_collection_modifyitems(items: Sequence[pytest.Item]) -> None:
    """Mark ``slow`` every test that requests a bench fixture, ``pipeline`` every test that
    requests a pipeline's."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if BENCH_FIXTURES.intersection(fixtures):
            item.add_marker(pytest.mark.slow)
        if PIPELINE_FIXTURES.intersection(fixtures):
            item.add_marker(pytest.mark.pipeline)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Which test runs (set-up, call and tear-down), for the check in :class:`Popen`."""
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A bench started by an unmarked test fails it even where the test caught the failure."""
    report = yield
    if report.failed:                            # already fails, maybe for this reason
        _started.pop(item.nodeid, None)
    elif call.when == "teardown" and (started := _started.pop(item.nodeid, None)):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} started {', '.join(started)} but is not marked "
                           "slow: mark it @pytest.mark.slow")
    return report
