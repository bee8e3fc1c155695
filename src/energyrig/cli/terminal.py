"""The terminal the ``rig`` command draws on: one console per stream, the log's level
(``rig -v`` / ``rig -q``) and repeated warnings summarised.

Progress bars and log records share the one standard-error console (:func:`err_console`):
rich's logging handler writes through it, so while a bar is live a log line lands above the
bar instead of through it. Standard output holds only what a command prints as its answer
(its table, ``--json``): the log never goes there.

A warning that can come once per window (``windows flagged duration_mismatch``) is logged
with ``extra={"repeats": WHAT}``: the first of each ``WHAT`` is shown, the others are counted
and summarised in one line (``12 windows flagged duration_mismatch``) at the end of a sweep
or of the command (:func:`summarise_repeats`); ``-v`` shows each.

rich is imported when something is drawn, not with this module: a command that logs nothing
and draws no bar (``rig analyze --json``) never loads it (issue 24 part 2, its fixed cost).
"""
from __future__ import annotations

import functools
import logging
import os
import threading
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

#: Width of standard output when it is not a terminal and COLUMNS does not say: the tables
#: of a piped command are not cut to rich's default 80.
PIPED_WIDTH = 120

#: The log levels of ``rig -q``, ``rig`` and ``rig -v``.
LEVELS = {"quiet": logging.ERROR, "normal": logging.WARNING, "verbose": logging.INFO}


@functools.cache
def err_console() -> Console:
    """Standard error: progress bars, warnings and the log (one console, so they interleave
    in order; it writes to whatever ``sys.stderr`` is when it writes)."""
    from rich.console import Console

    return Console(stderr=True)


def out_console() -> Console:
    """Standard output for a command's tables: the terminal's width, COLUMNS if set, else
    :data:`PIPED_WIDTH` when piped."""
    from rich.console import Console

    console = Console()
    if console.is_terminal or os.environ.get("COLUMNS", "").isdigit():
        return console
    return Console(width=PIPED_WIDTH)


class Repeats(logging.Filter):
    """Lets through the first record of each kind of repeat (a record's ``repeats`` extra)
    and counts all of them; ``each``: let every one through (``rig -v``)."""

    def __init__(self, each: bool = False) -> None:
        super().__init__()
        self.each = each
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()  # records come from a lab sweep's lanes too

    def filter(self, record: logging.LogRecord) -> bool:
        """True for a record to show."""
        kind = getattr(record, "repeats", None)
        if kind is None:
            return True
        with self._lock:
            self.counts[kind] += 1
            return self.each or self.counts[kind] == 1

    def take(self) -> list[str]:
        """``12 windows flagged duration_mismatch`` for each kind seen more than once (not
        shown each) since the last call; the counts start again."""
        with self._lock:
            lines = [f"{n} {kind}" for kind, n in self.counts.items()
                     if n > 1 and not self.each]
            self.counts.clear()
        return lines


@dataclass
class _Terminal:
    """How this command logs: its verbosity and the repeats its handler counts."""

    verbosity: str = "normal"
    repeats: Repeats | None = None


_TERMINAL = _Terminal()


class LineHandler(logging.Handler):
    """Writes each record as one line, ``WARNING name: message``, through ``console`` (not
    wrapped: standard error is a file or a pipe a program reads, not a terminal)."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        """Print ``record`` (rich serialises the lanes' threads)."""
        try:
            self.console.print(self.format(record), markup=False, highlight=False,
                               soft_wrap=True)
        except RecursionError:  # as logging.StreamHandler: a record that cannot be written
            raise                # is reported by logging itself, never breaks the caller
        except Exception:
            self.handleError(record)


class TerminalHandler(logging.Handler):
    """The log's handler as ``rig`` installs it. The handler that draws (:attr:`drawer`:
    rich's on a terminal, above a live progress bar; else a :class:`LineHandler`), both on
    :func:`err_console`, is made when the first record is shown, so a command that logs
    nothing does not import rich."""

    def __init__(self) -> None:
        super().__init__()
        self._drawer: logging.Handler | None = None

    @property
    def drawer(self) -> logging.Handler:
        """The handler that writes the records, made on first use."""
        if self._drawer is None:
            console = err_console()
            if console.is_terminal:
                from rich.logging import RichHandler

                self._drawer = RichHandler(console=console, show_time=False,
                                           show_path=False, markup=False,
                                           rich_tracebacks=False, keywords=[])
                self._drawer.setFormatter(logging.Formatter("%(name)s: %(message)s"))
            else:
                self._drawer = LineHandler(console)
        return self._drawer

    def emit(self, record: logging.LogRecord) -> None:
        """Hand ``record`` to :attr:`drawer` (under this handler's lock: made once)."""
        self.drawer.handle(record)


def log_to_terminal(verbosity: str) -> None:
    """Send the log (``verbosity``: a key of :data:`LEVELS`) through a
    :class:`TerminalHandler`, repeats summarised unless verbose; replaces a handler set
    before."""
    repeats = Repeats(each=verbosity == "verbose")
    handler = TerminalHandler()
    handler.addFilter(repeats)
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, TerminalHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(LEVELS[verbosity])
    _TERMINAL.verbosity, _TERMINAL.repeats = verbosity, repeats


def quiet() -> bool:
    """``rig -q``: no progress bars, errors only in the log."""
    return _TERMINAL.verbosity == "quiet"


def summarise_repeats(console: Console | None = None) -> None:
    """Print on ``console`` (standard error) how many of each repeated warning were not
    shown since the last summary."""
    if _TERMINAL.repeats is None:
        return
    for line in _TERMINAL.repeats.take():
        (console or err_console()).print(
            f"[yellow]{line}[/] (rig -v logs each)",
            highlight=False)
