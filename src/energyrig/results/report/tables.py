"""The report's tables: a run's DataFrames in, DataFrames out (no matplotlib, no HTML).

What the figures and the page show: per-workload summaries, each op relative to its
family's reference, payload regressions, paired comparisons (the plan's ``[[compare]]``
pairs, else automatic ones) and the 2^k allocation of variation; the ``*_tables`` functions
give each section its own (:class:`Section`, registered in
:mod:`energyrig.results.report.sections`, whose ``report_tables`` gathers them in a
:class:`ReportTables`). Values stay SI; they become text only in the page and the figures.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from energyrig.domain import (
    KEY_FACTORS,
    at_supply,
    excluded,
    flag_list,
)
from energyrig.flags import Flag
from energyrig.opfamilies import BY_NAME, NAMES, OP_FAMILIES
from energyrig.results.compare import recorded_comparisons
from energyrig.results.footprint import Footprint, run_footprints
from energyrig.results.stats import (
    CONFIG,
    PairedComparison,
    allocation_of_variation,
    is_two_level_design,
    paired_comparison,
    payload_regression,
    select,
    selector_columns,
    summarise_per_op,
)
from energyrig.results.store.read import Run
from energyrig.results.store.schema import FLAG_LIST
from energyrig.units import format_si

WORKLOAD: tuple[str, ...] = (*CONFIG, "payload_bytes")
# Inferred family where the store has none, by the op name's first word (the families'
# data rows, energyrig.opfamilies).
FAMILY_BY_PREFIX: dict[str, str] = {prefix: fam.name for fam in OP_FAMILIES
                                    for prefix in fam.prefixes}
#: The responses the report analyses: (column of a per-op figure, its name in the report).
METRICS: tuple[tuple[str, str], ...] = (("time_per_op_s", "time"),
                                        ("net_energy_per_op_j", "net energy"))
_ALGORITHM = ["op", "key_bits", "curve", "backend"]
Pair = tuple[dict[str, Any], dict[str, Any]]


def config_label(row: pd.Series | dict[str, Any], with_board: bool = True) -> str:
    """``aes-ecb-encrypt 128``, ``ecdsa-sign p256 · esp32 hardware 240 MHz`` ..."""
    parts = [str(row["op"])]
    if pd.notna(row.get("key_bits")):
        parts.append(str(int(row["key_bits"])))
    if pd.notna(row.get("curve")):
        parts.append(str(row["curve"]))
    if with_board:
        where = [str(row["board"])]
        if row.get("backend") not in (None, "software") and pd.notna(row.get("backend")):
            where.append(str(row["backend"]))
        if pd.notna(row.get("cpu_hz")):
            where.append(format_si(row["cpu_hz"], "Hz"))
        parts.append("· " + " ".join(where))
    return " ".join(parts)


def op_verb(op: str) -> str:
    """What an op does, from its name's last word: ``rsa-sign`` → ``sign``; ``""`` when the
    name does not say (``sha256``, ``sha3-256``)."""
    words = str(op).split("-")
    return words[-1] if len(words) > 1 and words[-1].isalpha() else ""


def with_family(df: pd.DataFrame) -> pd.Series:
    """The ``family`` column of ``df``, inferred from the op name where the store has none
    (:data:`FAMILY_BY_PREFIX`), else ``"other"``."""
    inferred = df["op"].astype(str).str.split("-").str[0].map(FAMILY_BY_PREFIX)
    return inferred.where(df["family"].isna(), df["family"]).fillna("other")


def family_order(families: Iterable[str]) -> list[str]:
    """The families present, in the report's order (the firmware's:
    :data:`energyrig.opfamilies.NAMES`, then by name)."""
    present = set(families)
    return [f for f in NAMES if f in present] + sorted(present - set(NAMES))


def summarise_workloads(windows: pd.DataFrame,
                        points: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per workload (configuration and payload size) over all its windows.

    Columns: the workload's factors, ``family``, ``n_windows`` (those of the estimate),
    ``windows_excluded`` and ``excluded_reason`` (left out of it, and why:
    :func:`energyrig.domain.excluded`), ``n_points``, ``flag_list`` (its windows' and, given
    ``points``, its points' own: ``ci_target_not_met`` ..., a list as the tables hold them),
    and the per-op summary of its windows (:func:`energyrig.results.stats.summarise_per_op`, over
    the same estimate: ``time_per_op_s_mean``, ``..._ci_low``, ``..._ci_high``,
    ``mean_power_w_mean``, ...).
    """
    by_point = (points.set_index("point_key")[FLAG_LIST]
                   if points is not None else pd.Series(dtype=object))
    rows = []
    for keys, group in windows.groupby(list(WORKLOAD), dropna=False, sort=True):
        row: dict[str, Any] = dict(zip(WORKLOAD, keys, strict=True))
        row["family"] = group["family"].iloc[0]
        row["windows_excluded"], row["excluded_reason"] = excluded(group[FLAG_LIST])
        row["n_windows"] = len(group) - row["windows_excluded"]
        row["n_points"] = group["point_key"].nunique()
        row.update(summarise_per_op(group))
        own = by_point.reindex(group["point_key"].unique()).dropna()
        row[FLAG_LIST] = flag_list(f for flags in (*group[FLAG_LIST], *own) for f in flags)
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["family"] = with_family(out)
        out["label"] = [config_label(r) for _, r in out.iterrows()]
    return out


def recorded_supply_v(manifest: dict[str, Any]) -> float | None:
    """The supply voltage, V, of a run's instrument as its manifest records the fixture
    (``fixture.instrument.supply_v``); None where it names none (an instrument that measures
    the voltage rather than sets it)."""
    v = ((manifest.get("fixture") or {}).get("instrument") or {}).get("supply_v")
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def with_current_and_charge(summary: pd.DataFrame, supply_v: float | None) -> pd.DataFrame:
    """``summary`` with ``mean_current_a_mean`` (mean power / supply voltage, A) and
    ``net_charge_per_op_c_mean`` (net energy per op / supply voltage, C); NaN without a
    supply voltage."""
    return summary.assign(
        mean_current_a_mean=at_supply(summary["mean_power_w_mean"], supply_v),
        net_charge_per_op_c_mean=at_supply(summary["net_energy_per_op_j_mean"], supply_v))


def varying_factors(points: pd.DataFrame) -> list[str]:
    """The factors (:data:`energyrig.domain.KEY_FACTORS`, ``op`` always) whose values differ
    among ``points``: the columns that tell a run's points apart in the report's tables."""
    return [c for c in KEY_FACTORS
            if c == "op" or (c in points and points[c].nunique(dropna=False) > 1)]


def series_labels(points: pd.DataFrame) -> tuple[str, ...]:
    """The configurations (op, key size, curve: :func:`config_label` without the board) of
    every point the plan expanded into, failed ones too (not those skipped), in factor order
    (:func:`by_factor`): the same for every run of a plan, whatever failed."""
    planned = by_factor(points[points["status"] != "skipped"])
    return tuple(dict.fromkeys(config_label(r, with_board=False)
                               for _, r in planned.iterrows()))


def by_factor(df: pd.DataFrame) -> pd.DataFrame:
    """``df``'s rows sorted by factor (:data:`energyrig.domain.KEY_FACTORS`, in that order;
    missing values first), not in the order they were measured."""
    return df.sort_values([c for c in KEY_FACTORS if c in df], na_position="first",
                          kind="stable", ignore_index=True)


def flag_legend(points: pd.DataFrame, windows: pd.DataFrame,
                flags: Mapping[str, Flag]) -> pd.DataFrame:
    """Every flag the run's points or windows carry, one row each in the order of ``flags``
    (the registry of every layer's flags, :data:`energyrig.rig.flags.FLAGS`; then flags it
    does not know, by name): ``flag``, ``points`` and ``windows`` (how many carry it),
    ``meaning`` and ``action`` (the :class:`~energyrig.flags.Flag`'s note; empty for a flag
    it does not know)."""
    def counts(flags: pd.Series) -> pd.Series:
        return flags.explode().dropna().value_counts()

    by_point, by_window = counts(points[FLAG_LIST]), counts(windows[FLAG_LIST])
    present = set(by_point.index) | set(by_window.index)
    order = [f for f in flags if f in present] + sorted(present - set(flags))
    notes = [flags.get(f) for f in order]
    return pd.DataFrame({"flag": order,
                         "points": [int(by_point.get(f, 0)) for f in order],
                         "windows": [int(by_window.get(f, 0)) for f in order],
                         "meaning": [n.meaning if n else "" for n in notes],
                         "action": [n.action if n else "" for n in notes]},
                        columns=["flag", "points", "windows", "meaning", "action"])


#: A point's first window is a warm-up outlier when its time per op lies more than this many
#: robust standard deviations (1.4826 × the median absolute deviation, at least 1 % of the
#: median) above the median of the point's other windows.
WARMUP_SPREAD = 5.0


def warmup_outliers(windows: pd.DataFrame) -> pd.DataFrame:
    """The first window of each point with at least 3 windows, where its time per op is a
    warm-up outlier (:data:`WARMUP_SPREAD`): slower than the point's other windows.

    Returns the first windows' rows (the windows table's columns) with ``others_median_s``
    (median time per op of the point's other windows, s) and ``others_mean_s``; they stay
    in every mean and interval of the report, which shows them apart as well.
    """
    w = windows.dropna(subset=["time_per_op_s"])
    first = w["window"] == w.groupby("point_key")["window"].transform("min")
    others = w[~first].groupby("point_key")["time_per_op_s"]
    median = others.median()
    mad = (w[~first]["time_per_op_s"] - w[~first]["point_key"].map(median)).abs() \
        .groupby(w[~first]["point_key"]).median()
    spread = np.maximum(1.4826 * mad, 0.01 * median)
    rows = w[first].assign(others_median_s=lambda d: d["point_key"].map(median),
                           others_mean_s=lambda d: d["point_key"].map(others.mean()),
                           spread=lambda d: d["point_key"].map(spread),
                           n_others=lambda d: d["point_key"].map(others.size()))
    outlying = (rows["n_others"] >= 2) & (
        rows["time_per_op_s"] - rows["others_median_s"] > WARMUP_SPREAD * rows["spread"])
    return by_factor(rows[outlying].drop(columns=["spread", "n_others"]))


def _references(family: str, rows: pd.DataFrame) -> pd.DataFrame:
    """Rows that are references of ``family`` (its data row's ``references``), with their
    ``priority`` (0 = preferred)."""
    references = BY_NAME[family].references if family in BY_NAME else ()
    priority = [next((i for i, ref in enumerate(references) if ref.matches(r)), -1)
                for _, r in rows.iterrows()]
    out = rows.assign(priority=priority)
    return out[out["priority"] >= 0]


def _reference_row(row: pd.Series, candidates: pd.DataFrame) -> pd.Series | None:
    """The reference ``row`` is compared with (see :func:`_references`), or None.

    Tried in turn: a reference doing the same (same last word), one of the same algorithm
    (same first word), one whose name or the op's does not say what it does (rc4, sha256).
    """
    verb = op_verb(row["op"])
    for same in (lambda op: op_verb(op) == verb,
                 lambda op: str(op).split("-")[0] == str(row["op"]).split("-")[0],
                 lambda op: not verb or not op_verb(op)):
        fitting = candidates[[bool(same(op)) for op in candidates["op"]]]
        if len(fitting):
            return fitting.sort_values("priority", kind="stable").iloc[0]
    return None


def auto_comparisons(points: pd.DataFrame) -> list[Pair]:
    """Pairs (configuration, family reference) to compare, from the points present."""
    configs = points.assign(family=with_family(points)).drop_duplicates(_ALGORITHM)
    pairs = []
    for family, fam in configs.groupby("family", sort=False):
        refs = _references(str(family), fam)
        for _, row in fam.iterrows():
            ref = _reference_row(row, refs)
            if ref is None or _algorithm(row) == _algorithm(ref):
                continue
            pairs.append((_algorithm(row), _algorithm(ref)))
    return pairs


def _algorithm(row: pd.Series) -> dict[str, Any]:
    """A row's algorithm (op, key size, curve, backend) as plain values, None where missing."""
    return {c: plain(row[c]) for c in _ALGORITHM}


def plain(value: Any) -> Any:
    """A table cell as a plain Python value, None where missing."""
    if pd.isna(value):
        return None
    return value.item() if isinstance(value, np.generic) else value


#: The columns a paired comparison matches conditions on (:func:`comparisons`).
PAIRED_ON: tuple[str, ...] = ("board", "cpu_hz", "payload_bytes", "rep")


def comparisons(points: pd.DataFrame, pairs: Sequence[Pair]) -> tuple[pd.DataFrame, list[str]]:
    """Paired comparisons of each pair on time and net energy
    (:func:`~energyrig.results.stats.paired_comparison`), matched on :data:`PAIRED_ON`; a
    pair one side of which has no payload size (a key expansion against an encryption) is
    matched without it. The one analysis behind the paired-comparison table and the bars
    relative to each family's reference, so that the two never disagree.

    Returns
    -------
    tuple[DataFrame, list[str]]
        One row per pair and metric: ``metric`` (``time``, ``net energy``), ``family`` (of
        A), the :class:`~energyrig.results.stats.PairedComparison`'s fields (``a``, ``b``,
        ``ratio``, ``ratio_ci_low``, ``ratio_ci_high`` ...) and ``significant``; and notes
        on the pairs that could not be compared.
    """
    rows, notes = [], []
    # the columns a side is read for: its selectors', the conditions' and the family's
    named = {c for pair in pairs for side in pair for c in selector_columns(side)} | {
        *PAIRED_ON, "op", "family"}
    keys = points[[c for c in points.columns if c in named]]
    for a, b in pairs:
        sides = [select(keys, s) for s in (a, b)]
        on = [c for c in PAIRED_ON if not (c == "payload_bytes"
                                           and any(s[c].isna().all() for s in sides))]
        family = with_family(sides[0]).iloc[0] if len(sides[0]) else ""
        for col, name in METRICS:
            try:
                result: PairedComparison = paired_comparison(
                    points, a, b, on=on, response=f"{col}_mean",
                    labels=(config_label(a, with_board=False), config_label(b, with_board=False)))
            except ValueError as exc:
                notes.append(str(exc))
                break
            rows.append({"metric": name, "family": family, **asdict(result),
                         "significant": result.significant})
    return pd.DataFrame(rows), sorted(set(notes))


def design_factors(points: pd.DataFrame) -> list[str] | None:
    """The factors of a 2^k design, if the ok points form one (aliased factors merged)."""
    candidates = [c for c in WORKLOAD if points[c].nunique(dropna=False) == 2]
    factors: list[str] = []
    for c in candidates:
        aliased = any(len(points.groupby([f, c], dropna=False)) == 2 for f in factors)
        if not aliased:
            factors.append(c)
    varying = [c for c in WORKLOAD if points[c].nunique(dropna=False) > 1]
    if len(factors) < 2 or len(varying) != len(candidates):
        return None
    return factors if is_two_level_design(points, factors) else None


def factorial(points: pd.DataFrame, factors: list[str]
              ) -> tuple[pd.DataFrame, dict[str, tuple[Any, Any]]]:
    """Allocation of variation of time and net energy per op, raw and log scale, and the
    factors' (low, high) levels."""
    data = points
    counts = points.groupby(factors, dropna=False).size()
    if counts.nunique() != 1:  # unequal repetitions: analyse the cell means
        data = points.groupby(factors, dropna=False, as_index=False)[
            [f"{c}_mean" for c, _ in METRICS]].mean()
    tables = []
    for col, name in METRICS:
        for log_scale in (False, True):
            t = allocation_of_variation(data, factors, f"{col}_mean", log=log_scale)
            tables.append(t.assign(response=name, scale="log10" if log_scale else "raw"))
    return pd.concat(tables, ignore_index=True), tables[0].attrs["levels"]


@dataclass(frozen=True)
class Factorial:
    """A 2^k design found in the ok points.

    Attributes
    ----------
    factors:
        The design's factors (columns of the points table).
    allocation:
        :func:`factorial`'s table: per response (``time``, ``net energy``) and scale
        (``raw``, ``log10``), each term's effect, CI and fraction of variation.
    levels:
        Each factor's (low, high) levels.
    """

    factors: list[str]
    allocation: pd.DataFrame
    levels: dict[str, tuple[Any, Any]]


@dataclass(frozen=True)
class ReportTables:
    """Everything the report shows of a run, as tables (SI values): what every section
    reads, and each section's own tables (:attr:`parts`, read as attributes).

    Attributes
    ----------
    points:
        Every point of the run, with its ``family`` (inferred where the store has none),
        sorted by factor (:func:`by_factor`).
    windows:
        The windows of the ok points.
    summary:
        :func:`summarise_workloads` of those windows; empty when there is none, and then no
        section that needs a measured point (:attr:`Section.measured`) has tables.
    supply_v:
        The supply voltage the currents and charges are derived at
        (:func:`recorded_supply_v`), V; None where unknown.
    factors:
        :func:`varying_factors` of the points: the columns of every table of points.
    series:
        :func:`series_labels` of the points: the per-op figures' series, each drawn in the
        colour of its place here in every figure.
    sections:
        The report's sections, in the page's order
        (:data:`energyrig.results.report.sections.SECTIONS` unless told otherwise).
    flag_notes:
        What each flag means (the registry of every layer's flags,
        :data:`energyrig.rig.flags.FLAGS`, which the results layer cannot import): the
        flags section's legend (:func:`flag_legend`).
    parts:
        Each section's own tables by name (:attr:`Section.tables`), also read as attributes:
        ``tables.relative``, ``tables.fits``, ``tables.comparisons`` ...
    """

    points: pd.DataFrame
    windows: pd.DataFrame
    summary: pd.DataFrame
    supply_v: float | None
    factors: list[str]
    series: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()
    flag_notes: Mapping[str, Flag] = field(default_factory=dict)
    parts: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        """A section's table by its name (:attr:`parts`)."""
        parts = self.__dict__.get("parts", {})
        if name in parts:
            return parts[name]
        raise AttributeError(f"the report has no table {name!r} (no section computed one, "
                             "or the run has no measured point)")

    @property
    def measured(self) -> bool:
        """Whether some point was measured (the summary has a row)."""
        return not self.summary.empty

    @property
    def ok(self) -> pd.DataFrame:
        """The points measured (status ``ok``)."""
        return self.points[self.points["status"] == "ok"]

    @property
    def families(self) -> list[str]:
        """The families of the summary, in the report's order."""
        return family_order(self.summary["family"]) if len(self.summary) else []

    def family_fits(self, family: str) -> dict[str, pd.DataFrame]:
        """The payload regressions (``fits``) of the ops of ``family``."""
        ops = self.summary.loc[self.summary["family"] == family, "op"]
        return {col: fit[fit["op"].isin(ops)] for col, fit in self.fits.items()}

    def has_payload_fits(self, family: str) -> bool:
        """Whether an op of ``family`` has a payload regression."""
        return any(len(fit) for fit in self.family_fits(family).values())

    def has_relative(self, family: str) -> bool:
        """Whether an op of ``family`` was compared with the family's reference."""
        return family in set(self.relative.get("family", ()))


class Drawn(Protocol):
    """A section's figure as drawn (:class:`energyrig.results.report.figures.Drawing`)."""

    figure: Any

    def data(self) -> dict[str, Any]:
        """What the figure shows, written beside its PNG as JSON."""
        ...


@dataclass(frozen=True)
class Section:
    """One part of the report, registered once: its tables, its figure and its HTML.

    Attributes
    ----------
    name:
        What the section is; its figures are named by it (:class:`~energyrig.results.report
        .page.Images`) and written as ``<file>-<family>.png`` (per family) or
        ``<file>.png``.
    html:
        Its part of the page: ``html(run, tables, family, images)`` → HTML pieces; ``family``
        is ``""`` for a section of the whole run; ``images``: its figures' file names by
        family (``""`` for the run's), those drawn.
    tables:
        Its own tables, from the run and the tables computed before it (those of every
        section earlier in the order): ``tables(run, report_tables)`` → tables by name;
        pandas only. None: it shows tables other sections or the run already have.
    figure:
        Its figure: ``figure(tables, family)`` → a drawing or None (nothing to draw); it
        imports matplotlib inside, so that only drawing loads it. None: no figure.
    per_family:
        Shown once per op family, under the family's heading, with the other per-family
        sections (at the place of the first of them); else once for the run.
    measured:
        Shown (and its tables computed) only when some point was measured; the page says
        that none was in place of the first such section.
    file:
        Its figures' file name (before the family); ``name`` with ``-`` for ``_`` when empty.
    """

    name: str
    html: Callable[[Run, ReportTables, str, Mapping[str, str]], list[str]]
    tables: Callable[[Run, ReportTables], Mapping[str, Any]] | None = None
    figure: Callable[[ReportTables, str], Drawn | None] | None = None
    per_family: bool = False
    measured: bool = False
    file: str = ""

    @property
    def file_name(self) -> str:
        """Its figures' file name, before the family and ``.png``."""
        return self.file or self.name.replace("_", "-")


def footprint_table(points: pd.DataFrame, footprints: dict[str, Footprint]) -> pd.DataFrame:
    """Flash and RAM of each op the run has points of, from its board's footprint (what the
    op adds to the firmware without any op, bytes): board, op, backend, flash_bytes,
    ram_bytes, in the order of the footprint."""
    rows = []
    for board, footprint in footprints.items():
        ran = points.loc[points["board"].astype(str).str.replace("/", "_") == board,
                         ["op", "backend"]]
        pairs = set(ran.itertuples(index=False, name=None))
        rows += [{"board": board, "op": o.op, "backend": o.backend,
                  "flash_bytes": o.flash_bytes, "ram_bytes": o.ram_bytes}
                 for o in footprint.ops if (o.op, o.backend) in pairs]
    return pd.DataFrame(rows, columns=["board", "op", "backend", "flash_bytes", "ram_bytes"])


def flag_tables(run: Run, tables: ReportTables) -> dict[str, Any]:
    """The flags section's table: ``flags``, the :func:`flag_legend` of every point and
    window of the run."""
    return {"flags": flag_legend(tables.points, run.windows, tables.flag_notes)}


def reference_comparisons(points: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """:func:`comparisons` of each configuration of ``points`` against its family's
    reference (:func:`auto_comparisons`; never a reference against itself)."""
    return comparisons(points, auto_comparisons(points))


def relative_tables(run: Run, tables: ReportTables) -> dict[str, Any]:
    """``relative``: :func:`reference_comparisons` of the ok points, the rows the figures
    draw as bars relative to the reference and the comparisons section lists
    (:func:`comparison_tables`); ``relative_notes``: the pairs that could not be compared."""
    table, notes = reference_comparisons(tables.ok)
    return {"relative": table, "relative_notes": notes}


def payload_tables(run: Run, tables: ReportTables) -> dict[str, Any]:
    """``fits``: per metric column (``time_per_op_s``, ``net_energy_per_op_j``), the payload
    regressions of :func:`~energyrig.results.stats.payload_regression` over the ok points."""
    return {"fits": {col: payload_regression(tables.ok, f"{col}_mean") for col, _ in METRICS}}


def warmup_tables(run: Run, tables: ReportTables) -> dict[str, Any]:
    """``warmups``: :func:`warmup_outliers` of the windows."""
    return {"warmups": warmup_outliers(tables.windows)}


def comparison_tables(run: Run, tables: ReportTables) -> dict[str, Any]:
    """``comparisons``: :func:`comparisons` of the plan's pairs (``origin`` ``plan``), then
    the rows of each configuration against its family's reference (``origin``
    ``reference``: the very rows of ``relative``, which the figures draw, when that section
    computed them; else :func:`reference_comparisons`); ``comparison_notes``: why some pairs
    could not be compared; ``planned_comparisons``: whether the plan names pairs
    (``[[compare]]``).

    Raises
    ------
    ConfigError
        The plan recorded in the manifest has a malformed ``[[compare]]`` entry.
    """
    planned = recorded_comparisons(run.manifest.get("plan") or {}, run.path / "manifest.json")
    plan, plan_notes = comparisons(tables.ok, [c.selectors() for c in planned])
    reference, notes = ((tables.parts["relative"], tables.parts["relative_notes"])
                        if "relative" in tables.parts else reference_comparisons(tables.ok))
    parts = [t for t in (plan.assign(origin="plan"), reference.assign(origin="reference"))
             if len(t)]
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["origin"])
    return {"comparisons": table, "comparison_notes": sorted({*plan_notes, *notes}),
            "planned_comparisons": bool(planned)}


def factorial_tables(run: Run, tables: ReportTables) -> dict[str, Any]:
    """``factorial``: the 2^k design of the ok points (:class:`Factorial`), if they form
    one, else None."""
    factors = design_factors(tables.ok)
    return {"factorial": Factorial(factors, *factorial(tables.ok, factors)) if factors
            else None}


def footprint_tables(run: Run, tables: ReportTables) -> dict[str, Any]:
    """``footprints``: the footprint of each board's firmware the run keeps, by board;
    ``footprint``: :func:`footprint_table` of the points."""
    footprints = run_footprints(run.path)
    return {"footprints": footprints, "footprint": footprint_table(tables.points, footprints)}
