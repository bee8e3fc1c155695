"""Ground-truth log of the simulated bench: the true energy of every trigger window.

A JSON Lines file written by the emulator, one object per line, flushed line by line so a
reader can follow it during a run. Each line has a ``kind``:

``stream``
    Streaming started: ``t0_ns`` (CLOCK_MONOTONIC time of sample index 0), ``period_ns``,
    ``supply_v``, ``model`` (the :class:`~energyrig.instruments.sim.power.PowerModel`).
    Sample ``k`` of that stream was taken at ``t0_ns + k * period_ns``.
``window``
    One trigger window, written when its falling edge arrives: ``seq`` (of the rising edge),
    ``t_rise_ns``, ``t_fall_ns``, ``duration_s``, ``accel``, ``supply_v``, ``dut_powered``,
    ``energy_j``, ``idle_energy_j``, ``net_energy_j``, ``late``, ``family`` (the op family
    whose current the window drew, ``""`` for a ``mark`` window), ``clock_hz`` (the CPU clock
    the rising edge stated, at which the model drew the window's current; 0: not stated, the
    model's own ``clock_hz``). ``late`` is true when an
    edge of the window reached the emulator after the samples at its time had been streamed
    (the machine was too loaded for the emulator's latency): the stream then shows the
    window wrong, and a comparison with it should be flagged, not trusted.

``energy_j`` is exactly ``supply_v * ∫ i_model dt`` over ``[t_rise, t_fall]``, from the model
and the exact edge timestamps (not from samples): the family's current and bursts and the
rising edge's spike, in closed form (:func:`~energyrig.instruments.sim.power.window_charge`).
``idle_energy_j`` is what the board would have drawn idle over the same interval (idle
current and periodic loads), and ``net_energy_j = energy_j - idle_energy_j`` is the energy
due to the op. Measurement noise and injected instrument faults are not part of the truth:
they are what the rig must cope with. A window while DUT power was off (PPK2 source mode)
has energy 0.

Read it with :func:`read_truth` or ``pandas.read_json(path, lines=True)``.

The log is bounded: past :data:`ROTATE_BYTES` the recorder renames it to ``<path>.1``
(replacing the previous one) and starts a new one with the current ``stream`` line, so an
overnight sweep keeps at most two generations (about 4 KB/s of windows would otherwise grow
without end). :class:`TruthFollower` finishes the old generation before the new one.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from energyrig.errors import CaptureError
from energyrig.instruments.sim.power import PowerModel, window_charge
from energyrig.instruments.sim.wire import EdgeArray, family_name

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TruthWindow:
    """One line of kind ``window`` (see the module docstring for the fields)."""

    seq: int
    t_rise_ns: int
    t_fall_ns: int
    duration_s: float
    accel: bool
    supply_v: float
    dut_powered: bool
    energy_j: float
    idle_energy_j: float
    net_energy_j: float
    late: bool = False
    family: str = ""
    clock_hz: int = 0


@dataclass(frozen=True, slots=True)
class TruthStream:
    """One line of kind ``stream``."""

    t0_ns: int
    period_ns: int
    supply_v: float
    model: dict[str, Any]

    def sample_index(self, t_ns: int) -> float:
        """Fractional sample index of CLOCK_MONOTONIC time ``t_ns`` in this stream."""
        return (t_ns - self.t0_ns) / self.period_ns

    def match(self, windows: list[TruthWindow], start_s: float,
              tolerance_s: float = 1e-4) -> TruthWindow | None:
        """The true window whose rise is nearest ``start_s`` (a measured window's start in
        the stream's time base, sample 0 at 0 s), if within ``tolerance_s``."""
        t_ns = self.t0_ns + start_s * 1e9
        best = min(windows, key=lambda w: abs(w.t_rise_ns - t_ns), default=None)
        if best is None or abs(best.t_rise_ns - t_ns) > tolerance_s * 1e9:
            return None
        return best


#: Size past which a truth log is rotated, bytes.
ROTATE_BYTES = 16 * 2**20


def previous_generation(path: Path) -> Path:
    """Where a rotated truth log goes: ``truth.jsonl.1``."""
    return path.with_name(path.name + ".1")


class TruthRecorder:
    """Pairs trigger edges into windows and appends their true energy to the log.

    Parameters
    ----------
    path:
        The JSONL file (created or truncated).
    rotate_bytes:
        Size past which the log is rotated (:data:`ROTATE_BYTES`).
    """

    def __init__(self, path: str | os.PathLike[str], rotate_bytes: int = ROTATE_BYTES) -> None:
        self.path = Path(path)
        self.rotate_bytes = rotate_bytes
        self._file: IO[str] = self.path.open("w", encoding="utf-8")
        self._stream_line = ""
        self._rise: np.void | None = None  # the rising edge's record
        self._rise_late = False
        self.windows = 0

    def close(self) -> None:
        self._file.close()

    def _write(self, obj: dict[str, Any]) -> None:
        line = json.dumps(obj, separators=(",", ":")) + "\n"
        if obj["kind"] == "stream":
            self._stream_line = line
        self._file.write(line)
        self._file.flush()
        if self._file.tell() > self.rotate_bytes:
            self._file.close()
            os.replace(self.path, previous_generation(self.path))
            self._file = self.path.open("w", encoding="utf-8")
            self._file.write(self._stream_line)  # the new generation's time base
            self._file.flush()

    def stream_started(self, t0_ns: int, period_ns: int, supply_v: float,
                       model: PowerModel) -> None:
        """Record the time base of a new stream."""
        self._write({"kind": "stream", **asdict(TruthStream(t0_ns, period_ns, supply_v,
                                                             model.as_dict()))})

    def feed(self, edges: EdgeArray, model: PowerModel, supply_v: float,
             dut_powered: bool, late: npt.NDArray[np.bool_] | None = None) -> None:
        """Take edges in time order; write a line per completed window.

        ``late`` marks edges that arrived after their samples were streamed.
        """
        if late is None:
            late = np.zeros(len(edges), dtype=np.bool_)
        for rec, rec_late in zip(edges, late):
            t_ns, seq = int(rec["t_ns"]), int(rec["seq"])
            if rec["level"]:
                if self._rise is not None:
                    log.warning("truth: rising edge seq %d without a fall since seq %d; "
                                "the earlier window is not logged", seq, int(self._rise["seq"]))
                self._rise, self._rise_late = rec, bool(rec_late)
                continue
            if self._rise is None:
                log.warning("truth: falling edge seq %d without a rise; ignored", seq)
                continue
            rise, self._rise = self._rise, None
            t_rise, accel, family = int(rise["t_ns"]), bool(rise["accel"]), int(rise["family"])
            clock_hz = int(rise["clock_hz"])
            total_c, idle_c = window_charge(model, t_rise, t_ns, accel, family, clock_hz)
            v = supply_v if dut_powered else 0.0
            window = TruthWindow(seq=int(rise["seq"]), t_rise_ns=t_rise, t_fall_ns=t_ns,
                                 duration_s=(t_ns - t_rise) * 1e-9, accel=accel,
                                 supply_v=supply_v, dut_powered=dut_powered,
                                 energy_j=v * total_c, idle_energy_j=v * idle_c,
                                 net_energy_j=v * (total_c - idle_c),
                                 late=self._rise_late or bool(rec_late),
                                 family=family_name(family), clock_hz=clock_hz)
            self._write({"kind": "window", **asdict(window)})
            self.windows += 1


def _parse(line: str, where: str) -> TruthStream | TruthWindow:
    """One line of the log; :class:`CaptureError` naming ``where`` when it is not a record."""
    try:
        obj = json.loads(line)
        kind = obj.pop("kind")
        if kind == "stream":
            return TruthStream(**obj)
        if kind == "window":
            return TruthWindow(**obj)
        raise ValueError(f"unknown kind {kind!r}")
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise CaptureError(where, f"not a truth record ({exc})") from exc


class TruthFollower:
    """Follows a truth log as the emulator writes it, and matches measured windows to it.

    Parameters
    ----------
    path:
        The JSONL file (it may not exist yet).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.stream: TruthStream | None = None
        self.windows: list[TruthWindow] = []
        self._offset = 0
        self._partial = ""
        self._lineno = 0
        self._inode: int | None = None

    def read(self) -> None:
        """Take the lines written since the last read (a partial last line waits); after a
        rotation, the rest of the previous generation first."""
        try:
            fh = self.path.open(encoding="utf-8")
        except FileNotFoundError:
            return
        with fh:
            inode = os.fstat(fh.fileno()).st_ino
            text = ""
            if self._inode is not None and inode != self._inode:
                text = self._rest_of_previous_generation()
                self._offset = 0
            self._inode = inode
            fh.seek(self._offset)
            text += fh.read()
            self._offset = fh.tell()
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._lineno += 1
            if not line.strip():
                continue
            record = _parse(line, f"{self.path}: line {self._lineno}")
            if isinstance(record, TruthStream):  # a stream, or one record of a recorder
                self.stream = record
            else:
                self.windows.append(record)

    def _rest_of_previous_generation(self) -> str:
        """What the recorder wrote to the log this follower was reading before it was
        rotated, from where the follower stopped."""
        try:
            with previous_generation(self.path).open(encoding="utf-8") as fh:
                if os.fstat(fh.fileno()).st_ino == self._inode:
                    fh.seek(self._offset)
                    return fh.read()
        except FileNotFoundError:
            pass
        log.warning("truth: %s was rotated twice between two reads; the windows in between "
                    "have no truth", self.path)
        self._partial = ""
        return ""

    def match(self, sent_ns: int, replied_ns: int) -> TruthWindow | None:
        """The truth window of the batch whose ``run`` request was sent at ``sent_ns`` and
        answered at ``replied_ns`` (CLOCK_MONOTONIC, the clock of the trigger wire): the
        window inside that span, ``None`` if there is none (or several). Windows up to
        ``replied_ns`` are forgotten."""
        inside = self.match_all(sent_ns, replied_ns)
        return inside[0] if len(inside) == 1 else None

    def match_all(self, sent_ns: int, replied_ns: int) -> list[TruthWindow]:
        """Every truth window inside the span of a request sent at ``sent_ns`` and answered
        at ``replied_ns`` (a group's, ``run windows=R``), in time order. Windows up to
        ``replied_ns`` are forgotten."""
        self.read()
        inside = [w for w in self.windows if sent_ns <= w.t_rise_ns and w.t_fall_ns <= replied_ns]
        self.windows = [w for w in self.windows if w.t_fall_ns > replied_ns]
        return sorted(inside, key=lambda w: w.t_rise_ns)

    def offset_s(self, truth: TruthWindow, start_s: float) -> float:
        """How far a measured window's start (capture time base: sample 0 of the stream at
        0 s) lies from the true rising edge, s."""
        if self.stream is None:
            raise CaptureError(self.path, "no stream record before the window")
        return start_s - (truth.t_rise_ns - self.stream.t0_ns) * 1e-9


def read_truth(path: str | os.PathLike[str]) -> tuple[list[TruthStream], list[TruthWindow]]:
    """Read a whole truth log: its streams and windows, in file order.

    Raises
    ------
    CaptureError
        A line that is not a JSON object of a known kind, naming the line number.
    """
    streams: list[TruthStream] = []
    windows: list[TruthWindow] = []
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                record = _parse(line, f"{path}: line {lineno}")
                (streams if isinstance(record, TruthStream) else windows).append(record)
    return streams, windows
