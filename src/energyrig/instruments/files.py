"""Open a capture file of any supported kind: :func:`open_capture`.

The table of file kinds (:func:`file_kinds`) is the generic CSV reader plus the kinds each
instrument family contributes (``Family.file_kinds``, a
:class:`~energyrig.instruments.fileopts.FileKind` each: its name, its file extensions, a test
on the first bytes of the file, and the reader that opens it). The kind is chosen by
extension, and the content must agree (a ``.csv`` that is really a zip is refused with a
message saying so); a file with an unknown extension is recognised by content alone. Readers
are imported only when used.

A reader takes ``(path, options)`` and returns a :class:`~energyrig.capture.Capture`
(raising :class:`~energyrig.errors.CaptureError` / :class:`~energyrig.errors.ChannelError`
with the file named when the file or a channel is wrong). A capture whose trigger channel
arrives on a fixed logic bit says so in a ``trigger_bit`` attribute (``rig analyze`` uses it).
"""
from __future__ import annotations

import logging
from pathlib import Path

from energyrig.capture import Capture
from energyrig.errors import CaptureError
from energyrig.instruments.family import FileKind
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.registry import FAMILIES

log = logging.getLogger(__name__)

_HEAD_BYTES = 4096


def parse_voltage(text: str | None) -> str | float | None:
    """``--voltage`` value: a number is a constant in volts, anything else a channel name."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return text


def _is_text(head: bytes) -> bool:
    """Printable text with a separator in the first line (a CSV header)."""
    if not head or b"\x00" in head:
        return False
    try:
        first = head.split(b"\n", 1)[0].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return "," in first


#: The generic reader: a CSV of time, current, voltage and trigger columns.
CSV = FileKind("CSV", (".csv", ".txt"), _is_text, "energyrig.instruments.csvfile:open_csv")


def file_kinds() -> tuple[FileKind, ...]:
    """Every file kind: the generic CSV, then each family's (``Family.file_kinds``)."""
    return (CSV, *(k for f in FAMILIES.values() for k in f.file_kinds))


def _describe(head: bytes, kinds: tuple[FileKind, ...]) -> str:
    matches = [k.name for k in kinds if k.sniff(head)]
    if matches:
        return f"it looks like a {matches[0]} file"
    return "empty" if not head else "its content is not a capture format the rig knows"


def open_capture(path: str | Path, options: CaptureOptions | None = None) -> Capture:
    """Open a capture file, choosing the reader by extension and content.

    Raises
    ------
    CaptureError
        The file does not exist, is not what its extension claims, or no reader knows it.
    ChannelError
        A channel named in ``options`` is not in the file (raised by the reader).
    """
    path = Path(path)
    options = options or CaptureOptions()
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError as exc:
        raise CaptureError(path, f"cannot read: {exc.strerror or exc}") from exc
    kinds = file_kinds()
    suffix = path.suffix.lower()
    by_ext = [k for k in kinds if suffix in k.extensions]
    if by_ext:
        kind = by_ext[0]
        if not kind.sniff(head):
            raise CaptureError(path, f"not a {kind.name} file: {_describe(head, kinds)}")
    else:
        by_content = [k for k in kinds if k.sniff(head)]
        if not by_content:
            known = ", ".join(ext for k in kinds for ext in k.extensions)
            raise CaptureError(path, f"unknown capture format (known: {known}); "
                                     f"{_describe(head, kinds)}")
        kind = by_content[0]
    log.info("%s: opening as %s", path, kind.name)
    return kind.open(path, options)
