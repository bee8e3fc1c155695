"""Open a capture file of any supported kind: :func:`open_capture`.

The table of file kinds (:func:`file_kinds`) is the generic CSV reader plus the kinds each
instrument family contributes (``Family.file_kinds``, a
:class:`~energyrig.instruments.fileopts.FileKind` each: its name, its file extensions, a test
on the first bytes of the file, and the reader that opens it). The kind is chosen by content:
the first kind claiming the file's extension whose test passes (so one extension may be
shared: ``.ppk2`` is the Power Profiler app's session and the rig's old raw streams; ``.csv``
the app's export and the generic CSV, which comes last); else, for an extension no kind
claims, the first kind whose test passes. A file whose extension is claimed but whose content
matches none of its kinds is refused naming the kinds tried (a ``.csv`` that is really a zip
is not read as one). A folder is read as a Saleae Logic 2 export's (its ``analog.csv`` and
``digital.csv``). Readers are imported only when used.

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
from energyrig.instruments.saleaeformat import is_saleae

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
#: Saleae Logic 2's raw-data export (no instrument family: the rig reads its files only):
#: the analog file, or its folder, with the digital file beside it.
SALEAE = FileKind("Saleae Logic 2 export", (".csv",), is_saleae,
                  "energyrig.instruments.saleae:open_saleae")


def file_kinds() -> tuple[FileKind, ...]:
    """Every file kind: each family's (``Family.file_kinds``), Saleae's, then the generic CSV
    (last: any text with a comma passes its test)."""
    return (*(k for f in FAMILIES.values() for k in f.file_kinds), SALEAE, CSV)


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
    if path.is_dir():  # the one kind that is a folder: a Saleae export's
        return SALEAE.open(path, options)
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError as exc:
        raise CaptureError(path, f"cannot read: {exc.strerror or exc}") from exc
    kinds = file_kinds()
    suffix = path.suffix.lower()
    by_ext = [k for k in kinds if suffix in k.extensions]
    if by_ext:
        matching = [k for k in by_ext if k.sniff(head)]
        if not matching:
            tried = " or ".join(k.name for k in by_ext)
            raise CaptureError(path, f"not a {tried} file (tried by content): "
                                     f"{_describe(head, kinds)}")
    else:
        matching = [k for k in kinds if k.sniff(head)]
        if not matching:
            tried = ", ".join(f"{k.name} ({' '.join(k.extensions)})" for k in kinds)
            raise CaptureError(path, f"unknown capture format: its content is none of {tried}"
                                     f"{'; the file is empty' if not head else ''}")
    kind = matching[0]
    log.info("%s: opening as %s", path, kind.name)
    return kind.open(path, options)
