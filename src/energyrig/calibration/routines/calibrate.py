"""``rig calibrate``: run several routines in order and store one record of what they
measured (module docstring of :mod:`energyrig.calibration.routines`)."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from energyrig.calibration.correction import CurrentCorrection
from energyrig.calibration.quantities import ORDER, ROUTINES
from energyrig.calibration.routines.baseline import DEFAULT_PRECISION, Precision, baseline
from energyrig.calibration.routines.bench import CalibrationBench, Connect
from energyrig.calibration.routines.gain import check_stated_gain, gain
from energyrig.calibration.routines.overhead import overhead
from energyrig.calibration.routines.skew import skew
from energyrig.calibration.routines.zero import zero
from energyrig.calibration.store import (CalibrationStore, Identity, Measured, Quantity, Record,
                                         calibration_dir, new_record)
from energyrig.errors import CalibrationError

log = logging.getLogger(__name__)


def calibrate(bench: CalibrationBench, connect: Connect, names: Sequence[str],
              precision: Precision = DEFAULT_PRECISION) -> tuple[Record, Path]:
    """Run the routines ``names`` (of :data:`ORDER`) on ``bench`` and store one record of
    what they measured in the fixture's store.

    With two or more references ``gain`` fits the offset too, and ``all`` skips ``zero``;
    with one it takes out the offset ``zero`` just measured, or else the store's valid one.
    The gain is checked against the instrument's own calibration (:func:`check_stated_gain`),
    whose identity the record keeps; a disagreement is a note of the record. ``baseline``
    advises the spans for ``precision``.

    Raises
    ------
    CalibrationError
        A routine refused its measurement, ``gain`` has no offset to take out, or a value
        is implausible (:meth:`~energyrig.calibration.store.Measured.implausible`, the
        check the store makes when it reads a record); nothing is stored.
    """
    fx = bench.fixture
    store = CalibrationStore(calibration_dir(fx))
    info = bench.instrument.describe()
    identity = Identity.of(info)
    stored = store.latest(identity).values
    readings: dict[Quantity, Measured] = {}
    notes: list[str] = []
    fitted_offset = len(fx.calibration.reference_ohms) >= 2
    for name in (n for n in ORDER if n in names):
        if name == "zero" and not (fitted_offset and "gain" in names):
            readings["offset_a"] = zero(bench, connect)
        elif name == "gain":
            readings.update(gain(bench, connect,
                                 offset=readings.get("offset_a") or stored.get("offset_a")))
            note = check_stated_gain(readings["gain"], info.stated)
            if note:
                log.warning("%s", note)
                notes.append(note)
        elif name == "skew":
            readings["skew_s"] = skew(bench, connect)
        elif name == "overhead":
            known = {q: readings.get(q) or stored[q]
                     for q in ("offset_a", "gain", "skew_s") if q in readings or q in stored}
            readings.update(overhead(bench, connect, CurrentCorrection.from_values(known)))
        elif name == "baseline":
            readings.update(baseline(bench, connect, precision))
    for q, reading in readings.items():
        found = reading.implausible(q)
        if found is not None:
            raise CalibrationError(f"{ROUTINES[q]}: {q} {found[0]}: {found[1]}. Nothing stored")
    own = info.stated.identity if info.stated is not None and "gain" in readings else None
    record = new_record(fx, identity, bench.hello, readings, notes=tuple(notes),
                        instrument_calibration=own)
    return record, store.save(record)
