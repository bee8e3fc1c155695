"""The PPK2 stream's integrity checks in plain numpy and Python, as the decoder ran them
before they moved into its compiled kernel (commits 9a33667, 9ad338e), with the range
excursion since widened to a code outside its neighbours' span: the reference
``tests/instruments/ppk2/test_ppk2_decode_kernel.py`` holds the kernel to, flag for flag.

It follows :meth:`Ppk2Decoder.feed` block by block: the bytes of a word split across two
feeds complete the word at the start of the next chunk, and that word is decoded as a block
of its own (so its counter is not compared with the word after it); the counter state runs
on from feed to feed; the neighbour checks see the last two samples of the chunk before
(:data:`NEIGHBOURS`), and mark the last sample of the chunk before in the flags returned
for it.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from energyrig.instruments.ppk2.decode import JUMP_FRACTION, range_steps
from energyrig.instruments.ppk2.metadata import Ppk2Calibration

TOP_RANGE = 4
WORD_BYTES = 4
NEIGHBOURS = 2
"""Samples of the chunk before that the neighbour checks of a chunk see."""


def excursions(values: npt.NDArray[np.generic]) -> npt.NDArray[np.bool_]:
    """Samples that differ from both neighbours while the neighbours agree (one-sample
    excursions; the first and last samples of the array are never marked)."""
    out = np.zeros(len(values), dtype=np.bool_)
    if len(values) >= 3:
        out[1:-1] = (values[1:-1] != values[:-2]) & (values[:-2] == values[2:])
    return out


def range_excursions(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    """Samples whose range code lies outside the span of their neighbours' (above both or
    below both; the first and last samples of the array are never marked)."""
    out = np.zeros(len(codes), dtype=np.bool_)
    if len(codes) >= 3:
        before, here, after = codes[:-2], codes[1:-1], codes[2:]
        out[1:-1] = ((here > before) & (here > after)) | ((here < before) & (here < after))
    return out


def jumps(current: npt.NDArray[np.float64], rng: npt.NDArray[np.uint8],
          jump_a: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """One-sample jumps within a range (codes above 4 read as 4) by more than ``jump_a`` of
    the range, A, the neighbours within a tenth of that of each other."""
    out = np.zeros(len(current), dtype=np.bool_)
    if len(current) < 3:
        return out
    r = np.minimum(rng, TOP_RANGE)
    limit = jump_a[r[1:-1]]
    before, here, after = current[:-2], current[1:-1], current[2:]
    out[1:-1] = ((r[:-2] == r[1:-1]) & (r[2:] == r[1:-1])
                 & (np.abs(here - before) > limit) & (np.abs(here - after) > limit)
                 & (np.abs(after - before) < limit / 10))
    return out


def jump_limits(cal: Ppk2Calibration, vdd_mv: float) -> npt.NDArray[np.float64]:
    """:data:`JUMP_FRACTION` of each range's full scale, A."""
    return JUMP_FRACTION * np.array([full_scale for full_scale, _ in range_steps(cal, vdd_mv)])


class ReferenceChecks:
    """Today's checks of a stream fed in blocks, one :meth:`feed` per decoder feed."""

    def __init__(self, cal: Ppk2Calibration, vdd_mv: float) -> None:
        self.jump_a = jump_limits(cal, vdd_mv)
        self.partial = b""
        self.prev = -1
        self.context = (np.empty(0, dtype="<u4"), np.empty(0, dtype=np.float64))
        self.context_lost = np.empty(0, dtype=np.bool_)  # samples lost just before each
        self.last: npt.NDArray[np.bool_] | None = None  # the flags returned for the chunk before

    def feed(self, data: bytes, current_a: npt.NDArray[np.float64] | None
             ) -> tuple[npt.NDArray[np.bool_], list[list[int]]] | None:
        """The corrupt flags and the counter's gaps (position in the chunk, samples lost) of
        the chunk this block makes, ``None`` if it makes none. ``current_a`` is the chunk's
        current as the decoder gave it (the conversion is held to ``ppk2-api`` elsewhere)."""
        raw = self.partial + data
        whole = len(raw) - len(raw) % WORD_BYTES
        head = 1 if self.partial else 0  # the word this block completes: a block of its own
        self.partial = raw[whole:]
        if whole == 0:
            return None
        assert current_a is not None
        return self.chunk(np.frombuffer(raw[:whole], dtype="<u4"), current_a, [head])

    def chunk(self, words: npt.NDArray[np.uint32], current_a: npt.NDArray[np.float64],
              splits: list[int]) -> tuple[npt.NDArray[np.bool_], list[list[int]]]:
        """The corrupt flags and the counter's gaps of one chunk of ``words`` decoded in
        blocks that start at each of ``splits`` (the counter looks ahead within a block)."""
        assert len(current_a) == len(words)
        corrupt = np.zeros(len(words), dtype=np.bool_)
        gaps: list[list[int]] = []
        for first, last in zip([0, *splits], [*splits, len(words)]):
            self.counter(words, first, last, corrupt, gaps)
        rng = ((words >> 14) & 7).astype(np.uint8)
        corrupt |= ((words >> 17) & 1).astype(bool) | (rng > TOP_RANGE)
        # the neighbour checks, with the end of the chunk before ahead of this one
        seen = np.concatenate([self.context[0], words])
        amps = np.concatenate([self.context[1], current_a])
        seen_rng = ((seen >> 14) & 7).astype(np.uint8)
        odd = (excursions((seen >> 24).astype(np.uint8)) | range_excursions(seen_rng)
               | jumps(amps, seen_rng, self.jump_a))
        k = len(self.context[0])
        lost = np.zeros(len(words), dtype=np.bool_)
        lost[[g for g, _ in gaps]] = True
        lost = np.concatenate([self.context_lost, lost])
        beside = lost.copy()  # samples lost before or after: no neighbours across
        beside[:-1] |= lost[1:]
        odd[beside] = False
        corrupt |= odd[k:]
        if self.last is not None and k:
            self.last[-1] |= odd[k - 1]
        self.context = (seen[-NEIGHBOURS:], amps[-NEIGHBOURS:])
        self.context_lost = lost[-NEIGHBOURS:]
        self.last = corrupt
        return corrupt, gaps

    def counter(self, words: npt.NDArray[np.uint32], first: int, last: int,
                 corrupt: npt.NDArray[np.bool_], gaps: list[list[int]]) -> None:
        """The counter rule over one block ``words[first:last]``: a skip the next word of the
        block continues is one corrupt counter, any other skip a gap."""
        counters = ((words[first:last] >> 18) & 63).tolist()
        for i, counter in enumerate(counters):
            if self.prev >= 0 and counter != (self.prev + 1) & 63:
                following = counters[i + 1] if i + 1 < len(counters) else -1
                if following == (self.prev + 2) & 63:
                    corrupt[first + i] = True
                    self.prev = (self.prev + 1) & 63
                    continue
                gaps.append([first + i, (counter - self.prev - 1) & 63])
            self.prev = counter
