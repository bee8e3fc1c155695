"""The run store against damage and a full disk (issue 20, items 10, 13, 17, 18, 26): nothing
lost, nothing missing unseen, one `rig: error:` line with the right exit code.

- ``--overwrite`` deletes only the files the run's records name: a file of the operator's
  anywhere in the run (a table folder, ``parts/``) makes it refuse, deleting nothing;
- ``segments.json`` lists every segment with its rows and SHA-256: a missing, altered or
  unlisted segment stops ``load``, ``rig report`` and ``rig sweep --resume`` with a line
  naming it; a merge interrupted between its segments and its index loses nothing;
- a damaged segment, a folder put into ``parts/``: exit 2 naming the file;
- a full disk: exit 75, every point stored before kept, and ``--resume`` finishes the run.

The CLI runs in this process (``cli.app.main``) on the scripted bench of tests/support/sweep.py.
"""
from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.bad_input import assert_refused, run_rig
from support.sweep import HASHES, SIM, ScriptedBench, factory, make_plan, run

from energyrig.domain import Point, Window
from energyrig.results import RunError, RunWriter, load
from energyrig.results.store import write as store_write
from energyrig.results.store.layout import PARTS
from energyrig.rig.sweep import boards

SEGMENT = "seg-000001.parquet"
INDEX = "segments.json"


def _index(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / INDEX).read_text(encoding="utf-8"))


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedBench:
    """`rig sweep` measures on a scripted bench (its fixture is fixtures/sim.toml)."""
    bench = ScriptedBench()
    monkeypatch.setattr(boards, "calibrated_benches", lambda calibration: factory(bench))
    return bench


def _swept(tmp_path: Path, **kw: Any) -> Path:
    """A finished run of six points (one merge: ``seg-000001.parquet`` of each table)."""
    run(tmp_path, make_plan(tmp_path, HASHES), ScriptedBench(), **kw)
    return tmp_path / "run"


def _sweep_argv(*more: str) -> list[str]:
    return ["sweep", "plan.toml", "--out", "run", "--fixture", str(SIM), "--allow-uncalibrated",
            *more]


# --- 10: --overwrite deletes only what the run's records name ---------------------------------

@pytest.mark.parametrize("stranger", ["points.parquet/notes.txt",
                                      "windows.parquet/seg-000009.parquet",
                                      "parts/by-hand/notes.txt"])
def test_overwrite_refuses_a_file_of_the_operators_inside_the_run(
        tmp_path: Path, stranger: str, scripted: ScriptedBench,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = _swept(tmp_path)
    (run_dir / stranger).parent.mkdir(parents=True, exist_ok=True)
    (run_dir / stranger).write_text("mine")
    assert_refused(_sweep_argv("--overwrite"), f"run: holds a run and files it did not write "
                                                f"({stranger}); not removed", tmp_path, capsys,
                    monkeypatch)
    assert (run_dir / stranger).read_text() == "mine" and scripted.opened == 0


def test_overwrite_deletes_every_file_the_run_wrote(tmp_path: Path, scripted: ScriptedBench,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = _swept(tmp_path, keep_captures="all")
    assert list((run_dir / "captures").iterdir())
    (run_dir / "report" / "traces").mkdir(parents=True)  # as `rig report` writes them
    (run_dir / "report" / "report.html").write_text("<html>")
    (run_dir / "report" / "traces" / "x.png").write_bytes(b"png")
    monkeypatch.chdir(tmp_path)
    code, err = run_rig(_sweep_argv("--overwrite"), capsys, tmp_path)
    assert code == 0, err
    assert scripted.opened > 0
    assert sorted(p.name for p in run_dir.iterdir()) == [".lock", "manifest.json",
                                                         "points.parquet", INDEX,
                                                         "windows.parquet"]
    assert len(load(run_dir).points) == 6


# --- 13: the segment index -----------------------------------------------------------------

def _missing(run_dir: Path) -> str:
    (run_dir / "windows.parquet" / SEGMENT).unlink()
    rows = len(load(run_dir.parent / "copy").windows)
    return f"windows.parquet/{SEGMENT} is missing ({rows} rows the run holds, listed in " \
           f"{INDEX}); restore it from a copy of the run"


def _altered(run_dir: Path) -> str:
    path = run_dir / "windows.parquet" / SEGMENT
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    return f"windows.parquet/{SEGMENT} is not what was stored (its SHA-256 differs from {INDEX}"


def _extra(run_dir: Path) -> str:
    table = run_dir / "points.parquet"
    shutil.copy(table / SEGMENT, table / "seg-000002.parquet")
    return f"points.parquet/seg-000002.parquet: not in the run's {INDEX}, so not a segment this " \
           "run wrote; move it out of the run"


@pytest.mark.parametrize("damage", [_missing, _altered, _extra],
                         ids=["missing", "altered", "extra"])
def test_a_missing_altered_or_extra_segment_is_named_by_load_report_and_resume(
        tmp_path: Path, damage: Any, scripted: ScriptedBench,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = _swept(tmp_path)
    shutil.copytree(run_dir, tmp_path / "copy")
    expected = damage(run_dir)
    with pytest.raises(RunError) as caught:
        load(run_dir)
    assert expected in str(caught.value)
    for argv in (["report", "run"], ["sweep", "--resume", "run", "--allow-uncalibrated"]):
        assert_refused(argv, f"run: {expected}", tmp_path, capsys, monkeypatch)
    assert scripted.opened == 0


def test_a_run_written_now_lists_every_segment_with_rows_and_checksum(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with RunWriter.create(run_dir, consolidate_every=2) as writer:
        for kb in range(1, 6):
            writer.write_point(Point(op="x", board="b", key_bits=kb),
                               [Window(0.0, 0.1, 10, 1e-3, 1e-3)] * 3, batch_n=1)
    index = _index(run_dir)
    assert index["pending"] == {}
    for name, rows in (("windows.parquet", [6, 6, 3]), ("points.parquet", [2, 2, 1])):
        assert [e["file"] for e in index[name]] == sorted(
            p.name for p in (run_dir / name).iterdir())
        assert [e["rows"] for e in index[name]] == rows
        assert [e["sha256"] for e in index[name]] == [
            hashlib.sha256((run_dir / name / e["file"]).read_bytes()).hexdigest()
            for e in index[name]]


def test_a_merge_interrupted_before_its_index_loses_and_repeats_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    writer = RunWriter.create(run_dir, consolidate_every=2)
    writer.write_point(Point(op="x", board="b", key_bits=1), [Window(0.0, 0.1, 10, 1e-3, 1e-3)],
                       batch_n=1)
    real = store_write.sha256

    def crash(path: Path) -> str:  # both segments are in place: the crash is in the listing
        if path.parent.name == "points.parquet":
            raise KeyboardInterrupt
        return real(path)

    monkeypatch.setattr(store_write, "sha256", crash)
    with pytest.raises(KeyboardInterrupt):
        writer.write_point(Point(op="x", board="b", key_bits=2),
                           [Window(0.0, 0.1, 10, 1e-3, 1e-3)], batch_n=1)
    monkeypatch.setattr(store_write, "sha256", real)
    os.close(writer._lock_fd)  # type: ignore[arg-type] # the process died: its lock is released
    assert (run_dir / "points.parquet" / SEGMENT).exists()
    assert _index(run_dir)["pending"] == {"windows.parquet": SEGMENT,
                                                     "points.parquet": SEGMENT}
    assert sorted(load(run_dir).points["key_bits"]) == [1, 2]  # from the parts; no error
    with RunWriter.resume(run_dir) as again:
        assert again.done() == {p.key for p in (Point(op="x", board="b", key_bits=kb)
                                                for kb in (1, 2))}
        assert not (run_dir / "points.parquet" / SEGMENT).exists()  # removed: in parts still
    run = load(run_dir)
    assert sorted(run.points["key_bits"]) == [1, 2] and len(run.windows) == 2
    assert _index(run_dir)["points.parquet"][0]["rows"] == 2


def test_a_run_from_before_segment_indexes_loads_with_a_warning_and_is_indexed_on_resume(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    run_dir = _swept(tmp_path)
    (run_dir / INDEX).unlink()
    with caplog.at_level(logging.WARNING):
        assert len(load(run_dir).points) == 6
    assert f"no {INDEX} (a run from before segment indexes)" in caplog.text
    RunWriter.resume(run_dir).close()
    assert [e["rows"] for e in _index(run_dir)["points.parquet"]] == [6]
    (run_dir / "windows.parquet" / SEGMENT).unlink()
    with pytest.raises(RunError, match=f"windows.parquet/{SEGMENT} is missing"):
        load(run_dir)


# --- 17, 18: a damaged segment, a folder in parts/ ----------------------------------------------

def _corrupt_footer(path: Path) -> None:
    """Garble the Parquet footer's metadata, keeping its length and magic: pyarrow then
    fails with "Couldn't deserialize thrift"."""
    data = bytearray(path.read_bytes())
    for i in range(len(data) - 200, len(data) - 8):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "before-indexes"])
def test_a_damaged_points_segment_exits_2_naming_it(
        tmp_path: Path, indexed: bool, scripted: ScriptedBench,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = _swept(tmp_path)
    if not indexed:
        (run_dir / INDEX).unlink()
    _corrupt_footer(run_dir / "points.parquet" / SEGMENT)
    expected = (f"run: points.parquet/{SEGMENT} is not what was stored" if indexed else
                f"run: points.parquet/{SEGMENT}: not a readable Parquet table (")
    for argv in (["report", "run"], ["sweep", "--resume", "run", "--allow-uncalibrated"]):
        assert_refused(argv, expected, tmp_path, capsys, monkeypatch)
        _, err = run_rig(argv, capsys, tmp_path)
        assert "restore it from a copy of the run" in err
    assert scripted.opened == 0


@pytest.mark.parametrize("junk", ["parts/by-hand/", "parts/notes.txt"])
def test_something_put_into_parts_is_named_not_taken_for_a_busy_writer(
        tmp_path: Path, junk: str, scripted: ScriptedBench,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = _swept(tmp_path)
    (run_dir / PARTS).mkdir()
    if junk.endswith("/"):
        (run_dir / junk).mkdir()
    else:
        (run_dir / junk).write_text("mine")
    expected = f"run: {junk.rstrip('/')}: not a point this rig stored"
    for argv in (["report", "run"], ["sweep", "--resume", "run", "--allow-uncalibrated"]):
        assert_refused(argv, expected, tmp_path, capsys, monkeypatch)
    assert scripted.opened == 0


# --- 26: a full disk ----------------------------------------------------------------------------

@pytest.mark.parametrize(("full_at", "stored"), [(5, 2), (13, 6)],
                         ids=["in-a-point", "in-the-last-merge"])
def test_a_full_disk_exits_75_keeps_every_stored_point_and_the_run_resumes(
        tmp_path: Path, full_at: int, stored: int, scripted: ScriptedBench,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    make_plan(tmp_path, HASHES)
    real = store_write.pq.write_table
    calls = 0

    def filling(table: object, where: object, *args: object, **kw: object) -> None:
        nonlocal calls
        calls += 1  # each point writes two tables; the 13th write is the merge at the end
        if calls >= full_at:  # and the disk stays full
            real(table, where, *args, **kw)
            raise OSError(errno.ENOSPC, "No space left on device", str(where))
        real(table, where, *args, **kw)

    monkeypatch.setattr(store_write.pq, "write_table", filling)
    monkeypatch.chdir(tmp_path)
    code, err = run_rig(_sweep_argv(), capsys, tmp_path)
    errors = [line for line in err.splitlines() if line.startswith("rig: error:")]
    assert code == 75, err
    assert len(errors) == 1 and errors[0].startswith("rig: error: run: disk full; free space "
                                                     "and --resume: "), err
    assert "every point stored before is intact" in errors[0] and "Traceback" not in err
    run_dir = tmp_path / "run"
    kept = load(run_dir)
    assert len(kept.points) == stored and kept.in_progress
    monkeypatch.setattr(store_write.pq, "write_table", real)  # space freed
    measured_before = len(scripted.prepared)
    code, err = run_rig(["sweep", "--resume", "run", "--allow-uncalibrated"], capsys, tmp_path)
    assert code == 0, err
    done = load(run_dir)
    assert not done.in_progress and len(done.points) == 6 and set(done.points["status"]) == {"ok"}
    assert not done.points["point_key"].duplicated().any()
    assert done.windows.groupby("point_key").size().to_dict() == \
        done.points.set_index("point_key")["n_windows"].to_dict()
    resumed = set(scripted.prepared[measured_before:])
    assert not resumed & set(kept.points["point_key"]), "a stored point was measured again"
    assert resumed | set(kept.points["point_key"]) == set(done.points["point_key"])
