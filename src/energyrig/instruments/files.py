"""Open a capture file of any supported kind: :func:`open_capture`.

Each file kind is one row of :data:`KINDS`: its name, its file extensions, a test on the
first bytes of the file, and the reader that opens it. The kind is chosen by extension, and
the content must agree (a ``.csv`` that is really a zip is refused with a message saying so);
a file with an unknown extension is recognised by content alone. Readers are imported only
when used, so a row may name a module that imports this one (for :class:`CaptureOptions`).

To support a new kind, add one row: ``CaptureKind(name, extensions, sniff, "module:function")``
where the function takes ``(path, options)`` and returns a :class:`~energyrig.capture.Capture`
(raising :class:`~energyrig.errors.CaptureError` / :class:`~energyrig.errors.ChannelError`
with the file named when the file or a channel is wrong). A capture whose trigger channel
arrives on a fixed logic bit says so in a ``trigger_bit`` attribute (``rig analyze`` uses it).
"""
from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from energyrig.capture import Capture
from energyrig.errors import CaptureError
from energyrig.instruments.threshold import AnalogTrigger

log = logging.getLogger(__name__)

DEFAULT_CHUNK_SAMPLES = 1 << 20
_HEAD_BYTES = 4096


@dataclass(frozen=True)
class CaptureOptions:
    """How the channels of a capture file become trigger, current and voltage.

    Every reader takes the same options; each uses those that apply to its format and
    ignores the rest. ``None`` means the format's default.

    Attributes
    ----------
    trigger:
        Channel carrying the trigger: a CSV column (default ``trigger``), a logic channel
        name such as ``"D0"`` (sigrok, PPK2), or an analog channel such as ``"A1"`` (sigrok)
        thresholded at ``trigger_level_v``.
    trigger_level_v:
        Threshold of an analog trigger, V (:mod:`energyrig.instruments.threshold`). Required
        for an analog trigger (there is no automatic level on a stream); 1.65 V suits 3.3 V
        logic. A CSV trigger column holding only 0 and 1 needs none.
    trigger_hysteresis_v:
        Width of the band around the level in which the trigger keeps its state, V;
        ``None``: 10 % of the level.
    current:
        Channel carrying the current: a CSV column (default ``current_a``) or an analog
        channel such as ``"A0"``. Its values are multiplied by :meth:`amperes_per_volt`.
    shunt_ohms:
        The current channel is the voltage across this shunt, Ω: current = value / R.
    current_scale_a_per_v:
        Alternative to ``shunt_ohms``: current = value × scale (A/V).
    voltage:
        Supply voltage: a channel name (CSV default ``voltage_v``), or a constant in volts for
        a regulated supply.
    chunk_samples:
        Samples per chunk the reader yields (bounds memory; default 2**20).
    """

    trigger: str | None = None
    trigger_level_v: float | None = None
    trigger_hysteresis_v: float | None = None
    current: str | None = None
    shunt_ohms: float | None = None
    current_scale_a_per_v: float | None = None
    voltage: str | float | None = None
    chunk_samples: int = DEFAULT_CHUNK_SAMPLES

    def amperes_per_volt(self, source: str | Path) -> float:
        """Factor turning the current channel's values into amperes (1 if neither is given)."""
        if self.shunt_ohms is not None and self.current_scale_a_per_v is not None:
            raise CaptureError(source, "give either a shunt resistance or a current scale, not both")
        if self.shunt_ohms is not None:
            if not self.shunt_ohms > 0:
                raise CaptureError(source, f"shunt resistance must be > 0 ohm, got {self.shunt_ohms}")
            return 1.0 / self.shunt_ohms
        if self.current_scale_a_per_v is not None:
            return float(self.current_scale_a_per_v)
        return 1.0

    def analog_trigger(self, source: str | Path, channel: str,
                       default_level_v: float | None = None) -> AnalogTrigger:
        """Level and hysteresis for thresholding the analog trigger ``channel``.

        ``default_level_v`` is the format's level when none is given (``None``: a level is
        required).

        Raises
        ------
        CaptureError
            No level given and no default, or a level or hysteresis out of range.
        """
        level = self.trigger_level_v if self.trigger_level_v is not None else default_level_v
        if level is None:
            raise CaptureError(source, f"trigger {channel!r} is an analog channel: give its "
                                       "threshold with --trigger-level VOLTS (trigger_level_v "
                                       "in a fixture; e.g. 1.65 for 3.3 V logic)")
        try:
            return AnalogTrigger(level, self.trigger_hysteresis_v)
        except ValueError as exc:
            raise CaptureError(source, f"trigger {channel!r}: {exc}") from exc


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


def _is_zip(head: bytes) -> bool:
    """A zip archive (sigrok session files are)."""
    return head.startswith(b"PK\x03\x04")


def _is_ppk2_raw(head: bytes) -> bool:
    """PPK2 metadata through ``END``, then the raw-stream header line (docs/formats.md)."""
    from energyrig.instruments.ppk2.rawfile import is_ppk2_raw

    return is_ppk2_raw(head)


@dataclass(frozen=True)
class CaptureKind:
    """One supported file kind: a row of :data:`KINDS`."""

    name: str
    extensions: tuple[str, ...]
    sniff: Callable[[bytes], bool]
    reader: str  # "module:function", called as function(path, options) -> Capture

    def open(self, path: Path, options: CaptureOptions) -> Capture:
        module, _, func = self.reader.partition(":")
        opener: Callable[[Path, CaptureOptions], Capture] = getattr(
            importlib.import_module(module), func)
        return opener(path, options)


KINDS: tuple[CaptureKind, ...] = (
    CaptureKind("CSV", (".csv", ".txt"), _is_text, "energyrig.instruments.csvfile:open_csv"),
    CaptureKind("sigrok session", (".sr",), _is_zip, "energyrig.instruments.sigrok.srfile:open_sr"),
    CaptureKind("raw PPK2 stream", (".ppk2",), _is_ppk2_raw,
                "energyrig.instruments.ppk2.rawfile:open_ppk2_capture"),
)


def _describe(head: bytes) -> str:
    matches = [k.name for k in KINDS if k.sniff(head)]
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
    suffix = path.suffix.lower()
    by_ext = [k for k in KINDS if suffix in k.extensions]
    if by_ext:
        kind = by_ext[0]
        if not kind.sniff(head):
            raise CaptureError(path, f"not a {kind.name} file: {_describe(head)}")
    else:
        by_content = [k for k in KINDS if k.sniff(head)]
        if not by_content:
            known = ", ".join(ext for k in KINDS for ext in k.extensions)
            raise CaptureError(path, f"unknown capture format (known: {known}); "
                                     f"{_describe(head)}")
        kind = by_content[0]
    log.info("%s: opening as %s", path, kind.name)
    return kind.open(path, options)
