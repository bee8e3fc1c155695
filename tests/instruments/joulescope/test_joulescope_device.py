"""The Joulescope live back-end against a fake of the ``pyjoulescope_driver.Driver`` object.

The driver offers no injectable device layer below its Python object (the USB backend is in
its C library), so the fake is of the driver object: it keeps its documented pub/sub
contract (``device_paths``, ``open``, ``publish``, ``subscribe``, ``unsubscribe``, ``close``,
``finalize``) and sends stream messages shaped as its binding builds them (``sample_id`` in
instrument samples, ``decimate_factor``, ``sample_rate``, ``utc``, float32 ``data``, u1 data
packed 8 per byte least significant bit first). Not tried on hardware.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from energyrig.errors import InstrumentError, NoTriggerWindow
from energyrig.instruments.joulescope.config import JoulescopeConfig
from energyrig.instruments.joulescope.device import Joulescope
from energyrig.energy.windows import find_windows

PATH = "u/js220/001234"
RATE = 100_000
DECIMATE = 20  # the JS220 counts samples at 2 MHz


class FakeDriver:
    """``pyjoulescope_driver.Driver`` as the back-end uses it, with one JS220 attached."""

    def __init__(self, paths: tuple[str, ...] = (PATH,)) -> None:
        self.paths = list(paths)
        self.published: list[tuple[str, object]] = []
        self.subscribers: dict[str, Callable[[str, Any], None]] = {}
        self.opened: list[tuple[str, str | None]] = []
        self.closed: list[str] = []
        self.finalized = 0

    def device_paths(self) -> list[str]:
        return self.paths

    def open(self, device_prefix: str, mode: str | None = None,
             timeout: float | None = None) -> None:
        self.opened.append((device_prefix, mode))

    def publish(self, topic: str, value: object, timeout: float | None = None) -> None:
        self.published.append((topic, value))

    def subscribe(self, topic: str, flags: Any, fn: Callable[[str, Any], None],
                  timeout: float | None = None) -> None:
        assert flags == ["pub"]
        self.subscribers[topic] = fn

    def unsubscribe(self, topic: str, fn: Callable[[str, Any], None],
                    timeout: float | None = None) -> None:
        assert self.subscribers.pop(topic) == fn

    def close(self, device_prefix: str, timeout: float | None = None) -> None:
        self.closed.append(device_prefix)

    def finalize(self, timeout: float | None = None) -> None:
        self.finalized += 1

    def send(self, signal: str, first: int, data: np.ndarray) -> None:
        """One stream message of ``signal`` (``i``, ``v``, ``gpi/1``) from output sample
        ``first``."""
        bits = signal.startswith("gpi")
        payload = (np.packbits(data.astype(np.uint8), bitorder="little") if bits
                   else data.astype(np.float32))
        topic = f"{PATH}/s/{signal}/!data"
        self.subscribers[topic](topic, {
            "sample_id": first * DECIMATE, "decimate_factor": DECIMATE,
            "sample_rate": RATE * DECIMATE, "utc": 0, "field_id": 0, "index": 0,
            "data": payload})

    def stream(self, first: int, current: np.ndarray, volts: float, trigger: np.ndarray,
               block: int = 800) -> None:
        """The three signals from ``first`` in messages of ``block`` samples, current a block
        ahead of the others (the signals arrive independently)."""
        for lo in range(0, len(current), block):
            self.send("i", first + lo, current[lo:lo + block])
        for lo in range(0, len(current), block):
            self.send("v", first + lo, np.full(min(block, len(current) - lo), volts))
            self.send("gpi/1", first + lo, trigger[lo:lo + block])


def config(**kw: Any) -> JoulescopeConfig:
    return JoulescopeConfig(sample_rate_hz=RATE, trigger_gpi=1, current_range="18 mA", **kw)


@pytest.fixture
def fake() -> FakeDriver:
    return FakeDriver()


def test_start_sets_up_subscribes_and_enables_stop_undoes(fake: FakeDriver) -> None:
    js = Joulescope(config(), driver=lambda: fake)
    js.start()
    assert fake.opened == [(PATH, "defaults")]
    assert fake.published == [
        (f"{PATH}/h/fs", RATE), (f"{PATH}/s/i/range/mode", "manual"),
        (f"{PATH}/s/i/range/select", "18 mA"),
        (f"{PATH}/s/i/ctrl", 1), (f"{PATH}/s/v/ctrl", 1), (f"{PATH}/s/gpi/1/ctrl", 1)]
    assert set(fake.subscribers) == {f"{PATH}/s/i/!data", f"{PATH}/s/v/!data",
                                     f"{PATH}/s/gpi/1/!data"}
    js.stop()
    js.stop()
    assert fake.subscribers == {} and fake.closed == [PATH] and fake.finalized == 1
    assert fake.published[-3:] == [(f"{PATH}/s/i/ctrl", 0), (f"{PATH}/s/v/ctrl", 0),
                                   (f"{PATH}/s/gpi/1/ctrl", 0)]
    info = js.describe()
    assert (info.name, info.serial, info.address) == ("JS220", "001234", PATH)


def test_a_js110_takes_auto_as_a_range() -> None:
    fake = FakeDriver(("u/js110/000009",))
    js = Joulescope(JoulescopeConfig(), driver=lambda: fake)
    js.start()
    assert fake.published[:2] == [("u/js110/000009/h/fs", 1_000_000),
                                  ("u/js110/000009/s/i/range/select", "auto")]
    js.stop()


def test_a_collected_window_has_the_closed_form_energy(fake: FakeDriver) -> None:
    """5 000 idle samples at 1 mA, then a 1 234-sample pulse at 12.5 mA, 3 V; the trigger
    input starts 40 samples before current and voltage (its first samples are dropped)."""
    idle, pulse, amps, volts = 5_000, 1_234, 0.0125, 3.0
    with Joulescope(config(), driver=lambda: fake) as js:
        fake.send("gpi/1", 960, np.zeros(40, np.uint8))
        fake.stream(1_000, np.full(idle, 0.001), volts, np.zeros(idle, np.uint8))
        js.arm(pre_s=0.03, window_s=0.02, post_s=0.01)
        current = np.r_[np.full(pulse, amps), np.full(idle, 0.001)]
        trigger = np.r_[np.ones(pulse, np.uint8), np.zeros(idle, np.uint8)]
        fake.stream(1_000 + idle, current, volts, trigger)
        record = js.collect(timeout_s=1.0)
    assert record.chunk_list[0].start_index == idle - 3_000  # pre_s before the newest
    assert record.chunk_list[-1].end_index == idle + pulse + 1_000  # post_s after the fall
    [window] = list(find_windows(record))
    assert window.samples == pulse
    assert window.energy_j == pytest.approx(pulse / RATE * amps * volts, rel=1e-6)
    assert window.net_energy_j == pytest.approx(pulse / RATE * (amps - 0.001) * volts,
                                                rel=1e-6)


def test_a_lost_message_is_flagged_corrupt_not_shifted(fake: FakeDriver) -> None:
    with Joulescope(config(), driver=lambda: fake) as js:
        fake.send("i", 0, np.full(800, 0.002))
        fake.send("i", 1_600, np.full(800, 0.002))  # 800 current samples never arrived
        fake.send("v", 0, np.full(2_400, 3.0))
        fake.send("gpi/1", 0, np.zeros(2_400, np.uint8))
        chunk = js._buffer.chunks[-1]
    assert chunk.start_index == 0 and len(chunk) == 2_400
    assert chunk.corrupt is not None and np.flatnonzero(chunk.corrupt).tolist() == list(
        range(800, 1_600))


def test_no_trigger_window_times_out(fake: FakeDriver) -> None:
    with Joulescope(config(), driver=lambda: fake) as js:
        fake.stream(0, np.full(2_000, 0.001), 3.0, np.zeros(2_000, np.uint8))
        js.arm(pre_s=0.001, window_s=0.01, post_s=0.0)
        with pytest.raises(NoTriggerWindow, match="the trigger never rose on GPI 1"):
            js.collect(timeout_s=0.05)


@pytest.mark.parametrize(("paths", "device", "message"), [
    ((), None, "no Joulescope attached"),
    ((), PATH, "no Joulescope attached"),
    ((PATH, "u/js220/000002"), None, "2 Joulescopes attached .*choose one with device"),
    ((PATH,), "u/js110/000009", "device 'u/js110/000009' is not attached"),
])
def test_which_device_is_refused_with_the_attached_ones_named(
        paths: tuple[str, ...], device: str | None, message: str) -> None:
    fake = FakeDriver(paths)
    with pytest.raises(InstrumentError, match=message):
        Joulescope(config(device=device), driver=lambda: fake).start()
    assert fake.finalized == 1


def test_rig_instruments_lists_what_the_driver_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyjoulescope_driver

    from energyrig.instruments.joulescope.family import scan

    fake = FakeDriver((PATH, "u/js110/000009"))
    monkeypatch.setattr(pyjoulescope_driver, "Driver", lambda: fake)
    found = scan()
    assert [(f.address, f.description) for f in found] == [
        (PATH, "JS220 serial 001234"), ("u/js110/000009", "JS110 serial 000009")]
    assert found[0].fixture == f'kind = "joulescope"\ndevice = "{PATH}"'
    assert fake.finalized == 1


def test_an_armed_buffer_that_overflows_is_refused(fake: FakeDriver) -> None:
    with Joulescope(config(buffer_s=0.05, history_s=0.01), driver=lambda: fake) as js:
        fake.stream(0, np.full(1_600, 0.001), 3.0, np.zeros(1_600, np.uint8))
        js.arm(pre_s=0.01, window_s=0.01, post_s=0.01)
        fake.stream(1_600, np.full(8_000, 0.001), 3.0, np.zeros(8_000, np.uint8))
        with pytest.raises(InstrumentError, match="samples of the armed window were discarded"):
            js.collect(timeout_s=1.0)
