"""Float32 recordings as a Joulescope or a sigrok session holds them, for the tests of the
readers' one conversion (issue 24 part 2)."""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

RATE = 100_000
PERIOD, HIGH = 5_000, 1_200  # a window every 50 ms, 12 ms high


def recording(seed: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Noisy float32 current (A) and supply (V) around windows, and the trigger."""
    rng = np.random.default_rng(seed)
    n = 40 * PERIOD
    phase = np.arange(n) % PERIOD
    high = (phase >= 3_000) & (phase < 3_000 + HIGH)
    current = (np.where(high, 0.030, 0.002) + rng.normal(0, 1e-4, n)).astype(np.float32)
    volts = (3.3 + rng.normal(0, 1e-3, n)).astype(np.float32)
    return current, volts, high


def write_session(path: Path, current_v: np.ndarray, supply_v: np.ndarray,
                  high: np.ndarray, members: int = 3) -> Path:
    """A libsigrok srzip session at 100 kHz: TRIG (D0), SHUNT and SUPPLY (float32 volts),
    each channel cut into ``members`` members (so chunks straddle them)."""
    metadata = ("[global]\nsigrok version=0.5.2\n\n[device 1]\ncapturefile=logic-1\n"
                "total probes=8\nsamplerate=100 kHz\ntotal analog=2\nprobe1=TRIG\n"
                "analog9=SHUNT\nanalog10=SUPPLY\nunitsize=1\n")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("version", b"2")
        archive.writestr("metadata", metadata)
        for k, part in enumerate(np.array_split(np.arange(len(high)), members), start=1):
            archive.writestr(f"logic-1-{k}", high[part].astype(np.uint8).tobytes())
            archive.writestr(f"analog-1-9-{k}", current_v[part].astype("<f4").tobytes())
            archive.writestr(f"analog-1-10-{k}", supply_v[part].astype("<f4").tobytes())
    return path


SR_OPTIONS = dict(trigger="TRIG", current="SHUNT", voltage="SUPPLY")
