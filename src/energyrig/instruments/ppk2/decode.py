"""Decode the PPK2 sample stream into :class:`~energyrig.capture.Chunk` objects.

The PPK2 streams one 4-byte little-endian word per sample (100 kS/s)::

    bits  0-13  ADC code            bits 18-23  sample counter (increments by 1, modulo 64)
    bits 14-16  current range 0..4  bits 24-31  logic inputs D0..D7
    bit  17     unused

:class:`Ppk2Decoder` takes the bytes as they come off the port, in blocks of any size (a
word split across two reads is carried to the next block), and turns each block into a
chunk in one pass of a compiled kernel (``_decode.c``; nothing is allocated per sample and
the GIL is released). The integrity checks below run in the same pass: runs of words where
none can fire (the same logic and range, the counter stepping by one, the current within
the jump limit of the sample before) are decoded in vectorised loops, and only the words
where something changes, and a few after them, are checked one by one (the kernel's
``fast_samples`` counts the others).

Conversion
    The current equals ``ppk2_api.PPK2_API.get_adc_result(range, adc * 4)`` bit for bit for
    the same bytes, calibration and supply voltage (``current_vdd``); ranges 5..7, which a
    healthy device never sends, are read as range 4 like ``ppk2-api`` does.

Spike filter (``spike_filter=True``, off by default)
    ``ppk2-api`` and Nordic's app smooth the few samples after every range switch with an
    exponential average (alpha 0.18, 0.06 in range 4) to hide the switching transient on a
    plot. It is a display filter: it replaces true samples with a lagging average, so the
    integral over a window, which is what the rig reports, is no longer the integral of what
    the device measured, and the error depends on how often the range switched inside the
    window. It is available to reproduce ``ppk2-api``'s output exactly.

Dropped samples
    The 6-bit counter should advance by 1 per word. A jump of ``k`` (modulo 64) means
    ``k - 1`` samples were lost (the same counter twice counts as 63 lost). Losses of
    ``k - 1 + 64 m`` samples look identical, so a loss of 64 or more is under-counted by a
    multiple of 64 and a loss of exactly 64 samples is invisible; a lost USB packet is
    64 bytes = 16 samples, far below that. Each jump becomes a row of ``Chunk.gaps`` and the
    lost samples advance the capture's sample index.

Corrupt words
    A word no healthy PPK2 sends is marked in ``Chunk.corrupt`` (its value is kept as
    decoded; the windows it falls in are flagged ``corrupt_samples``):

    * the unused bit 17 set, or a range code above 4;
    * a counter that skips and is continued by the next word (``c, x, c + 2``): one corrupt
      counter, not two losses, so the sample index is not moved (a loss cannot make the count
      go back); a skip on the last word of a block cannot be told apart and stays a gap;
    * a one-sample excursion of the logic byte (neighbours equal, the sample different), or
      of the range (a range above both neighbours' or below both, at a trigger's edge too,
      where the neighbours' ranges differ): the trigger and the auto-ranging hold a level
      for several samples, and on a step the ranging passes through the ranges between;
    * a one-sample jump within one range by more than :data:`JUMP_FRACTION` of the range's
      full scale, both neighbours within a tenth of that of each other: the front end does not
      move that far and back in 20 µs.

    The excursion and jump checks compare a sample with its neighbours across chunks: the
    kernel keeps the last two samples it decoded. The last sample of a chunk is checked when
    the next chunk is decoded, which then marks it in the chunk returned before (its
    ``corrupt`` array, in place): a window's flags, judged once the stream holds samples
    after it, see it. Samples are not compared across a loss (a gap of the counter, or
    :meth:`Ppk2Decoder.add_loss`): the two beside it are not checked, nor the last sample of
    the stream (of :func:`decode_stream`'s last chunk) on its right.

    Samples at the floor (ADC code 0 in range 0: a current at or below zero, clipped) are
    marked in ``Chunk.at_floor``, and every sample's range is in ``Chunk.current_range``.

Saturation
    A sample is flagged saturated when the device is in its top range (4) and the ADC reads
    full scale (0x3FFF): the current was above what the PPK2 can measure. A full-scale code
    in a lower range is the normal moment before an automatic range switch and is not
    flagged.
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt

from energyrig.capture import NO_GAPS, Chunk
from energyrig.instruments.ppk2._decode import Kernel
from energyrig.instruments.ppk2.metadata import N_RANGES, Ppk2Calibration

log = logging.getLogger(__name__)

SAMPLE_RATE_HZ = 100_000.0
"""The PPK2's fixed sample rate."""
#: Highest supply the conversion takes, mV (a PPK2 supplies and measures at most 5 V).
MAX_VDD_MV = 5000
ADC_MULT = 1.8 / 163840
"""Volts per ADC code x4 (the same expression as ``ppk2-api``'s ``adc_mult``)."""
ADC_FULL_SCALE = 0x3FFF
TOP_RANGE = N_RANGES - 1
WORD_BYTES = 4

JUMP_FRACTION = 1 / 8
"""A one-sample jump within a range by more than this fraction of its full scale is corrupt."""

_RANGE_SHIFT, _COUNTER_SHIFT, _LOGIC_SHIFT = 14, 18, 24
_COUNTER_MASK = 0x3F
_GAP_ROWS = 64


@functools.lru_cache(maxsize=64)
def conversion_table(cal: Ppk2Calibration, vdd_mv: float) -> npt.NDArray[np.float64]:
    """Per-range constants of the kernel: ``O, adc_mult / R, GS, GI, UG, S * V + I``
    (read-only: one array per calibration and supply, shared by its callers; an emulator
    encodes a block of samples with it every few ms).

    Computed with Python floats in the same order as ``ppk2-api`` so that the kernel's
    ``UG * (x * (GS * x + GI) + c)`` with ``x = (adc * 4 - O) * (adc_mult / R)`` rounds
    exactly like ``get_adc_result``.
    """
    rows = [
        (cal.o[r], ADC_MULT / cal.r[r], cal.gs[r], cal.gi[r], cal.ug[r],
         cal.s[r] * (vdd_mv / 1000) + cal.i[r])
        for r in range(N_RANGES)
    ]
    table = np.array(rows, dtype=np.float64)
    table.flags.writeable = False
    return table


class Ppk2Decoder:
    """Streaming decoder of raw PPK2 bytes.

    Parameters
    ----------
    calibration:
        The device's calibration (:func:`~energyrig.instruments.ppk2.metadata.parse_metadata`).
    vdd_mv:
        Supply voltage in mV: the source-meter output, or the external supply in ampere-meter
        mode. Enters the conversion (``S`` term) and becomes ``Chunk.voltage_v``.
    spike_filter:
        Apply ``ppk2-api``'s range-switch spike filter (see the module docs for why it is off
        by default).
    sample_rate_hz:
        Samples per second (100 kHz on a PPK2).
    start_index:
        Absolute index of the first sample.
    source:
        The port or file the bytes come from, named in log messages.

    Examples
    --------
    >>> dec = Ppk2Decoder(Ppk2Calibration(), vdd_mv=3000)
    >>> chunk = dec.feed(b"\\x00\\x40\\x00\\x01\\x00")   # one word and one byte of the next
    >>> len(chunk), int(chunk.logic[0]), dec.pending_bytes
    (1, 1, 1)
    """

    def __init__(self, calibration: Ppk2Calibration, vdd_mv: float, *, spike_filter: bool = False,
                 sample_rate_hz: float = SAMPLE_RATE_HZ, start_index: int = 0,
                 source: str = "PPK2 stream") -> None:
        if not 0 < vdd_mv <= MAX_VDD_MV:
            raise ValueError(f"vdd_mv must be in (0, {MAX_VDD_MV}] mV, got {vdd_mv}")
        self.calibration = calibration
        self.source = source
        self.vdd_mv = vdd_mv
        self.voltage_v = vdd_mv / 1000
        self.period_s = 1.0 / sample_rate_hz
        self.spike_filter = spike_filter
        self._kernel = Kernel(conversion_table(calibration, vdd_mv),
                              JUMP_FRACTION * _range_full_scale_a(calibration, vdd_mv), spike_filter)
        self._partial = b""
        self._last_corrupt: npt.NDArray[np.bool_] | None = None  # the chunk before's
        self._gap_buf = np.empty((_GAP_ROWS, 2), dtype=np.int64)
        self.next_index = start_index
        """Absolute index of the next sample to come (lost samples included)."""
        self.samples_lost = 0
        """Samples lost so far, by the counter (and by :meth:`add_loss`)."""
        self._uncounted = 0

    def add_loss(self, samples: int) -> None:
        """Count ``samples`` lost that the counter could not count (found against the host's
        clock, :mod:`energyrig.instruments.ppk2.clock`): the next chunk starts with a gap of
        them, so the sample index is on time again."""
        if samples <= 0:
            raise ValueError(f"a loss is > 0 samples, got {samples}")
        self._uncounted += samples
        self._kernel.lost()

    @property
    def pending_bytes(self) -> int:
        """Bytes of an incomplete word held for the next :meth:`feed`."""
        return len(self._partial)

    def feed(self, data: bytes | bytearray | memoryview | npt.NDArray[np.generic]) -> Chunk | None:
        """Decode a block of raw bytes; return its chunk, or ``None`` if no word completed.

        The block may start and end anywhere inside a word. The returned arrays are new
        (safe to keep); the next chunk may set the last element of ``corrupt`` (its sample
        checked against the next).
        """
        view = memoryview(data).cast("B")
        head = b""
        if self._partial:
            need = WORD_BYTES - len(self._partial)
            if len(view) < need:
                self._partial += bytes(view)
                return None
            head, view = self._partial + bytes(view[:need]), view[need:]
        body_len = len(view) - len(view) % WORD_BYTES
        self._partial = bytes(view[body_len:])
        n = len(head) // WORD_BYTES + body_len // WORD_BYTES
        if n == 0:
            return None
        out = _Outputs(n)
        gaps: list[npt.NDArray[np.int64]] = []
        at = 0
        for src in (head, view[:body_len]):
            at = self._decode_into(src, out, at, gaps)
        if self._uncounted:
            gaps.insert(0, np.array([[0, self._uncounted]], dtype=np.int64))
            self._uncounted = 0
        gap_rows = np.concatenate(gaps) if gaps else NO_GAPS
        if len(gap_rows) > 1 and gap_rows[1, 0] == 0:  # the counter's gap at 0 too: one row
            gap_rows = np.concatenate([[[0, gap_rows[0, 1] + gap_rows[1, 1]]], gap_rows[2:]])
        chunk = Chunk(start_index=self.next_index, period_s=self.period_s,
                      current_a=out.current, voltage_v=self.voltage_v, logic=out.logic,
                      saturated=out.saturated, gaps=gap_rows, current_range=out.range,
                      at_floor=out.floor, corrupt=out.corrupt)
        self._last_corrupt = chunk.corrupt
        if gaps:
            # Per chunk, so INFO: a lossy stream would flood the terminal. Windows carry the
            # dropped_samples flag and the live driver warns once per record.
            log.info("%s: %d samples lost (%d counter jumps) between samples %d and %d",
                        self.source, chunk.lost, len(gap_rows), chunk.start_index, chunk.end_index)
            self.samples_lost += chunk.lost
        self.next_index = chunk.end_index
        return chunk

    def _decode_into(self, src: bytes | memoryview, out: _Outputs, at: int,
                     gaps: list[npt.NDArray[np.int64]]) -> int:
        """Decode whole words of ``src`` into the outputs from index ``at``; return the end.
        The first word of a chunk checks the last sample of the chunk before: its mark goes
        to that chunk's ``corrupt``."""
        done, total = 0, len(src) // WORD_BYTES
        while done < total:
            n_done, n_gaps = self._kernel.decode(
                src[WORD_BYTES * done:], out.current, out.logic, out.saturated, out.range,
                out.floor, out.corrupt, at + done, self._gap_buf)
            if at + done == 0 and self._kernel.marked_before and self._last_corrupt is not None:
                self._last_corrupt[-1] = True
            if n_gaps:
                gaps.append(self._gap_buf[:n_gaps].copy())
            done += n_done
            if done < total:  # the gap buffer filled up: a badly broken stream
                self._gap_buf = np.empty((2 * len(self._gap_buf), 2), dtype=np.int64)
        return at + total


class _Outputs:
    """The per-sample arrays the kernel writes for one block."""

    def __init__(self, n: int) -> None:
        self.current = np.empty(n, dtype=np.float64)
        self.logic = np.empty(n, dtype=np.uint8)
        self.saturated = np.empty(n, dtype=np.bool_)
        self.range = np.empty(n, dtype=np.uint8)
        self.floor = np.empty(n, dtype=np.bool_)
        self.corrupt = np.empty(n, dtype=np.bool_)


def decode_stream(blocks: Iterable[bytes | memoryview], calibration: Ppk2Calibration,
                  vdd_mv: float, *, spike_filter: bool = False,
                  sample_rate_hz: float = SAMPLE_RATE_HZ, source: str = "PPK2 stream") -> Iterator[Chunk]:
    """Decode an iterable of raw byte blocks into chunks (see :class:`Ppk2Decoder`).

    A block may be reused by the producer once the next one is requested. Each chunk is
    given once the next is decoded (or the stream ended), so its last sample has been checked
    against the next one's first. A trailing incomplete word at the end of the stream is
    dropped with a warning naming ``source``.
    """
    decoder = Ppk2Decoder(calibration, vdd_mv, spike_filter=spike_filter, sample_rate_hz=sample_rate_hz,
                          source=source)
    held = None
    for block in blocks:
        chunk = decoder.feed(block)
        if chunk is not None:
            if held is not None:
                yield held
            held = chunk
    if held is not None:
        yield held
    if decoder.pending_bytes:
        log.warning("%s: the stream ends inside a word; its last %d bytes are dropped",
                    source, decoder.pending_bytes)


@functools.lru_cache(maxsize=64)
def _range_full_scale_a(cal: Ppk2Calibration, vdd_mv: float) -> npt.NDArray[np.float64]:
    """Each range's full-scale current, A (read-only, shared as :func:`conversion_table`)."""
    o, k, gs, gi, ug, c = conversion_table(cal, vdd_mv).T
    x = (ADC_FULL_SCALE * 4 - o) * k
    full_scale = ug * (x * (gs * x + gi) + c)
    full_scale.flags.writeable = False
    return full_scale


def range_steps(cal: Ppk2Calibration, vdd_mv: float) -> tuple[tuple[float, float], ...]:
    """``(full scale, A; current of one ADC code at half scale, A)`` of each range, from the
    unit's own calibration: what :class:`~energyrig.instruments.base.Resolution` takes."""
    o, k, gs, gi, ug, _ = conversion_table(cal, vdd_mv).T
    x = (ADC_FULL_SCALE * 4 / 2 - o) * k
    step = ug * (2 * gs * x + gi) * 4 * k  # dI/d(code) of ug * (gs x^2 + gi x + c)
    return tuple(zip(_range_full_scale_a(cal, vdd_mv).tolist(), step.tolist(), strict=True))


def auto_range(current_a: npt.NDArray[np.float64], cal: Ppk2Calibration, vdd_mv: float,
               switch_fraction: float = 0.9) -> npt.NDArray[np.intp]:
    """The range the device's automatic ranging picks for each current: the lowest whose
    full scale, times ``switch_fraction``, is above it."""
    limits = _range_full_scale_a(cal, vdd_mv) * switch_fraction
    return np.minimum(np.searchsorted(limits[:TOP_RANGE], current_a, side="right"), TOP_RANGE)


def encode_words(current_a: npt.ArrayLike, cal: Ppk2Calibration, vdd_mv: float, *,
                 logic: npt.ArrayLike | int = 0, counter_start: int = 0,
                 switch_fraction: float = 0.9) -> npt.NDArray[np.uint32]:
    """Encode currents as PPK2 words, the inverse of the decoder (for emulators and tests).

    Each current gets the lowest range whose full scale, times ``switch_fraction``, is above
    it (as the device's automatic ranging does) and the ADC code nearest to it under the
    calibration; currents above the top range clip to full scale (decoded as saturated).

    Parameters
    ----------
    current_a:
        Currents in A (>= 0; negative values encode as ADC code 0 of range 0).
    cal, vdd_mv:
        Calibration and supply voltage the decoder will use.
    logic:
        D0..D7 byte per sample, or one byte for all.
    counter_start:
        Counter value of the first word; the counter then advances by one per word.
    switch_fraction:
        Fraction of a range's full scale above which the next range is used.

    Returns
    -------
    numpy.ndarray of uint32, one word per sample (``.tobytes()`` is the wire format on a
    little-endian host).
    """
    amps = np.asarray(current_a, dtype=np.float64)
    rng = auto_range(amps, cal, vdd_mv, switch_fraction)
    o, k, gs, gi, ug, c = conversion_table(cal, vdd_mv)[rng].T
    # Solve ug * (gs x^2 + gi x + c) = I for x, in the cancellation-free form.
    y = amps / ug - c
    disc = np.sqrt(np.maximum(gi * gi + 4 * gs * y, 0.0))
    x = 2 * y / (gi + disc)
    adc = np.clip(np.rint((x / k + o) / 4), 0, ADC_FULL_SCALE).astype(np.uint32)
    n = amps.shape[0]
    counter = (np.arange(n, dtype=np.uint32) + np.uint32(counter_start & _COUNTER_MASK)) & _COUNTER_MASK
    bits = np.asarray(logic, dtype=np.uint32)  # one byte for all broadcasts
    return (adc | (rng.astype(np.uint32) << _RANGE_SHIFT) | (counter << _COUNTER_SHIFT)
            | (bits << _LOGIC_SHIFT)).astype(np.uint32, copy=False)


__all__ = ["SAMPLE_RATE_HZ", "ADC_MULT", "JUMP_FRACTION", "auto_range", "Ppk2Decoder",
           "decode_stream", "conversion_table", "encode_words", "range_steps"]
