"""benchmarks/check.py, the check mode of the benchmarks (issue 24): the figures
docs/performance.md marks, and which of a run's figures fell by more than 20 %. Nothing
here times anything: the runs are saved --json objects."""
from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from support.paths import ROOT



def load_check():
    spec = importlib.util.spec_from_file_location("bench_check", ROOT / "benchmarks" / "check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


check = load_check()

PAGE = """# Performance
| | |
<!-- bench:decode.decode_samples_per_s=3.0e8 -->
<!-- bench:decode.ratio=400 -->
<!-- bench:decode.peak_rss_mb=80 lower -->
"""


def test_the_page_marks_the_decoders_headline_figures_under_keys_its_json_prints():
    figures = check.read_figures((ROOT / "docs" / "performance.md").read_text(encoding="utf-8"))
    decode = {f.key: f for f in figures if f.bench == "decode"}
    assert {"samples_per_s", "decode_samples_per_s", "ratio", "peak_rss_mb"} <= decode.keys()
    assert decode["peak_rss_mb"].lower_is_better and not decode["ratio"].lower_is_better
    source = (ROOT / "benchmarks" / "decode.py").read_text()
    for f in figures:
        assert (ROOT / "benchmarks" / f"{f.bench}.py").is_file() and f.recorded > 0, f.name
    for key in decode:
        assert f'"{key}":' in source, key


def test_a_name_marked_twice_is_refused():
    with pytest.raises(ValueError, match="decode.ratio"):
        check.read_figures(PAGE + "<!-- bench:decode.ratio=500 -->\n")


@pytest.mark.parametrize("run, fallen", [
    ({"decode_samples_per_s": 2.5e8, "ratio": 330, "peak_rss_mb": 95}, []),          # -17 %, -18 %, +19 %
    ({"decode_samples_per_s": 2.3e8, "ratio": 500, "peak_rss_mb": 80}, ["decode.decode_samples_per_s"]),
    ({"decode_samples_per_s": 3.5e8, "ratio": 400, "peak_rss_mb": 100}, ["decode.peak_rss_mb"]),  # +25 %
    ({"decode_samples_per_s": 3.5e8, "peak_rss_mb": 60}, ["decode.ratio"]),           # no such key
])
def test_figures_that_fell_by_more_than_a_fifth_are_named_and_fail_the_check(tmp_path, capsys, run, fallen):
    page, saved = tmp_path / "performance.md", tmp_path / "decode.json"
    page.write_text(PAGE)
    saved.write_text("progress noise\n" + json.dumps({**run, "load_average": [0.4, 0.5, 0.6]}) + "\n")
    code = check.main(["--page", str(page), "--results", f"decode={saved}"])
    out = capsys.readouterr().out
    assert code == (1 if fallen else 0)
    assert sorted(line.split()[1].rstrip(":") for line in out.splitlines()
                  if line.startswith(("FELL", "MISSING"))) == fallen
    assert "load average 0.4" in out


def test_the_best_of_several_runs_counts():
    figures = check.read_figures(PAGE)
    runs = [{"decode_samples_per_s": 1e8, "ratio": 100, "peak_rss_mb": 200},
            {"decode_samples_per_s": 2.9e8, "ratio": 390, "peak_rss_mb": 81}]
    assert not any(v.regressed(0.2) for v in check.compare(figures, {"decode": runs}))


def test_a_benchmark_the_page_does_not_mark_is_a_usage_error(tmp_path, capsys):
    page = tmp_path / "performance.md"
    page.write_text(PAGE)
    assert check.main(["--page", str(page), "windows"]) == 2
    assert "no figure marked for windows" in capsys.readouterr().err
