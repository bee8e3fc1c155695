"""The progress bars of ``rig run`` and ``rig sweep`` (rich's, drawn on
:func:`energyrig.cli.terminal.err_console`): apart from :mod:`energyrig.cli.terminal` so
that a command drawing no bar does not import rich."""
from __future__ import annotations

from collections.abc import Iterable

from rich.console import RenderableType
from rich.progress import Progress
from rich.text import Text


class LinedProgress(Progress):
    """Progress bars kept short (a run's, a lab place's: its description), then for each a
    line of what it measures now with the last window's readout, and one saying why its
    window count went back: the task's ``now``, ``last`` and ``note`` fields. Beside the bar
    at 80 columns they squeezed the counts and the ETA to ``…``."""

    def get_renderables(self) -> Iterable[RenderableType]:
        """The bars, then each bar's lines (cut with ``…`` at the console's width)."""
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            fields = task.fields
            where = "" if task.description in ("sweep", "") else f"{task.description}: "
            lines = ["  ".join(p for p in (fields.get("now", ""), fields.get("last", "")) if p),
                     fields.get("note") and f"({fields['note']})"]
            for line in filter(None, lines):
                yield Text(f"  {where}{line}", style="dim", no_wrap=True, overflow="ellipsis")
