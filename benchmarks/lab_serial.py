"""Benchmark: how many bytes per second a serial port shared by labgrid's exporter carries to
the rig, against the 400 kB/s of a PPK2's stream (100 kS/s, 4 B a sample).

A pty is shared exactly as ``labgrid-exporter`` shares a ``RawSerialPort`` (labgrid's own
``SerialPortExport`` starts ``ser2net``: Telnet/RFC 2217, ``local``); a writer process fills
the pty as fast as it drains; the port is read for a few seconds through

- ``pyserial rfc2217``: pyserial's RFC 2217 client (``serial.serial_for_url``);
- ``energyrig rfc2217``: :class:`energyrig.instruments.serialurl.Rfc2217Serial` (the rig's);

and every byte is checked against what was written (the stream holds 0xff, which Telnet
doubles). Run: ``.venv/bin/python benchmarks/lab_serial.py [--seconds 3]``; prints JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import time
import tty

import serial
from labgrid.remote.exporter import SerialPortExport

from energyrig.instruments.serialurl import Rfc2217Serial

#: What the writer repeats: every byte value, 0xff included.
PATTERN = bytes(range(256)) * 64
PPK2_BYTES_PER_S = 400e3


def measure(opener: str, seconds: float) -> dict[str, float | str | bool]:
    master, slave = os.openpty()
    tty.setraw(slave)
    export = SerialPortExport({"cls": "RawSerialPort",
                               "params": {"port": os.ttyname(slave), "speed": 115200}},
                              host="127.0.0.1")
    export.start()
    url = f"rfc2217://127.0.0.1:{export.port}?ign_set_control"
    port = (Rfc2217Serial(url, timeout=0.1) if opener == "energyrig rfc2217"
            else serial.serial_for_url(url, timeout=0.1))
    writer = os.fork()
    if writer == 0:
        while True:
            os.write(master, PATTERN)
    got = bytearray()
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        got += port.read(max(1, port.in_waiting))
    elapsed = time.monotonic() - start
    os.kill(writer, signal.SIGKILL)
    os.waitpid(writer, 0)
    port.close()
    export.stop()
    os.close(master)
    os.close(slave)
    intact = bytes(got) == (PATTERN * (len(got) // len(PATTERN) + 1))[:len(got)]
    rate = len(got) / elapsed
    return {"client": opener, "bytes_per_s": round(rate), "intact": intact,
            "ppk2_stream_fraction": round(rate / PPK2_BYTES_PER_S, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    rows = [measure(name, args.seconds) for name in ("pyserial rfc2217", "energyrig rfc2217")]
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
