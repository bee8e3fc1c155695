"""The same points of several runs side by side: ``rig report RUN1 RUN2 ...``.

Same board on two days, two boards, before and after a firmware change: each workload
measured in the first run and in another is matched by its factors and compared, per
response (:data:`~energyrig.results.report.tables.METRICS`), by the ratio of its means,
run / first run, with the interval of :data:`~energyrig.results.stats.RATIO_METHOD` over
the windows of each (those of the estimate, :func:`energyrig.domain.in_estimate`).

Matching: the workload's own factors (:data:`WORKLOAD_FACTORS`) always; the bench's
(:data:`BENCH_FACTORS`: board, backend, CPU clock) too, unless each run has one level of
it and the runs differ in it: it then tells the runs apart (two boards, two clocks) and
the page says so. :func:`compare_runs` computes the tables, :func:`across_html` the page and
:func:`write_across` writes ``report.html``, ``comparison.csv`` and ``methods.md`` (each
run's methods paragraph) into one directory.
"""
from __future__ import annotations

import html
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from energyrig.domain import in_estimate
from energyrig.results.report import check_report_dir, staged
from energyrig.results.report.methods import methods_markdown
from energyrig.results.report.page import (
    CSS,
    FACTOR_COLUMNS,
    SORT_JS,
    Column,
    html_table,
    methods_parts,
)
from energyrig.results.report.tables import METRICS, by_factor, plain, summarise_workloads
from energyrig.results.stats import RATIO_METHOD, ratio_of_means
from energyrig.results.store.layout import RunError
from energyrig.results.store.read import Run, load
from energyrig.units import format_si

log = logging.getLogger(__name__)

#: The factors of a workload: always matched.
WORKLOAD_FACTORS: tuple[str, ...] = ("op", "key_bits", "payload_bytes", "curve")
#: The bench's factors: matched, unless they are what tells the runs apart.
BENCH_FACTORS: tuple[str, ...] = ("backend", "board", "cpu_hz")
#: The comparison table's columns after the matched factors (one row per workload,
#: response and run; the ratio is to the first run, NaN in its own rows).
COMPARISON_COLUMNS: tuple[str, ...] = (
    "metric", "run", "mean", "ci_low", "ci_high", "n_windows", "ratio", "ratio_ci_low",
    "ratio_ci_high", "significant")


@dataclass(frozen=True)
class Across:
    """Several runs compared (:func:`compare_runs`).

    Attributes
    ----------
    runs, labels:
        The runs, the first the reference, and their names on the page (the directories'
        names, or their paths where two share a name).
    matched:
        The factors a point is matched on.
    apart:
        The bench factors that tell the runs apart: factor → each run's level.
    comparison:
        One row per workload measured in the first run and another, response and run:
        the matched factors, then :data:`COMPARISON_COLUMNS` (SI values).
    unmatched:
        The workloads not measured in every run: the matched factors, then one column per
        run label with what it holds of the workload (``ok``, ``failed``, ``not in plan``).
    """

    runs: tuple[Run, ...]
    labels: tuple[str, ...]
    matched: tuple[str, ...]
    apart: dict[str, tuple[Any, ...]]
    comparison: pd.DataFrame
    unmatched: pd.DataFrame


def _keyed(df: pd.DataFrame, factors: Sequence[str]) -> dict[tuple[Any, ...], pd.DataFrame]:
    return {tuple(plain(v) for v in keys): group
            for keys, group in df.groupby(list(factors), dropna=False, sort=False)}


def run_labels(runs: Sequence[Run]) -> tuple[str, ...]:
    """Each run's name on the page: its directory's name, or its path where two share one."""
    names = [r.name for r in runs]
    return tuple(n if names.count(n) == 1 else str(r.path) for n, r in zip(names, runs,
                                                                           strict=True))


def _levels(run: Run, factor: str) -> set[Any]:
    measured = run.points[run.points["status"] != "skipped"]
    return {plain(v) for v in measured[factor]} if factor in measured else {None}


def _apart(runs: Sequence[Run]) -> dict[str, tuple[Any, ...]]:
    """The bench factors with one level in each run but not the same in all."""
    out = {}
    for factor in BENCH_FACTORS:
        levels = [_levels(r, factor) for r in runs]
        if all(len(lv) == 1 for lv in levels) and len({next(iter(lv)) for lv in levels}) > 1:
            out[factor] = tuple(next(iter(lv)) for lv in levels)
    return out


def _status(run: Run, matched: Sequence[str]) -> dict[tuple[Any, ...], str]:
    """What ``run`` holds of each workload it planned: ``ok`` if measured, else its points'
    statuses (``failed``, ``skipped``)."""
    return {key: ("ok" if (group["status"] == "ok").any()
                  else ", ".join(sorted(set(group["status"].astype(str)))))
            for key, group in _keyed(run.points, matched).items()}


def _estimate_windows(run: Run) -> pd.DataFrame:
    ok = run.points.loc[run.points["status"] == "ok", "point_key"]
    windows = run.windows[run.windows["point_key"].isin(ok)]
    return windows[in_estimate(windows["flag_list"])] if len(windows) else windows


def _no_match(runs: Sequence[Run], k: int, matched: Sequence[str]) -> RunError:
    def ops(run: Run) -> str:
        return ", ".join(sorted(set(run.points.loc[run.points["status"] == "ok", "op"]
                                    .astype(str)))) or "none measured"
    return RunError(runs[k].path,
                    f"no point measured in both it and {runs[0].path} (points are matched on "
                    f"{', '.join(matched)}; ops measured: {ops(runs[0])} against {ops(runs[k])}"
                    "): compare runs of the same or overlapping plans")


def _figures(summary: pd.Series, col: str, first: pd.Series | None, values: pd.Series,
             confidence: float) -> dict[str, Any]:
    """One run's figures of one workload's response ``col``: its mean and CI from its
    ``summary`` and, given the ``first`` run's windows, the ratio to them of its windows'
    ``values`` (NaN where a run has fewer than two windows)."""
    row = {"mean": summary[f"{col}_mean"], "ci_low": summary[f"{col}_ci_low"],
           "ci_high": summary[f"{col}_ci_high"], "n_windows": int(summary["n_windows"]),
           "ratio": math.nan, "ratio_ci_low": math.nan, "ratio_ci_high": math.nan,
           "significant": False}
    if first is not None:
        try:
            r = ratio_of_means(first.to_numpy(dtype=float), values.to_numpy(dtype=float),
                               confidence)
        except ValueError as exc:
            log.info("%s: no ratio: %s", col, exc)
        else:
            row.update(ratio=r.ratio, ratio_ci_low=r.ci_low, ratio_ci_high=r.ci_high,
                       significant=r.significant)
    return row


def compare_runs(runs: Sequence[Run], confidence: float = 0.95) -> Across:
    """The points of ``runs`` matched and compared with the first (see the module).

    Raises
    ------
    ValueError
        Fewer than two runs.
    RunError
        A run given twice, or one that shares no measured point with the first: naming it
        (and the factors matched and the ops each measured).
    """
    if len(runs) < 2:
        raise ValueError("comparing runs needs two or more")
    seen = [r.path.resolve() for r in runs]
    if twice := next((r for r, p in zip(runs, seen, strict=True) if seen.count(p) > 1), None):
        raise RunError(twice.path, "given twice: compare different runs")
    labels = run_labels(runs)
    apart = _apart(runs)
    matched = tuple(f for f in (*WORKLOAD_FACTORS, *BENCH_FACTORS) if f not in apart)
    windows = [_keyed(_estimate_windows(r), matched) for r in runs]
    summaries = [_keyed(summarise_workloads(pd.concat(win.values()),
                                            run.points[run.points["status"] == "ok"]),
                        matched) if win else {}
                 for run, win in zip(runs, windows, strict=True)]
    for k in range(1, len(runs)):
        if not summaries[0].keys() & summaries[k].keys():
            raise _no_match(runs, k, matched)
    rows = []
    for key in summaries[0]:
        present = [k for k in range(len(runs)) if key in summaries[k]]
        if len(present) > 1:
            rows += [{**dict(zip(matched, key, strict=True)), "metric": col, "run": labels[k],
                      **_figures(summaries[k][key].iloc[0], col,
                                 windows[0][key][col] if k else None,
                                 windows[k][key][col], confidence)}
                     for col, _ in METRICS for k in present]
    statuses = [_status(r, matched) for r in runs]
    planned = dict.fromkeys(key for st in statuses for key in st
                            if any(st.get(key) == "ok" for st in statuses))
    unmatched = [{**dict(zip(matched, key, strict=True)),
                  **{label: st.get(key, "not in plan") for label, st in
                     zip(labels, statuses, strict=True)}}
                 for key in planned if any(st.get(key) != "ok" for st in statuses)]
    comparison = pd.DataFrame(rows, columns=[*matched, *COMPARISON_COLUMNS])
    return Across(runs=tuple(runs), labels=labels, matched=matched, apart=apart,
                  comparison=by_factor(comparison),
                  unmatched=by_factor(pd.DataFrame(unmatched,
                                                   columns=[*matched, *labels])))


def _value(mean: float, low: float, high: float, unit: str) -> str:
    return f"{format_si(mean, unit)}\n[{format_si(low, unit)}, {format_si(high, unit)}]"


def _significant(row: pd.Series, label: str) -> bool:
    value = row.get(f"significant@{label}")
    return value is not None and pd.notna(value) and bool(value)


def _ratio(row: pd.Series, label: str) -> str:
    ratio = row.get(f"ratio@{label}")
    if ratio is None or pd.isna(ratio):
        return "–"
    low, high = row[f"ratio_ci_low@{label}"], row[f"ratio_ci_high@{label}"]
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"×{ratio:.3g}\n[unbounded]\nnot significant"
    # the decimals that give the interval's half-width two significant digits (GUM 7.2.6)
    half = (high - low) / 2
    places = min(max(1 - math.floor(math.log10(half)), 0), 6) if half > 0 else 6
    return (f"×{ratio:.{places}f}\n[{low:.{places}f}, {high:.{places}f}]"
            + ("\nsignificant" if _significant(row, label) else "\nnot significant"))


def _metric_columns(across: Across, unit: str) -> list[Column]:
    def value(label: str) -> Column:
        return Column(label, lambda r: "–" if pd.isna(r.get(f"mean@{label}")) else _value(
            r[f"mean@{label}"], r[f"ci_low@{label}"], r[f"ci_high@{label}"], unit))

    def ratio(label: str) -> Column:
        return Column(f"{label} / {across.labels[0]}", lambda r: _ratio(r, label))

    factors = [f for f in across.matched if f == "op"
               or across.comparison[f].nunique(dropna=False) > 1]
    return [Column("difference", lambda r: "\n".join(
                f"{label} differs" for label in across.labels[1:] if _significant(r, label)),
                numeric=False),
            *(FACTOR_COLUMNS[f] for f in factors), value(across.labels[0]),
            *(c for label in across.labels[1:] for c in (value(label), ratio(label)))]


def _wide(across: Across, metric: str) -> pd.DataFrame:
    """One row per workload of ``metric``: its factors, then ``<figure>@<run label>``."""
    long = across.comparison[across.comparison["metric"] == metric]
    rows = []
    for key, group in _keyed(long, across.matched).items():
        row = dict(zip(across.matched, key, strict=True))
        for r in group.to_dict("records"):
            row.update({f"{fig}@{r['run']}": r[fig] for fig in COMPARISON_COLUMNS[2:]})
        rows.append(row)
    return pd.DataFrame(rows)


def _runs_html(across: Across) -> str:
    def row(run: Run, label: str) -> str:
        m = run.manifest
        fw = m.get("firmware") or {}
        cells = [label, str(run.path), str((m.get("plan") or {}).get("name") or "–"),
                 str(m.get("started_at") or "–"),
                 " ".join(str(fw[k]) for k in ("board", "firmware", "build", "crypto")
                          if fw.get(k)) or "–",
                 str((m.get("calibration") or {}).get("id") or "none")]
        return "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
    head = "".join(f"<th>{h}</th>" for h in ("run", "directory", "plan", "started",
                                             "firmware", "calibration"))
    return (f"<div class='scroll'><table><tr>{head}</tr>"
            + "".join(row(r, lb) for r, lb in zip(across.runs, across.labels, strict=True))
            + "</table></div>")


#: What the firmware's ``hello`` says of its build, compared between the runs.
BUILD_FIELDS: tuple[str, ...] = ("firmware", "build", "toolchain", "crypto")


def _facts(run: Run) -> dict[str, str]:
    """What a run was measured with, beyond its points: the firmware's build (a lab run's
    boards each), its conditions (``hello``) and the calibration record."""
    fw = run.manifest.get("firmware") or {}
    boards = fw.get("boards") or {"": fw}
    facts = {}
    for board, hello in boards.items():
        where = f" ({board})" if board else ""
        facts |= {f"firmware {k}{where}": str(hello[k]) for k in BUILD_FIELDS if k in hello}
        facts |= {f"{k}{where}": str(v) for k, v in (hello.get("conditions") or {}).items()}
    facts["calibration record"] = str((run.manifest.get("calibration") or {}).get("id")
                                      or "none")
    return facts


def conditions_apart(across: Across) -> list[str]:
    """What tells the runs apart besides their points: the bench factors (:attr:`Across
    .apart`), then each firmware field, condition or calibration record whose values differ
    (``not recorded`` where a run's manifest lacks it)."""
    lines = [f"{f}: " + ", ".join(f"{lb} {v}" for lb, v in zip(across.labels, levels,
                                                               strict=True))
             for f, levels in across.apart.items()]
    facts = [_facts(r) for r in across.runs]
    for name in dict.fromkeys(n for f in facts for n in f):
        values = [f.get(name, "not recorded") for f in facts]
        if len(set(values)) > 1:
            lines.append(f"{name}: " + ", ".join(f"{lb} {v}" for lb, v in
                                                 zip(across.labels, values, strict=True)))
    return lines


def across_html(across: Across) -> str:
    """The page comparing the runs: the runs, what tells them apart, per response the matched
    workloads side by side with each run's ratio to the first, the workloads not in every
    run, and each run's methods paragraph."""
    title = " vs ".join(across.labels)
    parts = [f"<h1>energyrig: {html.escape(title)}</h1>", _runs_html(across)]
    apart = conditions_apart(across)
    parts.append("<h2>What differs between the runs</h2>"
                 + ("<ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in apart) + "</ul>"
                    if apart else "<p>No bench factor, firmware build or condition, or calibration "
                                 "record differs.</p>"))
    parts.append(f"<p class='note'>Points are matched on {html.escape(', '.join(across.matched))}"
                 f". Each run's value is its mean with the 95 % CI; the ratio is to "
                 f"{html.escape(across.labels[0])}: {html.escape(RATIO_METHOD)}.</p>")
    for col, name in METRICS:
        unit = "s" if col.endswith("_s") else "J"
        parts += [f"<h2>{html.escape(name.capitalize())} per op</h2>",
                  html_table(_wide(across, col), _metric_columns(across, unit))]
    parts.append("<h2>Points not measured in every run</h2>")
    if across.unmatched.empty:
        parts.append("<p>None: every point was measured in every run.</p>")
    else:
        columns = [*(FACTOR_COLUMNS[f] for f in across.matched),
                   *(Column(label, lambda r, label=label: str(r[label]), numeric=False)
                     for label in across.labels)]
        parts.append(html_table(across.unmatched, columns))
    for run, label in zip(across.runs, across.labels, strict=True):
        parts += [f"<h2>Methods: {html.escape(label)}</h2>", *methods_parts(run)]
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>energyrig: {html.escape(title)}</title><style>{CSS}</style></head>"
            "<body>" + "\n".join(parts) + f"<script>{SORT_JS}</script></body></html>")


def write_across(run_dirs: Sequence[str | Path], out_dir: str | Path | None = None, *,
                 force: bool = False) -> Path:
    """Write the comparison of several runs: ``report.html``, ``comparison.csv``
    (:attr:`Across.comparison`) and ``methods.md`` (each run's methods) in ``out_dir``
    (by default ``report-<run>-vs-<run>...`` in the working directory), and return the
    page's path. ``force``: as :func:`~energyrig.results.report.write_report`'s.

    Raises
    ------
    RunError
        A run cannot be read, or shares no measured point with the first.
    OutputError
        ``out_dir`` is a run or part of one, or holds other files (without ``force``).
    """
    runs = [load(d) for d in run_dirs]
    across = compare_runs(runs)
    out = (Path(out_dir) if out_dir is not None
           else Path("report-" + "-vs-".join(r.name for r in runs)))
    for run in runs:  # first that it is part of no run, then (once) that it holds no other files
        check_report_dir(out, run.path, force=True)
    check_report_dir(out, runs[0].path, force=force)
    with staged(out, runs[0].path) as tmp:
        (tmp / "report.html").write_text(across_html(across), encoding="utf-8")
        across.comparison.to_csv(tmp / "comparison.csv", index=False)
        (tmp / "methods.md").write_text(
            "\n".join(methods_markdown(r, heading="##") for r in runs), encoding="utf-8")
    return out / "report.html"
