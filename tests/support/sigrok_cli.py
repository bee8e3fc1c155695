"""sigrok-cli itself as the reference the .sr reader is compared with: what ``--show``,
``-O analog`` (V, printed to 2 decimals) and ``-O bits`` print of a session file."""
from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np

SIGROK = "sigrok-cli"
ANALOG_PRINT_TOLERANCE_V = 0.005 + 1e-6  # half of the last of 2 printed decimals


# sigrok-cli 0.7.2 reading a session file ends with this GLib assertion and exit status 1
# after it has written all its output (a reference-count bug in its teardown): tolerated,
# any other message on stderr with a failing status is not.
TEARDOWN_ASSERTION = "g_atomic_ref_count_dec: assertion 'old_value > 0' failed"


def sigrok(*args: str) -> str:
    """stdout of one sigrok-cli run (it must succeed, but for its known teardown assertion)."""
    done = subprocess.run([SIGROK, *args], capture_output=True, text=True, timeout=120, check=False)
    other = [line for line in done.stderr.splitlines() if line.strip() != TEARDOWN_ASSERTION]
    if done.returncode != 0 and (other or not done.stderr):
        raise AssertionError(f"sigrok-cli {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout



def sigrok_show(path: Path) -> dict[str, object]:
    """What ``sigrok-cli -i FILE --show`` reports."""
    text = sigrok("-i", str(path), "--show")
    channels = re.findall(r"^- (\S+): (logic|analog)$", text, flags=re.MULTILINE)

    def number(label: str) -> int | None:
        match = re.search(rf"^{label}: (\d+)$", text, flags=re.MULTILINE)
        return int(match[1]) if match else None

    return {"samplerate": number("Samplerate"), "channels": channels,
            "unitsize": number("Logic unitsize"), "logic_samples": number("Logic sample count"),
            "analog_samples": number("Analog sample count")}


def sigrok_analog(path: Path) -> dict[str, np.ndarray]:
    """Every analog sample sigrok-cli prints with ``-O analog``, by channel."""
    values: dict[str, list[float]] = defaultdict(list)
    for line in sigrok("-i", str(path), "-O", "analog").splitlines():
        match = re.match(r"^(\S+): (\S+) V", line)
        if match:
            values[match[1]].append(float(match[2]))
    return {name: np.array(v) for name, v in values.items()}


def sigrok_bits(path: Path, channel: str) -> np.ndarray:
    """Every sample of one logic channel as sigrok-cli prints it with ``-O bits``."""
    text = sigrok("-i", str(path), "-O", "bits:width=4096", "-C", channel)
    digits = "".join(line.split(":", 1)[1].replace(" ", "")
                     for line in text.splitlines() if line.startswith(f"{channel}:"))
    return np.frombuffer(digits.encode(), dtype=np.uint8) - ord("0")

