"""`rig reanalyze RUN_DIR`: a run's figures computed again from its kept samples."""
from __future__ import annotations

from pathlib import Path

import typer

#: Exit code when a figure moved beyond the tolerance (2 stays bad input).
MOVED_EXIT = 4


def register(app: typer.Typer) -> None:
    """Add the ``reanalyze`` command to ``app``."""

    @app.command()
    def reanalyze(
        run_dir: Path = typer.Argument(..., metavar="RUN_DIR", file_okay=False,
                                       help="A run swept with --keep-captures all."),
        tolerance: float = typer.Option(1e-12, "--tolerance", min=0.0,
                                        help="Largest relative difference of a figure "
                                             "that has not moved."),
    ) -> None:
        """Recompute every window's and point's figures of a run from the samples it kept
        (`rig sweep --keep-captures all`) with the code and libraries installed now, and
        compare them with the figures the run stored.

        Writes RUN_DIR/reanalysis/figures.csv (each figure stored and recomputed, with
        their relative difference) and summary.json (the verdict, the largest differences,
        the versions now and then), and prints a one-line verdict. Exits 0 when no figure
        moved beyond the tolerance, 4 when one did.

        Example: rig reanalyze runs/quick
        """
        from energyrig.rig.reanalyze import reanalyze as run_reanalysis

        result = run_reanalysis(run_dir, tolerance=tolerance)
        for change in result.changes:
            typer.echo(f"version changed since the run: {change}", err=True)
        typer.echo(result.verdict())
        typer.echo(f"comparison written: {result.path / 'figures.csv'}")
        if not result.moved.empty:
            raise typer.Exit(MOVED_EXIT)
