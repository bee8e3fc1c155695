"""What Qoitech states of each Otii model's main current channel, as a table by the device
type the Otii server names (``"Arc"``, ``"Ace"``): :data:`RESOLUTION`.

The Otii Arc ranges its main current automatically; its step in each range (A), from the
Arc's specification as Elektor's review quotes it ("Otii – power consumption optimizer for
wearables and IoT devices", elektormagazine.com/labs/otii-power-consumption-optimizer-for-
wearables-and-iot-devices): 5 nA below 20 mA, 82 µA below 2.7 A, 1.5 mA up to 5 A.

The Otii Ace: no resolution figure of Qoitech's was found (its stated accuracy, ±(0.05 % +
25 nA) for low currents, Qoitech's blog "How accurate is your low current measurement?", is
not a step and gives no range bounds), so it has no row: its budget's ADC resolution stays
unknown rather than guessed.
"""
from __future__ import annotations

from energyrig.instruments.base import Resolution

#: The main current channel's step per automatic range, by device type: ``(highest current of
#: the range, A; its step, A)``, ascending (:class:`~energyrig.instruments.base.Resolution`).
RESOLUTION: dict[str, Resolution] = {
    "Arc": Resolution(((20e-3, 5e-9), (2.7, 82e-6), (5.0, 1.5e-3)),
                      "Otii Arc main current, per automatic range (Elektor's review of the "
                      "Arc's specification)"),
}
