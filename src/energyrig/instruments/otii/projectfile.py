"""Reader of Otii 3 projects (``.otii3``), streamed as :class:`~energyrig.capture.Chunk`.

The layout, as the MIT-licensed reader ``otiio`` 0.1.1 (PyPI; github.com/andyshinn/otiio,
``_layout.py`` and ``model.py``) reads it — ``otiio`` itself needs Python >= 3.12, so the rig
reads the same files on its own: ``NAME.otii3`` is a small JSON stub beside the project's
``data/`` folder, which holds

``data/meta/project_format``
    The format's number as text (17 is the one ``otiio`` knows; another is refused).
``data/meta/saved_version``
    The id of the saved version; ``data/versions/<id>/data/project.json`` describes it:
    ``recordings``, each with ``measurements``, each ``{"measurement": {"source": {"name":
    "mc", "data_type": "current", "type": "samples", "sample_rate": 50000, "device": ID}},
    "data": {"id": BLOB}, "offset": µs}``.
``data/data/project/<BLOB>/samples.dat``
    A ``samples`` channel: float32 little-endian values in SI units, sample ``i`` at
    ``offset / 1e6 + i / sample_rate`` s on the project's timeline.

The reader takes the project's **last recording** (the newest), its main current ``mc`` (or
``--current``), its main voltage ``mv`` (or ``--voltage``: another channel, or a constant) and
the trigger either from a ``samples`` channel named by ``--trigger`` (an analog input wired to
the trigger GPIO: the ADC voltage ``av`` or Sense+ ``sp``) thresholded at ``--trigger-level``,
or from the **UART log** ``rx`` (``--uart-start TEXT --uart-stop TEXT``: the lines the
firmware prints at a window's edges; layout in :mod:`.marks`). The GPI channels (``i1``,
``i2`` through the TCP API; ``gpi1``..``gpi6`` in an Ace's project) are ``digital`` channels
whose stored layout no published source documents (``otiio`` 0.1.1 refuses them too): naming
one is refused with that reason and what to use instead. The channels must share a sample
rate; their offsets are aligned to the latest start. Memory stays bounded: each chunk reads
``chunk_samples`` values of each channel from its file (the UART log keeps only its marks).
"""
from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.otii.marks import levels_at, uart_transitions
from energyrig.instruments.threshold import AnalogTrigger, Schmitt

log = logging.getLogger(__name__)

#: The project formats whose layout is known (``otiio`` 0.1.1's ``SUPPORTED_FORMATS``).
KNOWN_FORMATS = frozenset({17})
#: A ``samples`` channel's values.
SAMPLE_DTYPE = np.dtype("<f4")
#: The channels Otii records as something other than ``samples``, by name: the GPIs as the TCP
#: API names them (``i1``, ``i2``) and as an Ace's project declares them (``gpi1``..``gpi6``,
#: ``digital``), and the UART log (``rx``, ``log``).
NOT_SAMPLES = {"i1": "GPI1", "i2": "GPI2", **{f"gpi{k}": f"GPI{k}" for k in range(1, 7)},
               "rx": "the UART log"}
#: The UART log channel (:mod:`.marks`).
UART_LOG = "rx"
#: Largest ``project.json`` read, bytes (it describes recordings, it holds no samples).
MAX_PROJECT_JSON = 64 * 2**20


@dataclass(frozen=True)
class _Channel:
    """One ``samples`` channel of the recording: its name, file, rate (Hz), offset (s)."""

    name: str
    path: Path
    rate_hz: float
    offset_s: float
    length: int


@dataclass(frozen=True)
class _Stored:
    """A channel stored as something other than samples: its storage type (``digital``,
    ``log``), data folder (``None``: the project names none) and offset (s)."""

    kind: str
    folder: Path | None
    offset_s: float


class Otii3Capture:
    """The last recording of an Otii 3 project as a :class:`~energyrig.capture.Capture`.

    Opening reads the project's description and checks the channels (errors surface here);
    :meth:`chunks` streams the samples and may be called repeatedly.

    Raises
    ------
    CaptureError
        No ``data/`` folder beside the file, a format other than 17, a damaged description
        or sample file, channels at different rates, a UART log without its database.
    ChannelError
        A channel is not in the recording, or is not a ``samples`` channel; no trigger named;
        no line of the UART log starts with ``--uart-start``'s text.
    """

    trigger_bit = 0  # the thresholded trigger arrives on bit 0

    def __init__(self, path: str | Path, options: CaptureOptions | None = None) -> None:
        self.path = Path(path)
        self.source = str(path)
        self.options = options = options or CaptureOptions()
        if options.chunk_samples < 1:
            raise CaptureError(self.source, f"chunk_samples must be >= 1, got "
                                            f"{options.chunk_samples}")
        root = self.path.parent / "data"
        recording = self._last_recording(root)
        channels = self._channels(root, recording)
        self.current = self._pick(channels, options.current or "mc", "current")
        self._amperes_per_unit = options.amperes_per_volt(self.source)
        voltage = options.voltage
        self.voltage: _Channel | None = None
        self.voltage_constant_v = voltage if isinstance(voltage, float) else None
        if self.voltage_constant_v is None:
            self.voltage = self._pick(channels, str(voltage or "mv"), "voltage")
        self.trigger: _Channel | None = None
        self._marks: tuple[npt.NDArray[np.float64], npt.NDArray[np.uint8]] | None = None
        self._analog: AnalogTrigger | None = None
        if options.uart_start is not None:
            self._marks = self._uart(channels, options)
            described = f"UART log marks {options.uart_start!r} .. {options.uart_stop!r}"
        else:
            self.trigger = self._trigger(channels, options)
            assert self._analog is not None
            described = f"{self.trigger.name} at {self._analog.describe()}"
        used = [c for c in (self.current, self.voltage, self.trigger) if c is not None]
        rates = {c.rate_hz for c in used}
        if len(rates) > 1:
            raise CaptureError(self.source, "channels recorded at different sample rates: "
                               + ", ".join(f"{c.name} {c.rate_hz:g} Hz" for c in used))
        self.sample_rate_hz = rates.pop()
        start_s = max(c.offset_s for c in used)
        self._first = {c.name: round((start_s - c.offset_s) * self.sample_rate_hz)
                       for c in used}
        self.samples = max(0, min(c.length - self._first[c.name] for c in used))
        log.info("%s: recording %s, %s, trigger %s, %d samples at %g Hz", self.source,
                 self.recording_name, self.current.name, described, self.samples,
                 self.sample_rate_hz)

    def _trigger(self, channels: dict[str, _Channel | _Stored], options: CaptureOptions
                 ) -> _Channel:
        """The analog channel named by ``--trigger`` (sets the threshold it is read with)."""
        gpis = [n for n in channels if n in NOT_SAMPLES and n != UART_LOG]
        if options.trigger is None and gpis:  # the input a user would expect: say why not
            self._pick(channels, sorted(gpis)[0], "trigger")
        if options.trigger is None:
            marks = (" or mark the windows in the UART log with --uart-start TEXT --uart-stop "
                     "TEXT" if UART_LOG in channels else "")
            raise ChannelError(self.source, "trigger: name the analog input wired to the "
                                            "trigger GPIO, e.g. --trigger av --trigger-level "
                                            f"1.65{marks} (channels: "
                                            f"{', '.join(sorted(channels)) or 'none'})")
        trigger = self._pick(channels, options.trigger, "trigger")
        if options.trigger_level_v is None:
            raise ChannelError(self.source, f"trigger: {trigger.name!r} is an analog "
                                            "channel: give its threshold, e.g. "
                                            "--trigger-level 1.65 for 3.3 V logic")
        try:
            self._analog = AnalogTrigger(options.trigger_level_v, options.trigger_hysteresis_v)
        except ValueError as exc:
            raise CaptureError(self.source, f"trigger: {exc}") from exc
        return trigger

    def _uart(self, channels: dict[str, _Channel | _Stored], options: CaptureOptions
              ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.uint8]]:
        """The trigger's transitions the UART log marks (:func:`.marks.uart_transitions`)."""
        name = options.trigger or UART_LOG
        log_channel = channels.get(name)
        if not isinstance(log_channel, _Stored) or log_channel.folder is None:
            have = ", ".join(sorted(channels)) or "none"
            raise ChannelError(self.source, f"trigger: no UART log {name!r} in the recording "
                                            f"(channels: {have}): enable the UART and its rx "
                                            "channel in Otii before recording")
        return uart_transitions(log_channel.folder, self.source, str(options.uart_start),
                                str(options.uart_stop), log_channel.offset_s)

    @property
    def period_s(self) -> float:
        """Sample period, s."""
        return 1.0 / self.sample_rate_hz

    def _text(self, path: Path, what: str) -> str:
        try:
            with path.open("rb") as f:
                data = f.read(MAX_PROJECT_JSON + 1)
        except FileNotFoundError as exc:
            raise CaptureError(self.source, f"not an Otii 3 project: no {what} "
                                            f"({path}); Otii saves NAME.otii3 beside its "
                                            "data/ folder: keep them together") from exc
        except OSError as exc:
            raise CaptureError(self.source, f"cannot read {path}: {exc.strerror or exc}") from exc
        if len(data) > MAX_PROJECT_JSON:
            raise CaptureError(self.source, f"{path} is over {MAX_PROJECT_JSON} bytes: not "
                                            "an Otii project's description")
        try:
            return data.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            raise CaptureError(self.source, f"{path} is not text: {exc}") from exc

    def _last_recording(self, root: Path) -> dict[str, Any]:
        if not self.path.is_file():
            raise CaptureError(self.source, "no such file")
        meta = root / "meta"
        fmt = self._text(meta / "project_format", "data/meta/project_format")
        if not fmt.isdigit() or int(fmt) not in KNOWN_FORMATS:
            raise CaptureError(self.source, f"Otii project format {fmt!r}: this reader knows "
                               f"format {', '.join(map(str, sorted(KNOWN_FORMATS)))} (Otii "
                               "3's, as otiio 0.1.1 reads it); export the recording as CSV "
                               "from Otii instead")
        version = self._text(meta / "saved_version", "data/meta/saved_version")
        described = root / "versions" / version / "data" / "project.json"
        try:
            project = json.loads(self._text(described, f"data/versions/{version}/data/"
                                                       "project.json"))
            recordings = project["recordings"]
            if not isinstance(recordings, list):
                raise TypeError("recordings is not a list")
        except (ValueError, KeyError, TypeError) as exc:
            raise CaptureError(self.source, f"damaged project description {described}: "
                                            f"{type(exc).__name__}: {exc}") from exc
        if not recordings:
            raise CaptureError(self.source, "the project holds no recording")
        if len(recordings) > 1:
            log.info("%s: %d recordings; reading the last", self.source, len(recordings))
        self.recording_name = str(recordings[-1].get("id", len(recordings) - 1))
        return recordings[-1]

    def _channels(self, root: Path, recording: dict[str, Any]) -> dict[str, _Channel | _Stored]:
        """The recording's channels by name: a :class:`_Channel` for a ``samples`` channel,
        else a :class:`_Stored`."""
        found: dict[str, _Channel | _Stored] = {}
        try:
            for m in recording.get("measurements", []):
                src = m["measurement"]["source"]
                name, kind = str(src["name"]), str(src.get("type", ""))
                blob = (m.get("data") or {}).get("id")
                if kind != "samples":
                    found[name] = _Stored(kind or "untyped",
                                          None if blob is None
                                          else root / "data" / "project" / str(blob),
                                          float(m.get("offset", 0)) / 1e6)
                    continue
                path = root / "data" / "project" / str(m["data"]["id"]) / "samples.dat"
                rate = float(src["sample_rate"])
                if not (math.isfinite(rate) and rate > 0):
                    raise ValueError(f"channel {name}: sample_rate {rate}")
                found[name] = _Channel(name, path, rate, float(m.get("offset", 0)) / 1e6,
                                       self._length(path, name))
        except (KeyError, TypeError, ValueError) as exc:
            raise CaptureError(self.source, f"damaged recording description: "
                                            f"{type(exc).__name__}: {exc}") from exc
        return found

    def _length(self, path: Path, name: str) -> int:
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise CaptureError(self.source, f"channel {name}: its samples ({path}) are "
                                            f"missing: {exc.strerror or exc}") from exc
        if size % SAMPLE_DTYPE.itemsize:
            raise CaptureError(self.source, f"channel {name}: {path} holds {size} bytes, not "
                                            "whole float32 samples (a truncated copy?)")
        return size // SAMPLE_DTYPE.itemsize

    def _pick(self, channels: dict[str, _Channel | _Stored], name: str, role: str) -> _Channel:
        channel = channels.get(name)
        have = ", ".join(sorted(channels)) or "none"
        if channel is None:
            raise ChannelError(self.source, f"{role}: no channel {name!r} in the recording "
                                            f"(channels: {have})")
        if isinstance(channel, _Stored):
            what = NOT_SAMPLES.get(name, name)
            if channel.kind == "log":
                raise ChannelError(self.source, f"{role}: {what} ({name!r}) is a log of "
                                   "text: mark the windows in it with --uart-start TEXT "
                                   "--uart-stop TEXT")
            samples = ", ".join(n for n, c in sorted(channels.items())
                                if isinstance(c, _Channel)) or "none"
            raise ChannelError(self.source, f"{role}: {what} ({name!r}) is stored as "
                               f"{channel.kind!r}, whose layout no published source documents "
                               "(otiio 0.1.1 cannot read it either): wire the trigger GPIO to "
                               "an analog input too (--trigger av --trigger-level 1.65), or "
                               "print a line at each window edge on the UART Otii logs "
                               "(--uart-start TEXT --uart-stop TEXT); the channels read as "
                               f"samples here: {samples}")
        return channel

    def _read(self, channel: _Channel, start: int, n: int) -> npt.NDArray[np.float64]:
        at = self._first[channel.name] + start
        values = np.fromfile(channel.path, dtype=SAMPLE_DTYPE, count=n,
                             offset=at * SAMPLE_DTYPE.itemsize)
        if len(values) != n:
            raise CaptureError(self.source, f"channel {channel.name}: {channel.path} ended "
                                            f"at sample {at + len(values)}")
        return values.astype(np.float64)

    def chunks(self) -> Iterator[Chunk]:
        """Yield the recording in chunks of ``options.chunk_samples`` samples."""
        block = self.options.chunk_samples
        schmitt = Schmitt(self._analog) if self._analog is not None else None
        for start in range(0, self.samples, block):
            n = min(block, self.samples - start)
            current = self._read(self.current, start, n) * self._amperes_per_unit
            supply: npt.NDArray[np.float64] | float = (
                self._read(self.voltage, start, n) if self.voltage is not None
                else float(self.voltage_constant_v))  # type: ignore[arg-type]
            yield Chunk(start, self.period_s, current, supply,
                        logic=self._logic(start, n, schmitt))

    def _logic(self, start: int, n: int, schmitt: Schmitt | None) -> npt.NDArray[np.uint8]:
        """The trigger at samples ``start`` .. ``start + n`` of the capture: the analog
        channel thresholded, or the UART log's marks at each sample's time on the project's
        timeline (that of the current channel's sample)."""
        if self._marks is not None:
            first = self._first[self.current.name] + start
            t_s = self.current.offset_s + (first + np.arange(n)) / self.sample_rate_hz
            return levels_at(t_s, *self._marks)
        assert schmitt is not None and self.trigger is not None
        return schmitt(self._read(self.trigger, start, n))


def open_otii3(path: str | Path, options: CaptureOptions | None = None) -> Otii3Capture:
    """Open an Otii 3 project as a capture (see :class:`Otii3Capture`); a reader of
    :func:`energyrig.instruments.files.file_kinds`."""
    return Otii3Capture(path, options)
