"""sigrok: session files (``.sr``) and libsigrok devices driven through ``sigrok-cli``.

- :mod:`.srfile` reads session files as a streamed :class:`~energyrig.capture.Capture`;
- :mod:`.protocol` builds sigrok-cli command lines and parses its replies;
- :mod:`.device` runs sigrok-cli as a subprocess (the transport).
"""
from energyrig.instruments.sigrok.device import SigrokDevice, list_devices
from energyrig.instruments.sigrok.protocol import ScannedDevice, SigrokDeviceConfig
from energyrig.instruments.sigrok.srfile import SrCapture, SrOptions, open_sr

__all__ = ["ScannedDevice", "SigrokDevice", "SigrokDeviceConfig", "SrCapture", "SrOptions",
           "list_devices", "open_sr"]
