"""`rig report RUN_DIR... [--out DIR] [--format html|md|tex]`: the report of a run (HTML)
or its tables as Markdown or LaTeX, or several runs compared."""
from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to ``app``."""

    @app.command()
    def report(
        run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR...", file_okay=False,
                                              help="A run directory written by `rig sweep`; "
                                                   "several: their points compared with "
                                                   "the first's."),
        out: Path | None = typer.Option(None, "--out", "-o", file_okay=False,
                                        help="Where to write report.html and its PNG "
                                             "figures (default: RUN_DIR/report; for "
                                             "several runs report-RUN1-vs-RUN2... here)."),
        csv: bool = typer.Option(False, "--csv",
                                 help="Also write points.csv and windows.csv (one row per "
                                      "point, per window) beside report.html; with "
                                      "several runs comparison.csv is always written."),
        fmt: str = typer.Option("html", "--format", metavar="html|md|tex",
                                help="html: report.html with its figures; md or tex: the "
                                     "tables alone, one per op family (value ± U), as "
                                     "report.md (Markdown) or report.tex (LaTeX booktabs) "
                                     "in the --out directory, beside what is there."),
        force: bool = typer.Option(False, "--force",
                                   help="Replace an --out directory that holds files no "
                                        "report wrote (a previous report is replaced "
                                        "anyway; the run itself never)."),
    ) -> None:
        """Write report.html (each figure a PNG, with its SVG and the CSV of its numbers
        beside it) for a run directory; with --format md or tex, its tables alone.

        Per op family: time, gross and net energy per op (J and Wh) with 95 % CIs, mean power,
        95 % CI and cycles; energy against time (best trade-off ringed); time and
        energy against payload size with fitted lines; each op relative to its
        family's reference (AES-128, SHA-256, RSA-2048); paired comparisons; the
        allocation of variation of a 2^k design; failed and skipped points.

        A run still being written is reported as far as it goes. Every report ends with
        a methods paragraph (instrument, calibration, firmware, seed, software), also
        written to methods.md.

        Several runs: the points they share (matched by op, key size, payload, curve and,
        unless it is what differs between the runs, board, backend and clock) side by side,
        each run's ratio to the first with its 95 % CI (Fieller), the significant
        differences flagged; comparison.csv holds the table.

        Examples: rig report runs/symmetric --out /tmp/report;
        rig report runs/symmetric --csv (for a spreadsheet);
        rig report runs/monday runs/tuesday --out /tmp/days
        rig report runs/symmetric --format md (tables for a README)
        """
        if fmt not in ("html", "md", "tex"):
            raise typer.BadParameter(f"{fmt!r}: give html, md or tex", param_hint="'--format'")
        if csv and fmt != "html":
            raise typer.BadParameter("--csv writes the tables of the HTML report; give it "
                                     "without --format or with --format html",
                                     param_hint="'--csv'")
        # pandas, scipy and matplotlib load only when a report is written
        from energyrig.results.report import write_report
        from energyrig.results.report.across import write_across
        from energyrig.results.store.read import read_manifest
        from energyrig.results.versions import figure_changes
        from energyrig.rig.flags import FLAGS

        for run_dir in run_dirs:
            if changes := figure_changes(read_manifest(run_dir)):
                typer.echo(f"rig: warning: {run_dir} was measured with other versions of "
                           f"what computes its figures ({'; '.join(changes)}): `rig "
                           f"reanalyze {run_dir}` shows whether they move", err=True)

        if len(run_dirs) > 1:
            if fmt != "html":
                raise typer.BadParameter("--format md|tex writes the tables of one run; "
                                         "several runs are compared in HTML",
                                         param_hint="'--format'")
            path = write_across(run_dirs, out, force=force)
            typer.echo(f"comparison written: {path} (table: "
                       f"{path.with_name('comparison.csv')})")
            return
        run_dir = run_dirs[0]
        if fmt != "html":
            from energyrig.results.report import write_tables

            typer.echo(f"tables written: {write_tables(run_dir, out, fmt=fmt, flags=FLAGS)}")
            return
        path = write_report(run_dir, out, flags=FLAGS, csv=csv, force=force)
        typer.echo(f"report written: {path}")
        if csv:
            typer.echo(f"tables written: {path.with_name('points.csv')}, "
                       f"{path.with_name('windows.csv')}")
