"""What keeps `make check` (the fast tier) within its minute, as the Makefile and the test
support state it (issue 24 part 4; docs/performance.md, "The test suite's time"): three
pytest-xdist workers (`make test`: two lanes of two, tests/support/lanes.py), fewer fuzzed
files than `make test`, and synthetic runs written through the store once per process."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from support import synthetic
from support.make import pytest_line as _pytest_line
from support.paths import ROOT
from support.synthetic import BOARDS, OPS, make_run

from energyrig.results import load



def test_make_check_on_three_xdist_workers_and_make_test_on_two_lanes() -> None:
    # make check waits on real time (streams read late, children started), which a third
    # worker fills on two cores; a file's tests on one worker: its module-scoped fixtures (a
    # run, a report) built once
    line = _pytest_line("check")
    assert line[line.index("-n") + 1] == "3", line
    assert line[line.index("--dist") + 1] == "loadfile", line
    # make test: the benches two at a time (three at a time beside a loaded host starved a
    # stream's reader until a point failed), the CPU-bound rest on two niced workers beside
    # them, a file's tests of one lane on one worker (support/lanes.py)
    line = _pytest_line("test")
    assert line[line.index("-n") + 1] == "4", line
    assert line[line.index("--bench-workers") + 1] == "2", line
    # the plugin is a locked test dependency, installed by `make deps` with its hash
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'"pytest-xdist>=[\d.]+"', pyproject)
    lock = (ROOT / "requirements" / "lock.txt").read_text(encoding="utf-8")
    for name in ("pytest-xdist", "execnet"):
        assert re.search(rf"^{name}==[\d.]+ \\\n    --hash=sha256:[0-9a-f]{{64}}", lock, re.M), name


def test_make_check_fuzzes_fewer_files_than_make_test() -> None:
    def examples(words: list[str]) -> int:
        given = [w.partition("=")[2] for w in words if w.startswith("ENERGYRIG_FUZZ_EXAMPLES=")]
        return int(given[0]) if given else 60  # tests/test_fuzz.py's default

    fuzz = (ROOT / "tests" / "test_fuzz.py").read_text(encoding="utf-8")
    assert 'os.environ.get("ENERGYRIG_FUZZ_EXAMPLES", "60")' in fuzz
    assert 0 < examples(_pytest_line("check")) < examples(_pytest_line("test")) == 60


def _tables(run: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    loaded = load(run)
    return loaded.points, loaded.windows


def test_the_same_synthetic_run_again_is_a_copy_of_the_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = {"boards": BOARDS[:1], "ops": OPS[:2], "payloads": (64,), "reps": 1,
             "n_windows": 2, "seed": 41}
    first = make_run(tmp_path / "first", **small)
    # the second is not written through the store again
    monkeypatch.setattr(synthetic, "_write_run", lambda *a, **k: pytest.fail("written again"))
    second = make_run(tmp_path / "second", **small)
    assert second == tmp_path / "second"
    for a, b in zip(_tables(first), _tables(second), strict=True):
        pd.testing.assert_frame_equal(a, b)
    # each copy is its own: changing one changes neither the next copy nor the first
    for part in (second / "points.parquet").iterdir():
        part.unlink()
    third = make_run(tmp_path / "third", **small)
    for a, b in zip(_tables(first), _tables(third), strict=True):
        pd.testing.assert_frame_equal(a, b)
    monkeypatch.undo()
    # other arguments, or a run left in progress, or flags drawn by a function: written anew
    written: list[Path] = []
    write = synthetic._write_run
    monkeypatch.setattr(synthetic, "_write_run",
                        lambda run_dir, **k: (written.append(run_dir), write(run_dir, **k)))
    make_run(tmp_path / "seed", **{**small, "seed": 42})
    make_run(tmp_path / "open", **small, finish=False)
    make_run(tmp_path / "flags", **small, point_flags=lambda p: ("ci_target_not_met",))
    make_run(tmp_path / "flags2", **small, point_flags=lambda p: ())
    assert written == [tmp_path / n for n in ("seed", "open", "flags", "flags2")]
    assert set(load(tmp_path / "flags").points["flag_list"].map(tuple)) >= {
        ("ci_target_not_met",)}
