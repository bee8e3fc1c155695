"""Two lanes for ``make test`` (a pytest plugin, loaded by tests/conftest.py): the benches at
normal priority, the rest on workers that only take the CPU the benches leave.

The slow tier's benches wait on real time (a stream's reader, an emulator, the DUT, QEMU)
more than they compute; the rest of the suite computes and never waits. With
``pytest -n W --bench-workers B`` (pytest-xdist):

- the tests marked ``slow`` (:mod:`support.tiers`: they start a bench) run on the first ``B``
  workers, so no more than ``B`` benches run at a time, each file's on one worker;
- every other test, and a ``slow`` one marked ``cpu`` too (slow for its own CPU, with nothing
  that keeps time: the firmware's C tests under valgrind), runs on the other ``W - B``
  workers, which lower their priority by :data:`NICE`: a bench's reader, emulator or DUT
  that wakes takes the core from them at once. A test there may run
  :data:`NICED_TIMEOUT_FACTOR` times its timeout (it yields that share on a loaded host);
- a bench worker whose lane is empty takes the other lane's files; a niced worker never
  takes a bench (its children would inherit its priority).

A file whose tests are in both lanes is two units, one per lane (its module-scoped fixtures
may then be built twice). Workers collect; only the controller schedules and it sees test
ids, not markers, so each worker writes the ids of the bench lane to a file the controller
named for it (:data:`LANE_FILE_KEY`) before it reports its collection.

Without ``--bench-workers`` (``make check``, a plain ``pytest``) this plugin does nothing.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

#: The niceness the workers of the CPU lane add to their own (``nice(2)``): at nice 5 a
#: CPU-bound task weighs 335 against a task at nice 0's 1024 in Linux's scheduler, so it gets
#: about a quarter of a core that one of them wants too, and yields at once to one that wakes.
NICE = 5
#: How much longer a test may run on a niced worker before pytest-timeout stops it: the
#: share it yields (1024 / 335), so that it has the CPU time a test at nice 0 has at the
#: same load.
NICED_TIMEOUT_FACTOR = 3.0
#: The key of ``workerinput`` naming the file the workers write the bench lane's ids to.
LANE_FILE_KEY = "energyrig_bench_lane"
#: What a bench unit's scope carries after its file's path.
BENCH_SUFFIX = " [bench lane]"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--bench-workers", type=int, default=0, metavar="B",
        help=f"with -n W: the tests marked slow (they start a bench) run on the first B "
             f"workers, the others on the W-B left, niced by {NICE} (tests/support/lanes.py)")


def bench_workers(config: pytest.Config) -> int:
    """``--bench-workers``; 0 when off (no xdist run)."""
    return int(config.getoption("bench_workers") or 0)


def bench_worker(worker_id: str, bench_workers: int) -> bool:
    """Whether the pytest-xdist worker ``worker_id`` (``gw3``) is one of the first
    ``bench_workers``, which take the bench lane; the others are niced."""
    return int(worker_id.removeprefix("gw")) < bench_workers


def in_bench_lane(item: pytest.Item) -> bool:
    """Whether ``item`` runs on a bench worker: marked ``slow`` and not ``cpu``."""
    return (item.get_closest_marker("slow") is not None
            and item.get_closest_marker("cpu") is None)


def pytest_configure(config: pytest.Config) -> None:
    """On the controller: a file for the workers' bench lane. On a worker of the CPU lane:
    lower its priority."""
    if not bench_workers(config):
        return
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is None:
        fd, path = tempfile.mkstemp(prefix="rig-test-lanes-", suffix=".json")
        os.close(fd)
        config.stash[_lane_file] = Path(path)
        config.add_cleanup(lambda: Path(path).unlink(missing_ok=True))
    elif not bench_worker(workerinput["workerid"], bench_workers(config)):
        os.nice(NICE)


_lane_file = pytest.StashKey[Path]()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Name the controller's lane file to each worker it starts."""
    path = node.config.stash.get(_lane_file, None)
    if path is not None:
        node.workerinput[LANE_FILE_KEY] = str(path)


@pytest.hookimpl(trylast=True)  # after support.tiers marks the bench fixtures' tests slow
def pytest_collection_modifyitems(config: pytest.Config, items: Sequence[pytest.Item]) -> None:
    """On a worker: write the ids of the bench lane for the controller (every worker
    collects the same tests, so each writes the same file; replaced whole, never half); on
    a niced one, stretch each test's timeout by :data:`NICED_TIMEOUT_FACTOR`."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is None or LANE_FILE_KEY not in workerinput:
        return
    path = Path(workerinput[LANE_FILE_KEY])
    part = path.with_name(f"{path.name}.{workerinput['workerid']}")
    part.write_text(json.dumps([i.nodeid for i in items if in_bench_lane(i)]),
                    encoding="utf-8")
    os.replace(part, path)
    if not bench_worker(workerinput["workerid"], bench_workers(config)):
        for item in items:
            item.add_marker(pytest.mark.timeout(timeout_s(item) * NICED_TIMEOUT_FACTOR),
                            append=False)


def timeout_s(item: pytest.Item) -> float:
    """The pytest-timeout limit of ``item``, s: its nearest ``timeout`` mark, else the ini's."""
    mark = item.get_closest_marker("timeout")
    if mark is not None:
        return float(mark.args[0] if mark.args else mark.kwargs["timeout"])
    return float(item.config.getini("timeout"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The lanes' scheduler, with ``--bench-workers``."""
    path = config.stash.get(_lane_file, None)
    if not bench_workers(config) or path is None:
        return None
    return LaneScheduling(config, log, bench_workers(config), path)


class LaneScheduling(LoadScopeScheduling):
    """pytest-xdist's scheduling by scope (a unit: one file's tests of one lane, handed out
    whole, most tests first), each unit to a worker of its lane (module docstring).

    Parameters
    ----------
    config, log:
        As pytest-xdist gives a scheduler.
    bench_nodes:
        How many workers, from ``gw0``, take the bench lane.
    lane_file:
        Where the workers wrote the bench lane's test ids (read once, when scheduling starts).
    """

    def __init__(self, config: pytest.Config, log: Any, bench_nodes: int, lane_file: Path
                 ) -> None:
        super().__init__(config, log)
        self._bench_nodes = bench_nodes
        self._lane_file = lane_file
        self._bench_ids: frozenset[str] = frozenset()

    def schedule(self) -> None:
        if self.collection is None:  # the first call: every worker has collected
            self._bench_ids = frozenset(json.loads(self._lane_file.read_text(encoding="utf-8")))
        super().schedule()

    def _split_scope(self, nodeid: str) -> str:
        file = nodeid.split("::", 1)[0]
        return file + BENCH_SUFFIX if nodeid in self._bench_ids else file

    def _next_scope(self, node: Any) -> str | None:
        """The unit ``node`` takes next: its lane's first, else (a bench worker) the other
        lane's; ``None`` when none is left for it."""
        bench_node = bench_worker(node.gateway.id, self._bench_nodes)
        mine = next((s for s in self.workqueue if s.endswith(BENCH_SUFFIX) == bench_node), None)
        if mine is not None or not bench_node:
            return mine
        return next(iter(self.workqueue), None)

    def _assign_work_unit(self, node: Any) -> None:
        """Hand ``node`` its next unit; with none left for it, shut it down (after the tests
        it holds). The base class calls this when the node runs low, as for its own units."""
        scope = self._next_scope(node)
        if scope is None:
            if not node.shutting_down:
                node.shutdown()
            return
        self.workqueue.move_to_end(scope, last=False)  # the one the base class hands out
        super()._assign_work_unit(node)
