"""sigrok-cli command lines and replies: pure functions, no subprocess.

The transport (:mod:`energyrig.instruments.sigrok.device`) runs what these functions build;
tests check the exact argv. Option syntax follows ``sigrok-cli(1)`` 0.7: ``--driver
NAME[:conn=...][:opt=val]``, ``--config key=val[:key=val]``, ``--channels A,B`` and
``--samples N``; ``--scan`` prints one line per device::

    demo - Demo device with 13 channels: D0 D1 D2 D3 D4 D5 D6 D7 A0 A1 A2 A3 A4
    fx2lafw:conn=1.6 - Saleae Logic with 8 channels: D0 D1 D2 D3 D4 D5 D6 D7
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from energyrig.errors import ConfigError
from energyrig.instruments.sigrok.config import SIGROK_CLI, SigrokConfig

_SCAN_LINE = re.compile(
    r"^(?P<spec>\S+) - (?P<description>.*?)(?: with (?P<count>\d+) channels?: (?P<channels>.*))?$")
_SOURCE = "sigrok device"


@dataclass(frozen=True, slots=True)
class ScannedDevice:
    """One line of ``sigrok-cli --scan``."""

    driver: str
    conn: str | None
    description: str
    channels: tuple[str, ...]

    @property
    def spec(self) -> str:
        """The ``--driver`` argument that selects this device."""
        return self.driver if self.conn is None else f"{self.driver}:conn={self.conn}"


def _options(pairs: Mapping[str, str]) -> list[str]:
    """``key=value`` items (the config model refused what the ``:`` syntax cannot carry)."""
    return [f"{key}={value}" for key, value in pairs.items()]


def driver_spec(cfg: SigrokConfig) -> str:
    """The ``--driver`` argument: ``demo``, ``fx2lafw:conn=1.6``."""
    conn = {"conn": cfg.conn} if cfg.conn is not None else {}
    return ":".join([cfg.driver, *_options({**conn, **cfg.driver_options})])


def format_samplerate(hz: float) -> str:
    """A sample rate as sigrok-cli parses it: whole hertz (``1000000``)."""
    return str(int(hz))


def samples_for(total_s: float, samplerate_hz: float) -> int:
    """Samples needed to cover ``total_s`` seconds (at least one; never rounded down)."""
    if not 0 <= total_s < math.inf:
        raise ConfigError(_SOURCE, "window", f"a capture must last a finite time >= 0 s, got {total_s}")
    return max(1, math.ceil(total_s * samplerate_hz - 1e-6))  # 1e-6: float noise, not a sample


def capture_argv(cfg: SigrokConfig, output: Path, samples: int) -> list[str]:
    """Command line capturing ``samples`` samples into the session file ``output``."""
    config = {}
    if cfg.samplerate_hz is not None:
        config["samplerate"] = format_samplerate(cfg.samplerate_hz)
    config.update(cfg.config)
    argv = [cfg.sigrok_cli, "--driver", driver_spec(cfg)]
    if config:
        argv += ["--config", ":".join(_options(config))]
    if cfg.channels:
        argv += ["--channels", ",".join(cfg.channels)]
    return argv + ["--samples", str(samples), "--output-format", "srzip",
                   "--output-file", str(output)]


def check_reader_channels(cfg: SigrokConfig, available: tuple[str, ...]) -> None:
    """Refuse a channel mapping that names a channel the capture will not contain.

    ``available`` is what the device offers (from its scan); only ``cfg.channels`` are
    captured when given. A string ``voltage`` is a channel name, a float a constant.
    """
    captured = cfg.channels or available
    roles = {"trigger": cfg.trigger, "current": cfg.current,
             "voltage": cfg.voltage if isinstance(cfg.voltage, str) else None}
    for role, name in roles.items():
        if name is not None and name not in captured:
            raise ConfigError(_SOURCE, role, f"channel {name!r} is not captured "
                                                         f"(channels: {', '.join(captured)})")


def scan_argv(sigrok_cli: str = SIGROK_CLI, driver: str | None = None) -> list[str]:
    """Command line listing devices (all drivers, or the one in ``driver``)."""
    return [sigrok_cli, *(["--driver", driver] if driver else []), "--scan"]


def parse_scan(text: str) -> list[ScannedDevice]:
    """Devices in the output of ``sigrok-cli --scan`` (header and blank lines skipped)."""
    devices = []
    for line in text.splitlines():
        match = _SCAN_LINE.match(line.strip())
        if match is None:
            continue
        driver, _, rest = match["spec"].partition(":")
        options = dict(item.partition("=")[::2] for item in rest.split(":") if item)
        channels = tuple(match["channels"].split()) if match["channels"] else ()
        devices.append(ScannedDevice(driver=driver, conn=options.get("conn"),
                                     description=match["description"], channels=channels))
    return devices
