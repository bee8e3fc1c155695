"""Files laid out as the nRF Connect Power Profiler app writes them, for tests and benchmarks.

Each function follows the app's own code, NordicSemiconductor/pc-nrfconnect-ppk at commit
8da7626e53e302a030ce741a9ea23900d1574e69 (package.json 4.4.0), step for step:

- :func:`write_csv_export`: ``src/actions/exportChartAction.ts`` (``formatDataForExport``,
  ``selectivePrint`` and the header line), with ``indexToTimestamp`` of ``src/globals.ts``
  and JavaScript's number-to-text rules (:func:`js_number`, :func:`js_to_fixed`);
- :func:`write_session`: ``src/utils/saveFileHandler.ts`` (a zip, deflate level 6, of the
  session folder: ``session.raw`` as ``DataManager().addData`` fills it, ``metadata.json``
  as ``JSON.stringify`` writes it, and ``minimap.raw``), written to a stream that cannot
  seek, so each member carries a data descriptor as ``archiver`` streams them;
- :func:`convert_bits16`: ``src/utils/bitConversion.ts``.

``minimap.raw`` holds the app's keys but not its folded plot data (the rig does not read it).
"""
from __future__ import annotations

import functools
import json
import math
import zipfile
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import BinaryIO, TextIO

import numpy as np
import numpy.typing as npt

#: The export dialog's four choices: timestamp, current, packed D0-D7, one column per channel.
ALL = (True, True, True, False)
HEADER = ("Timestamp(ms)", "Current(uA)", "D0-D7", "D0,D1,D2,D3,D4,D5,D6,D7")
FRAME = np.dtype([("current_ua", "<f4"), ("bits", ">u2")])

#: A block of samples: current in µA (float32) and the 16-bit channel pairs (uint16).
Block = tuple[npt.NDArray[np.float32], npt.NDArray[np.uint16]]


def convert_bits16(b8: npt.NDArray[np.integer]) -> npt.NDArray[np.uint16]:
    """``convertBits16``: each of the 8 bits becomes a pair, 1 (low) or 2 (high)."""
    b8 = np.asarray(b8, dtype=np.uint32)
    out = np.zeros(b8.shape, dtype=np.uint32)
    for k in range(8):
        bit = 1 << k
        out |= ((b8 & bit) + bit) << k
    return out.astype(np.uint16)


def js_number(x: float) -> str:
    """JavaScript's ``String(x)`` for a finite number (ECMA-262 Number::toString): the
    shortest digits that read back as ``x`` (Python's ``repr``), laid out by JavaScript's
    rules."""
    if x == 0:
        return "0"
    text = repr(float(x))
    minus, text = ("-", text[1:]) if text[0] == "-" else ("", text)
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # the decimal point after digit n of the digits, leading and trailing zeros dropped
    n = int(exp or 0) + len(whole) - (len(whole + frac) - len(digits))
    s = digits.rstrip("0")
    k = len(s)
    if k <= n <= 21:
        return minus + s + "0" * (n - k)
    if 0 < n <= 21:
        return minus + s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return minus + "0." + "0" * (-n) + s
    e = f"{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
    return minus + (s[0] + ("." + s[1:] if k > 1 else "")) + "e" + e


@functools.lru_cache(maxsize=1 << 16)
def js_to_fixed(x: float, digits: int) -> str:
    """JavaScript's ``x.toFixed(digits)``: the exact value, ties away from zero."""
    return str(Decimal(float(x)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


@functools.lru_cache(maxsize=1 << 16)
def _channel_chars(b16: int) -> tuple[str, str]:
    """The export's D0-D7 text of a 16-bit channel pair word: packed and one per column."""
    chars = [("-", "0", "1", "X")[(b16 >> (2 * i)) & 3] for i in range(8)]
    return "".join(chars), ",".join(chars)


def _select(cells: tuple[str, str, str, str], selection: tuple[bool, ...]) -> str:
    return ",".join(c for c, keep in zip(cells, selection, strict=True) if keep) + "\n"


def write_csv_export(out: TextIO, blocks: Iterable[Block], samples_per_second: float,
                     selection: tuple[bool, bool, bool, bool] = ALL, start: int = 0) -> None:
    """The app's CSV export of the samples from index ``start``: header, then one line per
    sample whose current is not NaN."""
    out.write(_select(HEADER, selection))
    n0 = start
    for current, bits in blocks:
        lines = []
        for n, (value, b16) in enumerate(zip(current.tolist(), bits.tolist(), strict=True)):
            if math.isnan(value):  # the app leaves the sample out
                continue
            timestamp = (1e6 * (n0 + n)) / samples_per_second / 1000
            lines.append(_select((js_number(timestamp), js_to_fixed(value, 3),
                                  *_channel_chars(b16)), selection))
        out.write("".join(lines))
        n0 += len(current)


class _Unseekable:
    """A write-only stream: ``zipfile`` then writes data descriptors, as ``archiver`` does."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh

    def write(self, data: bytes) -> int:
        return self._fh.write(data)

    def flush(self) -> None:
        self._fh.flush()


def write_session(path: Path, blocks: Iterable[Block], samples_per_second: float,
                  start_system_time: int | None = 1_700_000_000_000,
                  order: tuple[str, ...] = ("metadata.json", "minimap.raw", "session.raw"),
                  metadata: dict | None = None) -> None:
    """A saved session (``.ppk2``) of the samples; ``order`` is the members' order in the zip
    (the app's is the session folder's directory order). ``metadata`` replaces the JSON."""
    inner: dict[str, float | int] = {"samplesPerSecond": samples_per_second}
    if start_system_time is not None:
        inner["startSystemTime"] = start_system_time
    doc = metadata if metadata is not None else {"metadata": inner, "formatVersion": 2}
    texts = {
        "metadata.json": json.dumps(doc, separators=(",", ":")),
        "minimap.raw": json.dumps({"lastElementFoldCount": 0,
                                   "data": {"length": 0, "min": [], "max": []},
                                   "maxNumberOfElements": 10000, "numberOfTimesToFold": 1},
                                  separators=(",", ":")),
    }
    with path.open("wb") as fh, zipfile.ZipFile(_Unseekable(fh), "w", zipfile.ZIP_DEFLATED,
                                                compresslevel=6) as zf:
        for name in order:
            if name in texts:
                zf.writestr(name, texts[name])
                continue
            with zf.open(name, "w", force_zip64=True) as raw:
                for current, bits in blocks:
                    frames = np.empty(len(current), FRAME)
                    frames["current_ua"] = current
                    frames["bits"] = bits
                    raw.write(frames.tobytes())
