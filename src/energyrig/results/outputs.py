"""Files a command writes for the operator (``rig analyze --csv/--plot``, ``rig report``):
checked before anything is written, and an error of the machine named with its file.

Every output is checked before the command reads or writes anything (:func:`check_outputs`):
an output that is one of the command's inputs (the same file, by inode: also a hard link
or another spelling of its path) is refused always; an existing file is refused unless the
operator said ``--force``. :func:`writing` makes an ``OSError`` while writing name its file
(``/proc/version: cannot write: Input/output error``).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from energyrig.errors import EnergyrigError


class OutputError(EnergyrigError):
    """An output would replace an input or an existing file (bad input: exit code 2)."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {problem}")


def _inode(path: Path | int) -> tuple[int, int] | None:
    """(device, inode) of a path or an open descriptor, ``None`` when there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def same_file(path: Path, inputs: Iterable[Path]) -> Path | None:
    """The input ``path`` is (the same inode), else ``None``."""
    mine = _inode(path)
    if mine is None:
        return None
    return next((i for i in inputs if _inode(i) == mine), None)


def check_outputs(outputs: Iterable[tuple[Path, str]], inputs: Iterable[Path], *,
                  force: bool = False) -> None:
    """Refuse each ``(path, option)`` output that is one of ``inputs`` or an existing file
    (unless ``force``), before anything is written.

    Raises
    ------
    OutputError
        Naming the output, the option that names it and what to do.
    """
    inputs = list(inputs)
    for path, option in outputs:
        if (source := same_file(path, inputs)) is not None:
            what = "is" if Path(source) == path else f"is the same file as {source},"
            raise OutputError(path, f"{option} {what} an input of this command: writing it "
                                    "would destroy what is read; choose another path")
        if path.is_dir():
            raise OutputError(path, f"{option} is a directory; give a file's path")
        if path.exists() and not force:
            raise OutputError(path, f"{option}: the file exists; give --force to replace it, "
                                    "or choose another path")


def check_stdout(inputs: Iterable[Path], option: str) -> None:
    """Refuse printing ``option``'s output into a file that is one of ``inputs``
    (``rig analyze c.csv --json >> c.csv``)."""
    out = _inode(1)
    for path in inputs:
        if out is not None and _inode(path) == out:
            raise OutputError(path, f"the standard output of {option} is this input file: "
                                    "writing it would destroy what is read; redirect it "
                                    "elsewhere")


@contextmanager
def writing(path: Path) -> Iterator[Path]:
    """Write ``path`` inside the block; an ``OSError`` (a full disk, a directory that does
    not exist, ``/proc``) is raised again naming the file it was about, ``path`` when it
    names none, so the CLI's one line says which file (exit code 1: the machine's trouble)."""
    try:
        yield path
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write: {exc.strerror or exc}",
                      str(exc.filename or path)) from None
