"""A window longer than the firmware's own time of its batch is left out and replaced (found
under load: two host-DUT windows stretched 10-20 % by the process taken off its core inside
the trigger pulse were kept in the estimate, only flagged ``duration_mismatch``, and the
point's time per op came out 9.5 % above what the firmware's cycles say)."""
from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from support.pipeline import POINT, ScriptedBench, ScriptedDut

from energyrig.flags import WINDOW_CUT, WINDOW_STRETCHED
from energyrig.rig.flags import DURATION_MISMATCH
from energyrig.rig.pipeline import measure_point, reps_done


@dataclass
class PreemptedOnce(ScriptedDut):
    """The first measured batch's own clock saw 80 % of its trigger pulse (run 1 is the
    warm-up): the rest of the pulse held something else (the process off its core between
    the rising edge and its timer)."""

    def run(self, n: int, timeout_s: float, settle_s: float = 0.0):  # type: ignore[no-untyped-def]
        reply = super().run(n, timeout_s, settle_s)
        if self.runs != 2:
            return reply
        return replace(reply, elapsed_ns=round(reply.elapsed_ns * 0.8))


def test_a_window_longer_than_its_batch_is_left_out_and_replaced() -> None:
    bench = ScriptedBench()
    bench.dut = PreemptedOnce(bench.log)
    bench.instrument.dut = bench.dut
    result = measure_point(bench, POINT, until=reps_done(3), batch_n=500)  # type: ignore[arg-type]
    assert result.ok, result.reason
    (stretched,) = [w for w in result.windows if WINDOW_STRETCHED in w.flags]
    assert DURATION_MISMATCH in stretched.flags and WINDOW_CUT not in stretched.flags
    assert stretched not in result.estimate and len(result.estimate) == 3
    # The estimate's time per op is the firmware's: the stretched window's 25 % is not in it.
    fig = result.figures()
    assert fig["time_per_op_s"] == pytest.approx(bench.dut.op_s, rel=1e-3)
