"""`make check` kills the store's writer at fewer moments than `make test`
(tests/results/test_kill_store.py, ``ENERGYRIG_KILL_MOMENTS``), but at every kind of moment:
each function the store writes with, at each step of its work (a point's write, a merge, the
removal of a merged part, between a part's files, the manifest), is still hit."""
from __future__ import annotations

from pathlib import Path

from support.make import pytest_line
from support.store_child import MOMENTS, ONE_OF_EACH_KIND, moment_kinds


def test_the_fast_tier_kills_at_one_moment_of_every_kind_the_full_set_has(
        tmp_path: Path) -> None:
    kinds = moment_kinds(tmp_path / "run")
    assert set(ONE_OF_EACH_KIND) <= set(MOMENTS)
    fast = [kinds[m] for m in ONE_OF_EACH_KIND]
    assert len(set(fast)) == len(fast)  # no kind twice: each one a step the others miss
    assert set(fast) == {kinds[m] for m in MOMENTS}
    # the kinds tell the steps apart: a point's write, a merge, a part dropped file by file
    assert ("write_table", "_write_parquet", "consolidate", "write_point", "1") in fast
    assert ("unlink", "_drop_part", "consolidate", "write_point", "2") in fast


def test_make_check_kills_at_the_kinds_and_make_test_at_every_moment() -> None:
    def given(words: list[str]) -> list[str]:
        return [w.partition("=")[2] for w in words if w.startswith("ENERGYRIG_KILL_MOMENTS=")]

    assert given(pytest_line("check")) == ["kinds"]
    assert given(pytest_line("test")) == []  # test_kill_store.py's default: all
