"""The report of a run: ``report.html`` with its figures beside it, a page of sections;
its tables as Markdown or LaTeX (:mod:`~energyrig.results.report.markup`).

Each section is one registered object holding its tables, its figure and its HTML
(:data:`~energyrig.results.report.sections.SECTIONS`); three steps walk them:

1. :func:`~energyrig.results.report.sections.report_tables`: the run's DataFrames in, the
   report's tables out (:mod:`~energyrig.results.report.tables`: pandas and the statistics
   of :mod:`energyrig.results.stats`; SI values);
2. :func:`~energyrig.results.report.figures.draw_figures`: matplotlib drawings of those
   tables, written as PNG and SVG files with the numbers drawn beside them (JSON, CSV; the
   only module that imports matplotlib);
3. :func:`~energyrig.results.report.page.page_html`: the HTML of the tables and the
   figures' names.

:mod:`~energyrig.results.report.traces` adds the traces of the windows worth a look when
the sweep kept their samples.

:func:`write_report` runs the three. Units become text only in the figures and the page,
through :mod:`energyrig.units`.
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from energyrig.flags import Flag
from energyrig.results.report.methods import methods_markdown
from energyrig.results.report.markup import TEXT_FORMATS
from energyrig.results.report.page import page_html
from energyrig.results.report.sections import report_tables
from energyrig.results.outputs import OutputError
from energyrig.results.store.layout import RUN_ENTRIES, RunError, listed
from energyrig.results.store.read import load
from energyrig.results.store.schema import flat

log = logging.getLogger(__name__)

#: The files that make a directory a report's (the page; the tables as Markdown or LaTeX:
#: :data:`~energyrig.results.report.markup.TEXT_FORMATS`), which a new report may replace.
REPORT_FILES: tuple[str, ...] = ("report.html", "report.md", "report.tex")


def check_report_dir(out: Path, run_dir: Path, *, force: bool = False) -> None:
    """Refuse a report directory that would destroy what is not a report: the report
    replaces its whole directory, so it must not be the run, hold it or be part of it
    (always), nor an existing directory of other files (unless ``force``).

    Raises
    ------
    OutputError
        Naming the directory and what to do.
    """
    run, target = run_dir.resolve(), out.resolve()
    part = target.relative_to(run).parts[:1] if target.is_relative_to(run) else ()
    relation = ("is" if target == run else "holds" if target in run.parents
                else "is part of" if part and part[0] in RUN_ENTRIES - {"report"} else "")
    if relation:
        raise OutputError(out, f"--out {relation} the run {run_dir}: the report replaces its "
                               "whole directory, which would delete the run; choose another "
                               "--out")
    if out.exists() and not out.is_dir():
        raise OutputError(out, "--out is a file; give a directory")
    if out.is_dir() and not force and not any((out / f).exists() for f in REPORT_FILES) and (
            others := sorted(p.name for p in out.iterdir())):
        raise OutputError(out, f"--out holds files that are not a report ({listed(others)}): "
                               "the report replaces the whole directory; give --force to "
                               "replace them, or choose another --out")


@contextmanager
def staged(out: Path, owner: Path) -> Iterator[Path]:
    """A new directory beside ``out`` to write a report into, swapped in for ``out`` when the
    block ends without error: a full disk or an error leaves the previous report as it was
    and no half-written page or 0-byte figure.

    Raises
    ------
    RunError
        Naming ``owner`` (the run reported): the directory cannot be written.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        yield tmp
        if out.exists():
            old = out.with_name(f".{out.name}-old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except OSError as exc:
        raise RunError(owner, f"cannot write the report in {out}: {exc.strerror or exc}; "
                              "the previous report, if any, is unchanged") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_report(run_dir: str | Path, out_dir: str | Path | None = None, *,
                 flags: Mapping[str, Flag], csv: bool = False, force: bool = False) -> Path:
    """Write ``report.html`` and its figures for a run (and, with ``csv``, the run's
    points and windows tables as ``points.csv`` and ``windows.csv`` beside it). Each figure
    is a PNG with its SVG twin, its data as JSON and its points as CSV
    (:func:`~energyrig.results.report.figures.draw_figures`). The tables as Markdown or LaTeX
    that the directory held (``report.md``, ``report.tex``:
    :func:`~energyrig.results.report.markup.write_tables`) are written anew with it.

    Parameters
    ----------
    run_dir:
        The run directory (finished or still being written: what is there is reported).
    out_dir:
        Where to write; ``run_dir/report`` by default.
    flags:
        What each flag the run carries means, for the page's legend: the registry of every
        layer's flags (:data:`energyrig.rig.flags.FLAGS`, which the results layer cannot
        import).
    csv:
        Also write every point and every window as CSV (one row each, SI units as the
        column names say), for spreadsheets.
    force:
        Replace an ``out_dir`` that holds files no report wrote (:func:`check_report_dir`;
        a previous report is replaced without it).

    Returns
    -------
    Path
        The path of ``report.html``.

    Raises
    ------
    ConfigError
        The plan recorded in the manifest has a malformed ``[[compare]]`` entry.
    OutputError
        ``out_dir`` is the run or part of it, or holds other files (without ``force``).
    """
    from energyrig.results.report.figures import (
        draw_figures,  # matplotlib: only to draw
    )
    from energyrig.results.report.traces import draw_traces, traces_html

    run = load(run_dir)
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    check_report_dir(out, run.path, force=force)
    tables = report_tables(run, flags)
    with staged(out, run.path) as tmp:
        page = page_html(run, tables, draw_figures(tables, tmp))
        page = page.replace("</body>", traces_html(draw_traces(run, tmp)) + "</body>")
        (tmp / "report.html").write_text(page, encoding="utf-8")
        (tmp / "methods.md").write_text(methods_markdown(run), encoding="utf-8")
        for suffix, writer in TEXT_FORMATS.values():  # the tables it held, written anew
            if (out / f"report{suffix}").exists():
                (tmp / f"report{suffix}").write_text(writer(run, tables), encoding="utf-8")
        if csv:
            flat(run.points).to_csv(tmp / "points.csv", index=False)
            flat(run.windows).to_csv(tmp / "windows.csv", index=False)
    path = out / "report.html"
    log.info("report written to %s", path)
    return path


def write_tables(run_dir: str | Path, out_dir: str | Path | None = None, *,
                 fmt: str, flags: Mapping[str, Flag]) -> Path:
    """Write the run's tables as ``report.md`` or ``report.tex``
    (:data:`~energyrig.results.report.markup.TEXT_FORMATS`) into ``out_dir``
    (``run_dir/report`` by default), beside what else is there (an HTML report stays).

    Parameters
    ----------
    run_dir:
        The run directory (finished or still being written: what is there).
    out_dir:
        Where to write; refused when it is the run or part of it
        (:func:`~energyrig.results.report.check_report_dir`).
    fmt:
        ``"md"`` or ``"tex"``.
    flags:
        What each flag means (:data:`energyrig.rig.flags.FLAGS`), for the line under the
        tables.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    OutputError
        ``out_dir`` is the run or part of it, or a file.
    RunError
        The file cannot be written (the previous one, if any, is unchanged).
    """
    suffix, writer = TEXT_FORMATS[fmt]
    run = load(run_dir)
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    check_report_dir(out, run.path, force=True)  # one file: nothing else is replaced
    text = writer(run, report_tables(run, flags, sections=()))
    path = out / f"report{suffix}"
    tmp = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=suffix, dir=out)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise RunError(run.path, f"cannot write {path}: {exc.strerror or exc}; the previous "
                                 "one, if any, is unchanged") from None
    return path
