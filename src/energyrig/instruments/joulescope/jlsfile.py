"""Reader of Joulescope JLS v2 files (``.jls``), streamed as :class:`~energyrig.capture.Chunk`.

The file is read through the Joulescope file library ``pyjls`` (PyPI, jetperch/jls; checked
with 0.17.0), never parsed by hand. A JLS v2 file holds sources (one per instrument) and
fixed-sample-rate (FSR) signals. The Joulescope UI and ``pyjoulescope_driver``'s
``record.py`` (``_SIGNALS``; checked with 2.2.12) name a recording's signals:

``current`` (f32, A), ``voltage`` (f32, V), ``power`` (f32, W)
    The analog signals.
``current_range`` (u4)
    The instrument's range per sample (not read).
``gpi[0]`` .. ``gpi[3]`` (u1), ``trigger_in`` (u1)
    The general-purpose inputs, one bit per sample.

Each signal records from its own first sample id (``sample_id_offset``); this reader reads
the span all its signals cover, at their common sample rate, ``chunk_samples`` at a time
with ``Reader.fsr`` (memory stays bounded by a few blocks whatever the file's length).

Channel mapping onto :class:`~energyrig.capture.Chunk`:

- ``logic`` bit 0 carries the trigger signal (``trigger``, default: the first of
  ``gpi[0]``..``gpi[3]``, then ``trigger_in``, the file holds; any u1 signal may be named).
- ``current_a`` = the ``current`` signal (default ``current``), or, with ``current =
  "power"``, the power divided by the supply voltage (so the energy is the power's).
- ``voltage_v`` = the ``voltage`` signal (default when the file holds one), another f32
  signal named by ``voltage``, or a constant in volts.
- A sample a signal holds as NaN (the Joulescope writes NaN where it lost samples) is
  marked ``corrupt`` and counts as 0 A (:func:`~.processing.to_chunk`).
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.joulescope.family import is_jls
from energyrig.instruments.joulescope.processing import to_chunk

log = logging.getLogger(__name__)

#: The file header (``struct jls_file_header_s``): the magic, then the file's length in bytes
#: as u64 little-endian (written when the file is closed), the format version and a CRC.
_HEADER_BYTES = 32

#: pyjls ``SignalType.FSR`` and the ``DataType`` codes this reader uses (``pyjls.DataType``).
_FSR = 0
_F32 = 0x2004
_U1 = 0x0103

#: The trigger signals tried in order when none is named.
DEFAULT_TRIGGERS = ("gpi[0]", "gpi[1]", "gpi[2]", "gpi[3]", "trigger_in")
POWER = "power"


class JlsCapture:
    """A Joulescope JLS v2 file as a :class:`~energyrig.capture.Capture`.

    Opening checks the file and resolves the signals (errors surface here); :meth:`chunks`
    streams the samples and may be called repeatedly.

    Raises
    ------
    CaptureError
        The file is missing, not a JLS v2 file, was not closed by its writer (truncated, or
        a recording cut off), or its signals do not share a sample rate.
    ChannelError
        A named signal is not in the file, or the file has no current, power or trigger.
    """

    trigger_bit = 0  # the trigger signal arrives on bit 0

    def __init__(self, path: str | Path, options: CaptureOptions | None = None) -> None:
        import pyjls

        self.path = Path(path)
        self.source = str(path)
        self.options = options or CaptureOptions()
        if self.options.chunk_samples < 1:
            raise CaptureError(self.source, f"chunk_samples must be >= 1, got "
                                            f"{self.options.chunk_samples}")
        self._check_closed()
        try:
            with pyjls.Reader(str(self.path)) as reader:
                signals = [s for s in reader.signals.values() if s.signal_type == _FSR]
        except RuntimeError as exc:
            raise CaptureError(self.source, f"not a readable JLS v2 file: {exc}") from exc
        self._amperes_per_unit = self.options.amperes_per_volt(self.source)
        self._resolve(signals)

    def _check_closed(self) -> None:
        """Refuse a file not closed by its writer: pyjls repairs such a file in place when it
        opens it, and the rig does not write to the files it reads."""
        try:
            with self.path.open("rb") as f:
                head = f.read(_HEADER_BYTES)
            size = self.path.stat().st_size
        except FileNotFoundError as exc:
            raise CaptureError(self.source, "no such file") from exc
        except OSError as exc:
            raise CaptureError(self.source, f"cannot read: {exc.strerror or exc}") from exc
        if not is_jls(head) or len(head) < _HEADER_BYTES:
            raise CaptureError(self.source, "not a JLS file: no JLS header")
        length = int.from_bytes(head[16:24], "little")
        if length != size:
            raise CaptureError(self.source, f"the recording was not closed (its header says "
                                            f"{length} bytes, the file has {size}): pyjls "
                                            "repairs such a file in place, so the rig leaves "
                                            "it alone; copy it (cp FILE copy.jls) and analyze "
                                            "the copy")

    def _describe(self, signals: list[Any]) -> str:
        return "signals: " + (", ".join(s.name for s in signals) or "none")

    def _resolve(self, signals: list[Any]) -> None:
        by_name = {s.name: s for s in signals}
        current_name = self.options.current or "current"
        current = by_name.get(current_name)
        if current is None or current.data_type != _F32:
            raise ChannelError(self.source, f"no current signal {current_name!r} "
                                            f"({self._describe(signals)})")
        # one instrument's signals: those of the current's source
        own = {s.name: s for s in signals if s.source_id == current.source_id}
        self.current = current
        self.is_power = current_name == POWER
        trigger = self.options.trigger
        if trigger is None:
            trigger = next((n for n in DEFAULT_TRIGGERS if n in own), None)
            if trigger is None:
                raise ChannelError(self.source, "no general-purpose input for the trigger "
                                                f"({self._describe(signals)})")
        if trigger not in own or own[trigger].data_type != _U1:
            raise ChannelError(self.source, f"no digital signal {trigger!r} for the trigger "
                                            f"({self._describe(signals)})")
        if self.options.trigger_level_v is not None:
            raise CaptureError(self.source, "a trigger level applies to an analog trigger; "
                                            "a JLS general-purpose input is digital")
        self.trigger = own[trigger]
        voltage = self.options.voltage
        self.voltage: Any = None
        self.voltage_constant_v: float | None = None
        if isinstance(voltage, float):
            self.voltage_constant_v = voltage
        elif voltage is None and "voltage" not in own:
            raise ChannelError(self.source, "no voltage signal: give the supply as a constant "
                                            f"in volts (e.g. --voltage 3.3) "
                                            f"({self._describe(signals)})")
        else:
            name = voltage or "voltage"
            if name not in own or own[name].data_type != _F32:
                raise ChannelError(self.source, f"no voltage signal {name!r} "
                                                f"({self._describe(signals)})")
            self.voltage = own[name]
        used = [s for s in (self.current, self.trigger, self.voltage) if s is not None]
        rates = {s.sample_rate for s in used}
        if len(rates) > 1:
            raise CaptureError(self.source, "signals recorded at different sample rates: "
                                            + ", ".join(f"{s.name} {s.sample_rate} Hz"
                                                        for s in used))
        self.sample_rate_hz = float(rates.pop())
        if not self.sample_rate_hz > 0:
            raise CaptureError(self.source, f"signal {current.name!r} has no sample rate")
        self._start = max(s.sample_id_offset for s in used)
        end = min(s.sample_id_offset + s.length for s in used)
        self.samples = max(0, end - self._start)
        self._used = used
        log.info("%s: %s, trigger %s, %d samples at %g Hz", self.source, current.name,
                 self.trigger.name, self.samples, self.sample_rate_hz)

    @property
    def period_s(self) -> float:
        """Sample period, s."""
        return 1.0 / self.sample_rate_hz

    def _read(self, reader: Any, signal: Any, start: int, n: int) -> npt.NDArray[Any]:
        """``n`` samples of ``signal`` from absolute sample id ``start``: a u1 signal as 0/1
        bytes, a f32 one as the float32 pyjls gives (converted once, by
        :func:`~.processing.to_chunk`)."""
        data = reader.fsr(signal.signal_id, start - signal.sample_id_offset, n)
        if signal.data_type == _U1:
            return np.unpackbits(np.asarray(data, dtype=np.uint8), bitorder="little")[:n]
        return np.asarray(data)

    def chunks(self) -> Iterator[Chunk]:
        """Yield the capture in chunks of ``options.chunk_samples`` samples (the last shorter).

        Raises
        ------
        CaptureError
            pyjls cannot read a block (a truncated or damaged file).
        """
        import pyjls

        block = self.options.chunk_samples
        with pyjls.Reader(str(self.path)) as reader:
            for start in range(0, self.samples, block):
                n = min(block, self.samples - start)
                try:
                    yield self._chunk(reader, start, n)
                except RuntimeError as exc:
                    raise CaptureError(self.source, f"damaged JLS file at sample {start}: "
                                                   f"{exc}") from exc

    def _chunk(self, reader: Any, start: int, n: int) -> Chunk:
        at = self._start + start
        current = self._read(reader, self.current, at, n)
        if self._amperes_per_unit != 1.0:  # amperes already (a JS220's current): no pass
            current = current.astype(np.float64) * self._amperes_per_unit
        supply = (self._read(reader, self.voltage, at, n) if self.voltage is not None
                  else float(self.voltage_constant_v))  # type: ignore[arg-type]
        return to_chunk(start, self.period_s, current, supply,
                        self._read(reader, self.trigger, at, n), power=self.is_power,
                        keep_float32=self.options.keep_float32)


def open_jls(path: str | Path, options: CaptureOptions | None = None) -> JlsCapture:
    """Open a Joulescope JLS v2 file as a capture (see :class:`JlsCapture`); a reader of
    :func:`energyrig.instruments.files.file_kinds`."""
    return JlsCapture(path, options)
