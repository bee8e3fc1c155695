"""A merge folds the parts its writer stored from the tables it wrote to their files, without
reading them back (the store's CPU, docs/performance.md), into the very segments a merge that
reads those files writes."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from energyrig.domain import Point, Window
from energyrig.results import RunWriter, load
from energyrig.results.store import write
from energyrig.results.store.layout import PARTS, POINTS, WINDOWS

U = {"net_energy_per_op_u_j": 3.7e-9, "time_per_op_u_s": 1.3e-7,
     "uncertainty_budget": [{"component": "repeatability", "type": "A", "u_j": 1e-9,
                             "source": "the windows' spread"}]}


def _store(writer: RunWriter) -> None:
    """Points with every kind of cell: missing factors and values, flags, corrections and
    uncertainties, a point's own flags, a failed and a skipped point."""
    for rep in range(3):
        windows = [Window(start_s=0.1 * k, end_s=0.1 * k + 0.02, samples=2000,
                          energy_j=1e-4 * (1 + 0.01 * k + rep), baseline_w=3e-3,
                          flags=("stream_loss",) if k == 1 else (),
                          cycles=None if k == 2 else 1_280_000,
                          true_energy_j=None if rep else 1e-4,
                          corrections=(("gain", 1.01), ("offset_a[1]", 2e-6)),
                          uncertainty=(("baseline noise", 2e-7),))
                   for k in range(4)]
        writer.write_point(Point(op="aes-ecb-encrypt", board="b", key_bits=128,
                                 payload_bytes=64 if rep else None, rep=rep), windows,
                           batch_n=100, uncertainty=U if rep else None,
                           flags=("ci_target_not_met",) if rep == 2 else ())
    writer.write_failed(Point(op="rsa-keygen", board="b", key_bits=8192), "no answer")
    writer.write_skipped(Point(op="sha256", board="b", key_bits=128), "takes no key_bits")


def test_a_merge_reads_no_part_its_writer_stored(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[Path] = []
    real = write.read_table

    def recording(run_dir: Path, paths: list[Path], *args: object, **kwargs: object) -> object:
        read.extend(paths)
        return real(run_dir, paths, *args, **kwargs)

    monkeypatch.setattr(write, "read_table", recording)
    with RunWriter.create(tmp_path / "run") as writer:
        _store(writer)
        writer.consolidate()
        assert not read
        assert not (tmp_path / "run" / PARTS).exists()
        _store(writer)  # already stored: nothing written
    assert len(load(tmp_path / "run").points) == 5


def test_the_segments_folded_from_the_written_tables_are_those_read_from_the_parts(
        tmp_path: Path) -> None:
    writer = RunWriter.create(tmp_path / "memory")
    _store(writer)
    shutil.copytree(tmp_path / "memory", tmp_path / "files")  # the parts, before any merge
    writer.close()
    RunWriter.resume(tmp_path / "files").close()  # its merge reads the same parts' files
    for name in (WINDOWS, POINTS):
        segments = [sorted((tmp_path / run / name).iterdir()) for run in ("memory", "files")]
        assert [p.name for p in segments[0]] == [p.name for p in segments[1]] == [
            "seg-000001.parquet"]
        assert segments[0][0].read_bytes() == segments[1][0].read_bytes(), name
