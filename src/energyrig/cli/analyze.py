"""`rig analyze CAPTURE` (placeholder until the measurement core lands)."""
import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def analyze(capture: str) -> None:
        """Find trigger windows in a capture and report their energy."""
        raise typer.Exit(1)
