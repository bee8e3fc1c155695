"""Calibration routines: measure offset, gain, skew and the window overhead on an open bench.

Each routine records a few trigger windows made by the firmware's ``mark`` request (a busy
loop of a known length with the trigger high: ``firmware/PROTOCOL.md``), so every instrument
records them as it records an op, and fits what it measures from the whole records with
numpy:

- :func:`~energyrig.calibration.routines.zero.zero`: the current input open (on a PPK2 bench: the board's supply disconnected from
  VOUT, the logic port still wired; on a scope bench: the shunt's probe shorted at its tip).
  The offset is the mean current; it must not follow the trigger (a board still connected
  would show its ``mark`` current), nor sit at the bottom of the range (an offset below zero
  that a PPK2 cannot show).
- :func:`~energyrig.calibration.routines.gain.gain`: reference resistors of known value and tolerance in place of the board
  (``[calibration] reference_ohms``), at the instrument's supply voltage (the record's). With
  two or more, a weighted line ``i_m = gain · V/R + offset`` through their readings gives
  both; with one, gain = (mean current − offset) / (V / R) with the offset in force. A gain
  far from 1 (an open or wrong load, a gain 10× off) is refused.
- :func:`~energyrig.calibration.routines.skew.skew`: the board connected: each ``mark`` window's rising edge is a current step at
  a trigger edge. The step is located in the current (its first sample past half-way) and
  compared with the trigger's first high sample; the edges' phases against the sample clock
  differ, so the mean over windows resolves the skew below one sample. A step that never
  comes, or is lost in the noise, is refused.
- :func:`~energyrig.calibration.routines.overhead.overhead`: the board connected: the firmware's empty window (``run n=0``), whose
  time and energy above idle every window of ops carries too; its records are corrected
  with the offset, gain and skew known first, since its energy is a few samples' worth.
- :func:`~energyrig.calibration.routines.baseline.baseline`: the board connected: seconds of the firmware's idle after a ``mark``
  window. Their drift and noise, the Allan deviation of their mean over spans, and from it
  the shortest baseline span whose standard error is within a stated :class:`~energyrig.calibration.routines.baseline.Precision`;
  the guard from the time the current takes to settle after the window's falling edge. It
  corrects nothing: it advises the fixture's ``[windows]`` (:func:`~energyrig.calibration.routines.baseline.fixture_lines`).

The gain is checked against the instrument's own stored calibration (a PPK2's metadata,
:func:`~energyrig.calibration.routines.gain.check_stated_gain`).

A routine returns what it measured (:class:`~energyrig.calibration.store.Measured`: value,
standard uncertainty, reference, residual) and refuses nonsense with
:class:`~energyrig.errors.CalibrationError`;
:func:`~energyrig.calibration.routines.calibrate.calibrate` runs several in order and stores
one record of their readings. What the operator must wire is asked through ``connect(load, ohms)``: the simulated bench switches its
emulator, a real bench's CLI prompts. SI units.

One routine per module (``zero``, ``gain``, ``skew``, ``overhead``, ``baseline``); ``marks``
takes the records they share, each through the pipeline's own
:func:`~energyrig.energy.record.record_window`; ``bench`` says what they need of a bench;
``calibrate`` runs several. No routine integrates samples: the energy of a window is
:mod:`energyrig.energy`'s (:func:`~energyrig.energy.windows.find_windows`).
"""
