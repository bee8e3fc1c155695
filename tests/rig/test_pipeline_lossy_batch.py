"""A window whose stream lost samples does not grow the auto batch (issue 22, found on the
simulated lab of emulated boards): its samples are lost, not missing, so their count says
nothing of how long the op took. Grown for it, the batch of one point depended on the host's
load (two places of the same board measuring sha256 1 KiB at once chose 1537 and 1068 ops a
window where the board's cycles say 22), and so did every window after it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from support.pipeline import POINT, RATE_HZ, ScriptedBench, ScriptedInstrument

from energyrig.flags import STREAM_LOSS, WINDOW_CUT
from energyrig.instruments.base import RecordedCapture
from energyrig.rig.pipeline import measure_point, reps_done


@dataclass
class LossyOnce(ScriptedInstrument):
    """The first window's record lost all but a tenth of its high samples, flagged ``flags``
    (``stream_loss``, as the PPK2 driver flags a loss the counter could not count; none for
    a loss no counter or clock saw there)."""

    lossy: bool = True
    flags: tuple[str, ...] = (STREAM_LOSS,)

    def collect(self, timeout_s: float) -> RecordedCapture:
        record = super().collect(timeout_s)
        if not self.lossy:
            return record
        self.lossy = False
        (chunk,) = record.chunk_list
        high = np.flatnonzero(chunk.logic)
        drop = high[len(high) // 10:]
        keep = np.ones(len(chunk.logic), dtype=bool)
        keep[drop] = False
        cut = type(chunk)(chunk.start_index, chunk.period_s, chunk.current_a[keep],
                          chunk.voltage_v, chunk.logic[keep])
        return RecordedCapture(record.source, (cut,), flags=self.flags)


@pytest.mark.parametrize(("flags", "raised"), [
    ((STREAM_LOSS,), STREAM_LOSS),
    # Found on the simulated lab of emulated boards at load 7-9 (two places, one grew its
    # sha256 batch from 41 to 820): the stream lost samples where no counter or clock
    # flagged it, and the window came out 2.8 ms where the firmware timed 30.9 ms.
    ((), WINDOW_CUT),
])
def test_a_lossy_window_is_replaced_not_grown_for(flags: tuple[str, ...], raised: str) -> None:
    bench = ScriptedBench()
    bench.instrument = LossyOnce(bench.dut, bench.log, flags=flags)
    result = measure_point(bench, POINT, until=reps_done(3))  # type: ignore[arg-type]
    assert result.ok, result.reason
    # The auto batch is the probes' (a window of the fixture's samples), kept throughout.
    target = bench.fixture.measure.min_window_samples
    assert result.batch_n * bench.dut.op_s * RATE_HZ < 3 * target
    assert all(w.samples == result.windows[-1].samples for w in result.estimate)
    assert len(result.estimate) == 3
    (lossy,) = [w for w in result.windows if raised in w.flags]
    assert lossy not in result.estimate
    assert (STREAM_LOSS in lossy.flags) == (STREAM_LOSS in flags)
    assert not any(raised in w.flags for w in result.estimate)
