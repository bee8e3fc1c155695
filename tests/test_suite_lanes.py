"""make test's two lanes (tests/support/lanes.py): the tests marked slow go to the bench
workers alone, every other test (and a slow one marked ``cpu``) to the others, which run
niced; a bench worker whose lane is empty takes the other lane's files, a niced one never
takes a bench."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

from support.lanes import BENCH_SUFFIX, NICE, NICED_TIMEOUT_FACTOR, LaneScheduling
from support.paths import ROOT

#: A collection: file a holds a bench test and a CPU one, b three bench tests, c and d CPU
#: tests (d: a slow test marked cpu, not in the bench lane).
COLLECTION = ["a.py::bench", "a.py::unit", "b.py::one", "b.py::two", "b.py::three",
              "c.py::x", "c.py::y", "c.py::z", "d.py::ctest"]
BENCH = ["a.py::bench", "b.py::one", "b.py::two", "b.py::three"]


class _Node:
    """A worker as the scheduler sees it: its id, the tests it was sent, whether it was told
    to shut down."""

    def __init__(self, worker_id: str) -> None:
        self.gateway = SimpleNamespace(id=worker_id)
        self.sent: list[str] = []
        self.shutting_down = False

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent += [COLLECTION[i] for i in indexes]

    def shutdown(self) -> None:
        self.shutting_down = True


def _scheduled(workers: int, bench_workers: int, tmp_path: Path
               ) -> tuple[LaneScheduling, list[_Node]]:
    lane_file = tmp_path / "lanes.json"
    lane_file.write_text(json.dumps(BENCH))
    config = SimpleNamespace(getvalue=lambda name: [f"{workers}*popen"],
                             option=SimpleNamespace(loadscopereorder=True))
    sched = LaneScheduling(config, None, bench_workers, lane_file)  # type: ignore[arg-type]
    nodes = [_Node(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)  # type: ignore[arg-type]
        sched.add_node_collection(node, COLLECTION)  # type: ignore[arg-type]
    sched.schedule()
    return sched, nodes


def _run_all(sched: LaneScheduling, nodes: list[_Node]) -> None:
    """Complete the tests as the workers would, first node first, until none is pending."""
    done: set[tuple[str, str]] = set()
    while not sched.tests_finished:
        node, test = next((n, t) for n in nodes for t in n.sent
                          if (n.gateway.id, t) not in done)
        done.add((node.gateway.id, test))
        sched.mark_test_complete(node, COLLECTION.index(test))  # type: ignore[arg-type]


def test_a_file_is_one_unit_per_lane(tmp_path: Path) -> None:
    sched, _ = _scheduled(3, 1, tmp_path)
    assert sched._split_scope("a.py::bench") == "a.py" + BENCH_SUFFIX
    assert sched._split_scope("a.py::unit") == "a.py"
    assert sched._split_scope("d.py::ctest") == "d.py"


def test_benches_run_on_the_bench_workers_alone_and_each_test_once(tmp_path: Path) -> None:
    sched, nodes = _scheduled(3, 1, tmp_path)
    bench, cpu = nodes[0], nodes[1:]
    # at the start: the bench worker has the bench lane's units, the others the CPU lane's
    assert bench.sent and set(bench.sent) <= set(BENCH)
    assert all(n.sent and not set(n.sent) & set(BENCH) for n in cpu)
    _run_all(sched, nodes)
    assert sorted(t for n in nodes for t in n.sent) == sorted(COLLECTION)
    assert not set(BENCH) - set(bench.sent)
    assert all(n.shutting_down for n in nodes)


def test_a_niced_worker_takes_no_bench_even_when_its_lane_is_empty(tmp_path: Path) -> None:
    # one bench worker, three niced: the CPU lane's three units go out at the start, the bench
    # lane waits for gw0; gw2 and gw3, with nothing of their lane left, are shut down
    sched, nodes = _scheduled(4, 1, tmp_path)
    assert all(not set(n.sent) & set(BENCH) for n in nodes[1:])
    assert all(n.shutting_down for n in nodes[1:] if not n.sent)
    _run_all(sched, nodes)
    assert set(nodes[0].sent) >= set(BENCH)


def test_a_bench_worker_takes_the_other_lanes_files_once_its_own_is_empty(tmp_path: Path
                                                                          ) -> None:
    # two bench workers, no niced one: the CPU lane's units go to them after the benches
    sched, nodes = _scheduled(2, 2, tmp_path)
    _run_all(sched, nodes)
    ran = [t for n in nodes for t in n.sent]
    assert sorted(ran) == sorted(COLLECTION)


def test_pytest_runs_the_slow_test_on_the_bench_worker_and_the_rest_niced(tmp_path: Path
                                                                          ) -> None:
    """The plugin in a real pytest-xdist run: two workers, one per lane (each lane has one
    file, so the first hand-out decides who runs what); the niced worker's test may run
    longer before pytest-timeout stops it."""
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["support.tiers", "support.lanes"]\n')
    report = textwrap.dedent("""\
        import json, os, pathlib
        import pytest

        def where(name, request):
            timeout = request.node.get_closest_marker("timeout")
            pathlib.Path(name + ".json").write_text(json.dumps(
                {"worker": os.environ["PYTEST_XDIST_WORKER"], "nice": os.nice(0),
                 "timeout": timeout.args[0] if timeout else None}))
        """)
    (tmp_path / "test_bench.py").write_text(report + textwrap.dedent("""\
        @pytest.mark.slow
        @pytest.mark.timeout(100)
        def test_bench(request):
            where("bench", request)
        """))
    (tmp_path / "test_unit.py").write_text(report + textwrap.dedent("""\
        @pytest.mark.timeout(100)
        def test_unit(request):
            where("unit", request)
        """))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "xdist.plugin",
         "-p", "pytest_timeout",
         "-o", "markers=slow\ncpu\npipeline", "--rootdir", str(tmp_path),
         "-n", "2", "--bench-workers", "1", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT / 'tests'}{os.pathsep}{ROOT / 'src'}",
             "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert "2 passed" in done.stdout, done.stdout + done.stderr
    bench, unit = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("bench", "unit"))
    ours = os.nice(0)
    assert bench == {"worker": "gw0", "nice": ours, "timeout": 100}
    # niced, its timeout stretched by the CPU share it yields
    assert unit == {"worker": "gw1", "nice": min(ours + NICE, 19),
                    "timeout": 100 * NICED_TIMEOUT_FACTOR}
