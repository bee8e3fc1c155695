"""The run store: round trip, atomic per-point writes, resume after a crash, concurrent
readers, several runs at once."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from energyrig.domain import Point, Window
from energyrig.errors import DiskFullError
from energyrig.results import RunError, RunWriter, load, load_many, query
from energyrig.results.store import read as store_read
from energyrig.results.store import write as store_write
from energyrig.results.store.layout import PARTS

AES = Point(op="aes-ecb-encrypt", family="symmetric", board="nrf52840dk", key_bits=128,
            payload_bytes=1024, cpu_hz=64_000_000)
SHA = Point(op="sha256", family="hash", board="nrf52840dk", payload_bytes=64)


def windows(n: int = 6, energy: float = 2e-3, seed: int = 0) -> list[Window]:
    rng = np.random.default_rng(seed)
    return [Window(start_s=float(i), end_s=i + 0.1 + 1e-3 * rng.standard_normal(),
                   samples=10_000, energy_j=energy * (1 + 0.01 * rng.standard_normal()),
                   baseline_w=3e-3, edge_error_j=1e-7, flags=("glitch",) if i == 2 else (),
                   cycles=6_400_000, true_energy_j=energy) for i in range(n)]


def test_round_trip_derives_per_op_figures_and_keeps_types(tmp_path: Path) -> None:
    wins = windows()
    with RunWriter.create(tmp_path / "run", plan={"name": "t"}, seed=7,
                          firmware={"firmware": "0.1.0"}) as w:
        assert w.write_point(AES, wins, batch_n=200)
        assert w.write_point(SHA, windows(3, seed=1), batch_n=50)
    run = load(tmp_path / "run")
    assert not run.in_progress
    assert run.manifest["seed"] == 7 and run.manifest["firmware"] == {"firmware": "0.1.0"}
    assert run.manifest["software"]["energyrig"]
    assert len(run.windows) == 9 and len(run.points) == 2
    aes = run.windows[run.windows["op"] == "aes-ecb-encrypt"]
    duration = np.array([w.end_s - w.start_s for w in wins])
    energy = np.array([w.energy_j for w in wins])
    np.testing.assert_allclose(aes["duration_s"], duration)
    np.testing.assert_allclose(aes["net_energy_j"], energy - 3e-3 * duration)
    np.testing.assert_allclose(aes["energy_per_op_j"], energy / 200)
    np.testing.assert_allclose(aes["mean_power_w"], energy / duration)
    np.testing.assert_allclose(aes["cycles_per_op"], 32_000)
    assert list(aes["flag_list"]) == [[], [], ["glitch"], [], [], []]
    # Integer factors stay integers; absent ones are <NA>, not NaN floats.
    assert run.points["key_bits"].dtype == "Int64"
    assert run.points.loc[run.points["op"] == "sha256", "key_bits"].isna().all()
    assert run.points.loc[run.points["op"] == "sha256", "payload_bytes"].iloc[0] == 64


def test_point_summary_is_the_student_t_interval_of_the_windows(tmp_path: Path) -> None:
    from scipy import stats  # not at collection: each `make check` worker collects every file
    wins = windows(8)
    with RunWriter.create(tmp_path / "run") as w:
        w.write_point(AES, wins, batch_n=100)
    p = load(tmp_path / "run").points.iloc[0]
    net = np.array([w.energy_j - w.baseline_w * (w.end_s - w.start_s) for w in wins]) / 100
    low, high = stats.t.interval(0.95, len(net) - 1, loc=net.mean(), scale=stats.sem(net))
    assert p["net_energy_per_op_j_mean"] == pytest.approx(net.mean(), rel=1e-12)
    assert p["net_energy_per_op_j_median"] == pytest.approx(np.median(net), rel=1e-12)
    assert p["net_energy_per_op_j_std"] == pytest.approx(net.std(ddof=1), rel=1e-12)
    assert (p["net_energy_per_op_j_ci_low"], p["net_energy_per_op_j_ci_high"]) == \
        pytest.approx((low, high), rel=1e-12)
    assert p["n_windows"] == 8 and p["n_flagged"] == 1 and p["flag_list"] == ["glitch"]
    assert p["status"] == "ok"


def test_dataframe_windows_equal_window_objects(tmp_path: Path) -> None:
    wins = windows()
    frame = pd.DataFrame([asdict(w) for w in wins]).rename(columns={"flags": "flag_list"})
    with RunWriter.create(tmp_path / "a") as w:
        w.write_point(AES, wins, batch_n=10)
    with RunWriter.create(tmp_path / "b") as w:
        w.write_point(AES, frame, batch_n=10)
    cols = ["net_energy_per_op_j", "time_per_op_s", "flag_list", "cycles", "corrections"]
    pd.testing.assert_frame_equal(load(tmp_path / "a").windows[cols],
                                  load(tmp_path / "b").windows[cols])


def test_a_stored_point_is_never_written_twice(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "run") as w:
        assert w.write_point(AES, windows(), batch_n=10)
        assert not w.write_point(AES, windows(seed=5), batch_n=10)
        assert w.done() == {AES.key}
    assert len(load(tmp_path / "run").points) == 1
    with RunWriter.resume(tmp_path / "run") as w:
        assert not w.write_point(AES, windows(), batch_n=10)
    run = load(tmp_path / "run")
    assert len(run.points) == 1 and len(run.windows) == 6
    assert len(run.manifest["resumed_at"]) == 1


def test_point_keys_do_not_depend_on_number_types() -> None:
    a = Point(op="aes", board="b", key_bits=128, payload_bytes=16, cpu_hz=64_000_000)
    b = Point(op="aes", board="b", key_bits=np.int64(128), payload_bytes=16.0,  # type: ignore
              cpu_hz=6.4e7)  # type: ignore[arg-type]
    assert a.key == b.key and a.part_id == b.part_id
    assert a.key != Point(op="aes", board="b", key_bits=128, payload_bytes=16).key
    with pytest.raises(ValueError, match="key_bits must be a whole number"):
        Point(op="aes", board="b", key_bits=128.5)  # type: ignore[arg-type]


def test_config_key_is_the_key_without_the_repetition() -> None:
    a = Point(op="aes", board="b", key_bits=128, payload_bytes=16, rep=0)
    b = Point(op="aes", board="b", key_bits=128, payload_bytes=16, rep=12)
    assert a.key != b.key and a.config_key == b.config_key
    assert "rep" not in a.config_key and a.key.startswith(a.config_key + "|rep=")
    assert a.config_key != Point(op="aes", board="b", key_bits=256, payload_bytes=16).config_key


def test_failed_and_skipped_points_are_results_with_reasons(tmp_path: Path) -> None:
    keygen = Point(op="rsa-keygen", board="esp32", key_bits=8192)
    with RunWriter.create(tmp_path / "run") as w:
        w.write_failed(keygen, "DUT did not answer within 600 s")
        w.write_skipped(Point(op="sha256", board="esp32", key_bits=128), "sha256 takes no key_bits")
        w.write_failed(AES, "self-test failed", batch_n=100, windows=windows(2))
    pts = load(tmp_path / "run").points.set_index("op")
    assert pts.loc["rsa-keygen", "status"] == "failed"
    assert pts.loc["rsa-keygen", "reason"] == "DUT did not answer within 600 s"
    assert pts.loc["rsa-keygen", "n_windows"] == 0
    assert np.isnan(pts.loc["rsa-keygen", "energy_per_op_j_mean"])
    assert pts.loc["sha256", "status"] == "skipped"
    assert pts.loc["aes-ecb-encrypt", "n_windows"] == 2  # windows before the failure are kept


def test_the_run_is_readable_while_being_written(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "run") as w:
        w.write_point(AES, windows(), batch_n=10)
        during = load(tmp_path / "run")
        assert during.in_progress and len(during.points) == 1
        assert (tmp_path / "run" / PARTS).is_dir()
        w.write_point(SHA, windows(), batch_n=10)
        assert len(load(tmp_path / "run").points) == 2
    after = load(tmp_path / "run")
    assert not after.in_progress and len(after.points) == 2
    assert not (tmp_path / "run" / PARTS).exists()  # consolidated


CRASHING_SWEEP = textwrap.dedent("""
    import os, sys
    from energyrig.domain import Point, Window
    from energyrig.results import RunWriter
    w = RunWriter.create(sys.argv[1], seed=1)
    for kb in (128, 192, 256):
        p = Point(op="aes-ecb-encrypt", board="b", key_bits=kb, payload_bytes=16)
        w.write_point(p, [Window(0.0, 0.1, 10, 1e-3, 1e-3)] * 3, batch_n=kb)
    # an interrupted write: the temporary directory exists, the rename never happened
    os.makedirs(os.path.join(sys.argv[1], "parts", ".tmp-interrupted"))
    os._exit(1)  # killed: no close, no end time, lock released by the kernel
""")


def test_resume_after_a_crash_loses_and_repeats_nothing(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", CRASHING_SWEEP, str(run_dir)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    crashed = load(run_dir)
    assert crashed.in_progress and len(crashed.points) == 3
    plan = [Point(op="aes-ecb-encrypt", board="b", key_bits=kb, payload_bytes=16)
            for kb in (128, 192, 256, 512)]
    with RunWriter.resume(run_dir) as w:
        assert not (run_dir / PARTS / ".tmp-interrupted").exists()
        todo = [p for p in plan if p.key not in w.done()]
        assert [p.key_bits for p in todo] == [512]
        for p in plan:  # a careless sweep that retries everything still stores each once
            w.write_point(p, [Window(0.0, 0.1, 10, 1e-3, 1e-3)] * 3, batch_n=7)
    run = load(run_dir)
    assert not run.in_progress
    assert sorted(run.points["key_bits"].tolist()) == [128, 192, 256, 512]
    assert len(run.windows) == 12
    # the crashed process's points kept their batch sizes (not overwritten on resume)
    assert run.points.set_index("key_bits").loc[192, "batch_n"] == 192


def test_a_reader_racing_a_consolidation_still_sees_every_point(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    run_dir = tmp_path / "run"
    writer = RunWriter.create(run_dir)
    writer.write_point(AES, windows(), batch_n=10)
    writer.write_point(SHA, windows(), batch_n=10)
    real_read = store_read.read_table
    calls = []

    def read_after_consolidation(*args: object) -> pd.DataFrame:
        calls.append(args)
        if len(calls) == 1:  # the parts were listed; the writer folds them in before we read
            monkeypatch.setattr(store_read, "read_table", real_read)
            writer.consolidate()
            monkeypatch.setattr(store_read, "read_table", read_after_consolidation)
        return real_read(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(store_read, "read_table", read_after_consolidation)
    run = load(run_dir)
    assert len(calls) == 3  # the first read failed on a vanished part; then both tables
    assert len(run.points) == 2 and len(run.windows) == 12
    writer.close()


def test_a_crash_during_consolidation_leaves_no_duplicates(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    w = RunWriter.create(run_dir)
    w.write_point(AES, windows(), batch_n=10)
    w.write_point(SHA, windows(), batch_n=10)
    saved = tmp_path / "parts-before"
    shutil.copytree(run_dir / PARTS, saved)
    w.close()
    shutil.copytree(saved, run_dir / PARTS)  # as if the parts were not yet removed
    run = load(run_dir)
    assert len(run.points) == 2 and len(run.windows) == 12
    with RunWriter.resume(run_dir) as w:  # the next writer removes the leftover parts
        assert len(w.done()) == 2 and not any((run_dir / PARTS).iterdir())
    assert len(pd.read_parquet(run_dir / "points.parquet")) == 2
    assert len(pd.read_parquet(run_dir / "windows.parquet")) == 12


def test_a_merge_reads_only_the_new_parts_and_a_run_from_before_segments_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    with RunWriter.create(run_dir, consolidate_every=2) as w:
        read: list[list[Path]] = []
        real_read = store_write.read_table
        monkeypatch.setattr(store_write, "read_table", lambda d, paths, *args: read.append(paths)
                            or real_read(d, paths, *args))
        for kb in range(1, 7):
            w.write_point(Point(op="x", board="b", key_bits=kb), windows(2), batch_n=1)
        # three merges, each of the two new parts only, folded from the tables the writer
        # wrote to them: no file read, neither a part nor a segment (test_store_merge_tables)
        assert read == []
    assert sorted(p.name for p in (run_dir / "points.parquet").iterdir()) == [
        "seg-000001.parquet", "seg-000002.parquet", "seg-000003.parquet"]
    assert len(pd.read_parquet(run_dir / "points.parquet")) == 6  # pandas: one line
    # A run written before segments: single files, read as they are, segments on resume.
    old = tmp_path / "old"
    shutil.copytree(run_dir, old)
    (old / "segments.json").unlink()  # nor had it a segment index
    for name in ("windows.parquet", "points.parquet"):
        table = pd.read_parquet(old / name)
        shutil.rmtree(old / name)
        table.to_parquet(old / name)
    assert len(load(old).points) == 6
    with RunWriter.resume(old) as w:
        assert len(w.done()) == 6
        w.write_point(Point(op="x", board="b", key_bits=7), windows(2), batch_n=1)
    assert (old / "points.parquet").is_dir() and len(load(old).points) == 7
    assert len(load(old).windows) == 14


def test_parts_are_folded_in_as_the_run_grows(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with RunWriter.create(run_dir, consolidate_every=3) as w:
        for kb in range(1, 8):
            w.write_point(Point(op="x", board="b", key_bits=kb), windows(2), batch_n=1)
            n_parts = len(list((run_dir / PARTS).iterdir())) if (run_dir / PARTS).exists() else 0
            assert n_parts < 3
            assert sorted(load(run_dir).points["key_bits"]) == list(range(1, kb + 1))
    with RunWriter.resume(run_dir, consolidate_every=3) as w:
        assert len(w.done()) == 7


def test_a_corrupt_table_is_named(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "run") as w:
        w.write_point(AES, windows(), batch_n=10)
    (tmp_path / "run" / "points.parquet" / "seg-000001.parquet").write_bytes(b"PAR1 truncated")
    with pytest.raises(RunError, match="points.parquet/seg-000001.parquet"):
        load(tmp_path / "run")


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "run"), \
            pytest.raises(RunError, match="another sweep is writing this run"):
        RunWriter.resume(tmp_path / "run")
    with pytest.raises(RunError, match="already holds a run"):
        RunWriter.create(tmp_path / "run")


def test_unreadable_runs_are_named(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="no manifest.json"):
        load(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(RunError, match=f"{tmp_path}: manifest.json is not valid JSON"):
        load(tmp_path)


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "run") as w:
        with pytest.raises(ValueError, match="batch_n"):
            w.write_point(AES, windows(), batch_n=0)
        with pytest.raises(ValueError, match="status"):
            w.write_point(AES, windows(), batch_n=1, status="done")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="lack the columns"):
            w.write_point(AES, pd.DataFrame({"start_s": [0.0]}), batch_n=1)
    with pytest.raises(RunError, match="closed"):
        w.write_point(AES, windows(), batch_n=1)


def test_several_runs_together(tmp_path: Path) -> None:
    for name, energy in (("a", 1e-3), ("b", 2e-3)):
        with RunWriter.create(tmp_path / name) as w:
            w.write_point(AES, windows(energy=energy), batch_n=10)
    both = load_many([tmp_path / "a", tmp_path / "b"])
    assert set(both.points["run"]) == {"a", "b"} and set(both.manifest) == {"a", "b"}
    df = query("SELECT run, avg(energy_per_op_j) AS e FROM windows GROUP BY run ORDER BY run",
               [tmp_path / "a", tmp_path / "b"])
    assert list(df["run"]) == ["a", "b"]
    assert df["e"].iloc[1] / df["e"].iloc[0] == pytest.approx(2.0, rel=0.02)


def test_manifest_is_plain_json(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "run", plan={"name": "quick", "reps": 3},
                          calibration={"id": "cal-1"}):
        pass
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["plan"] == {"name": "quick", "reps": 3}
    assert manifest["calibration"] == {"id": "cal-1"}
    assert manifest["started_at"] <= manifest["ended_at"]


def test_a_full_disk_stores_nothing_half_and_keeps_the_points_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    writer = RunWriter.create(run_dir)
    writer.write_point(AES, windows(), batch_n=10)
    real = store_write.pq.write_table

    def full(table: object, where: object, *args: object, **kw: object) -> None:
        real(table, where, *args, **kw)  # a partial file, then the error
        raise OSError(28, "No space left on device", str(where))

    monkeypatch.setattr(store_write.pq, "write_table", full)
    with pytest.raises(DiskFullError, match=r"run: disk full; free space and --resume: cannot "
                                            r"store point sha256 64 B \(.*: No space left on "
                                            r"device\); every point stored before is intact"):
        writer.write_point(SHA, windows(), batch_n=10)
    assert not list((run_dir / PARTS).glob(".*"))  # no temporary directory or file left
    with pytest.raises(RuntimeError), writer:  # a sweep ended by an error: one error only
        raise RuntimeError("the sweep's own error")
    monkeypatch.setattr(store_write.pq, "write_table", real)
    with RunWriter.resume(run_dir) as again:
        assert again.done() == {AES.key}
        again.write_point(SHA, windows(), batch_n=10)
    assert len(load(run_dir).points) == 2
