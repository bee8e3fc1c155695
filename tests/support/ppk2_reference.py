"""The ``ppk2-api`` package as a reference, without a PPK2 attached.

``PPK2_API.__init__`` opens a serial port. :func:`reference_api` gives it the slave end of a
pseudo-terminal, so the package's own constructor runs unchanged, then loads a calibration
through its own metadata parser and sets the supply voltage. Tests and
``benchmarks/decode.py`` compare the decoder with it on the same bytes.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ppk2_api.ppk2_api import PPK2_API

from energyrig.errors import InstrumentError


@contextmanager
def reference_api(metadata_text: str, vdd_mv: int) -> Iterator[PPK2_API]:
    """Yield a ``PPK2_API`` on a pty with ``metadata_text`` parsed by ``ppk2-api`` itself.

    Parameters
    ----------
    metadata_text:
        Metadata as the device sends it (e.g. ``format_metadata(calibration)``).
    vdd_mv:
        Supply voltage in mV (``PPK2_API.current_vdd``).
    """
    master, slave = os.openpty()
    api = None
    try:
        api = PPK2_API(os.ttyname(slave))
        if not api._parse_metadata(metadata_text):
            raise InstrumentError("ppk2-api could not parse the metadata text")
        api.current_vdd = vdd_mv
        yield api
    finally:
        if api is not None and api.ser is not None:
            api.ser.close()
            api.ser = None
        os.close(slave)
        os.close(master)
