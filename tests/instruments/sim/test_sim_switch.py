"""The simulated bench's load switch (`SimBench.connect`) on a stream whose time base is not
in the truth log yet: a calibration routine may switch right after the bench opened, before
the emulator has logged the stream's start (it logs it before its first sample)."""
from __future__ import annotations

from support.paths import ROOT

import math
import time

from energyrig.fixtures.loader import load_fixture
from energyrig.instruments.base import Limits
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.truth import TruthFollower, TruthRecorder
from energyrig.instruments.streaming import StreamAcquisition
from energyrig.rig.bench import SimBench

PERIOD_NS = 10_000


class LateStream(StreamAcquisition):
    """A stream whose first sample (and so its truth record) comes only once waited for, as
    an emulator that had not started streaming when the switch came."""

    def __init__(self, recorder: TruthRecorder) -> None:
        super().__init__(1e9 / PERIOD_NS, 1.0, 1.0)
        self.recorder = recorder
        self.t0_ns = time.monotonic_ns()  # the stream began before the switch
        self.waited: list[int] = []

    def wait_received(self, index: int, bound_s: float) -> None:
        if not self.waited:
            self.recorder.stream_started(self.t0_ns, PERIOD_NS, 3.0, PowerModel())
        self.waited.append(index)

    def limits(self) -> Limits:
        return Limits(sample_rate_hz=1e9 / PERIOD_NS, max_record_s=None, stream_lag_s=0.01)


def test_a_switch_before_the_stream_logged_its_start_waits_for_its_first_sample(tmp_path):
    fixture = load_fixture(ROOT / "fixtures" / "sim.toml")
    recorder = TruthRecorder(tmp_path / "truth.jsonl")
    bench = SimBench(fixture)
    bench.load_switch = tmp_path / "load.json"
    bench.truth = TruthFollower(tmp_path / "truth.jsonl")
    stream = LateStream(recorder)
    bench._instrument = stream

    bench.connect("open")

    # first a sample (the time base), then the samples pre_s past the switch
    assert stream.waited[0] == 1
    assert len(stream.waited) == 2
    pre_samples = fixture.measure.pre_s * 1e9 / PERIOD_NS
    assert stream.waited[1] >= math.floor(pre_samples)
    recorder.close()
