"""What a calibration routine needs of an open bench (:class:`CalibrationBench`) and of the
operator's wiring (:data:`Connect`)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from energyrig.fixtures.schema import Fixture
    from energyrig.instruments.base import Acquisition

Connect = Callable[..., None]
"""``connect(load, ohms=inf)``: wire the bench's current input to ``load`` (the board,
nothing, the reference resistor of ``ohms``): the simulated bench switches its emulator, a
real bench's CLI asks the operator."""


class Dut(Protocol):
    def request(self, line: str, timeout_s: float | None = None) -> dict[str, Any]: ...

    def idle(self, seconds: float) -> float: ...


class CalibrationBench(Protocol):
    """What a routine needs of an open bench (:class:`energyrig.rig.bench.Bench`)."""

    fixture: Fixture

    @property
    def hello(self) -> Mapping[str, Any]: ...

    @property
    def dut(self) -> Dut: ...

    @property
    def instrument(self) -> Acquisition: ...
