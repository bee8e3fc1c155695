"""Public-key and composite ops of the firmware on the host DUT, side by side with OpenSSL.

For every public-key op at every key size and curve (and iot-join), the built host DUT
(``build/host/energyrig-dut --stdio``, mbedTLS 2.28 on this machine) is prepared over its
protocol and runs a batch long enough for about half a second; the DUT's own ``elapsed_ns``
divided by the batch size is the time per op, and ``stack_bytes`` its stack high-water mark.
With ``--heap`` each op is also prepared (which runs its self-test) and run once in a session
under valgrind's massif; the session's peak heap is an upper bound of what mbedTLS allocates
for it, since the ops' own buffers come from the arena and the only other heap user is the
DUT's stdio (the peak of a session that prepares nothing is printed beside). It bounds what a
board's mbedTLS heap (``CONFIG_MBEDTLS_HEAP_SIZE``) must hold.

The reference is ``openssl speed -seconds 1`` on the same machine, for the ops it has:
RSA and DSA sign/verify, ECDSA on P-256/P-384, ECDH on P-256/X25519 and FFDH-2048. OpenSSL
signs a precomputed digest while these ops hash a 32-byte message first (negligible), and
OpenSSL's FFDH uses a short private exponent (2 x 112 bits for ffdhe2048) where dh-shared uses
a full-size one, so that row compares different work.

usage: .venv/bin/python benchmarks/firmware_pk.py [--dut PATH] [--heap] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD = 32
TARGET_S = 0.5

# (op, key_bits, curve) of every case; payload_bytes is added for ops that take one.
CASES: list[tuple[str, int | None, str | None]] = (
    [("rsa-keygen", b, None) for b in (1024, 2048)]
    + [(op, b, None) for op in ("rsa-encrypt", "rsa-decrypt", "rsa-sign", "rsa-verify")
       for b in (1024, 2048, 3072, 4096)]
    + [(op, b, None) for op in ("dsa-sign", "dsa-verify") for b in (1024, 2048)]
    + [(op, b, None) for op in ("dh-keygen", "dh-shared") for b in (512, 768, 1024, 2048)]
    + [(op, None, c) for op in ("ecdsa-keygen", "ecdsa-sign", "ecdsa-verify")
       for c in ("p256", "p384", "secp256k1")]
    + [(op, None, c) for op in ("ecdh-keygen", "ecdh-shared") for c in ("p256", "x25519")]
    + [("iot-join", None, None)]
)
TAKES_PAYLOAD = ("rsa-encrypt", "rsa-decrypt", "rsa-sign", "rsa-verify", "dsa-sign",
                 "dsa-verify", "ecdsa-sign", "ecdsa-verify", "iot-join")

# openssl speed -mr lines: +F<kind>:<index>:<bits>:<first>/s:<second>/s
OPENSSL: dict[tuple[str, int | None, str | None], tuple[str, str, int]] = {}
for _b in (1024, 2048, 3072, 4096):
    OPENSSL[("rsa-sign", _b, None)] = (f"rsa{_b}", "F2", 0)
    OPENSSL[("rsa-verify", _b, None)] = (f"rsa{_b}", "F2", 1)
for _b in (1024, 2048):
    OPENSSL[("dsa-sign", _b, None)] = (f"dsa{_b}", "F3", 0)
    OPENSSL[("dsa-verify", _b, None)] = (f"dsa{_b}", "F3", 1)
for _c in ("p256", "p384"):
    OPENSSL[("ecdsa-sign", None, _c)] = (f"ecdsa{_c}", "F4", 0)
    OPENSSL[("ecdsa-verify", None, _c)] = (f"ecdsa{_c}", "F4", 1)
OPENSSL[("ecdh-shared", None, "p256")] = ("ecdhp256", "F5", 0)
OPENSSL[("ecdh-shared", None, "x25519")] = ("ecdhx25519", "F5", 0)
OPENSSL[("dh-shared", 2048, None)] = ("ffdh2048", "F8", 0)


@dataclass
class Row:
    op: str
    key_bits: int | None
    curve: str | None
    n: int
    us_per_op: float
    stack_bytes: int
    heap_bytes: int | None = None
    openssl_us_per_op: float | None = None


def prep_line(op: str, key_bits: int | None, curve: str | None) -> str:
    words = ["prep", op, "seed=1"]
    if key_bits is not None:
        words.append(f"key_bits={key_bits}")
    if curve is not None:
        words.append(f"curve={curve}")
    if op in TAKES_PAYLOAD:
        words.append(f"payload_bytes={PAYLOAD}")
    return " ".join(words)


class Dut:
    """One DUT session over standard input and output."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen([str(path), "--stdio"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def ask(self, line: str) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if not reply.get("ok"):
            raise RuntimeError(f"{line!r}: {reply}")
        return reply

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def time_case(dut: Dut, op: str, key_bits: int | None, curve: str | None) -> Row:
    dut.ask(prep_line(op, key_bits, curve))
    first = dut.ask("run n=1")
    n = max(1, min(100_000, math.ceil(TARGET_S * 1e9 / max(first["elapsed_ns"], 1))))
    batch = dut.ask(f"run n={n}")
    return Row(op, key_bits, curve, n, batch["elapsed_ns"] / n / 1e3, batch["stack_bytes"])


def massif_peak(dut: Path, lines: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "massif.out"
        subprocess.run(["valgrind", "--tool=massif", f"--massif-out-file={out}", str(dut),
                        "--stdio"], input="\n".join(lines) + "\n", text=True,
                       capture_output=True, check=True, timeout=1800)
        return max(int(v) for v in re.findall(r"mem_heap_B=(\d+)", out.read_text()))


def openssl_speed(algs: list[str]) -> dict[tuple[str, str], list[float]]:
    res = subprocess.run(["openssl", "speed", "-seconds", "1", "-mr", *algs],
                         capture_output=True, text=True, check=True)
    rates: dict[tuple[str, str], list[float]] = {}
    for line in res.stdout.splitlines():
        m = re.match(r"\+(F\d):\d+:(\d+):([\d.]+):([\d.]+)", line)
        if m:
            rates[(m.group(1), m.group(2))] = [float(m.group(3)), float(m.group(4))]
    return rates


def openssl_bits(alg: str) -> str:
    return {"ecdsap256": "256", "ecdsap384": "384", "ecdhp256": "256",
            "ecdhx25519": "253"}.get(alg, re.sub(r"\D", "", alg))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dut", type=Path, default=ROOT / "build/host/energyrig-dut")
    ap.add_argument("--heap", action="store_true", help="also measure mbedTLS's peak heap")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    if not args.dut.exists():
        sys.exit(f"{args.dut} not found: build it with `make firmware-host`")

    dut = Dut(args.dut)
    rows = [time_case(dut, *case) for case in CASES]
    dut.close()

    if shutil.which("openssl"):
        algs = sorted({alg for alg, _, _ in OPENSSL.values()})
        rates = openssl_speed(algs)
        for row in rows:
            ref = OPENSSL.get((row.op, row.key_bits, row.curve))
            if ref is not None:
                alg, kind, which = ref
                rate = rates.get((kind, openssl_bits(alg)))
                if rate and rate[which] > 0:
                    row.openssl_us_per_op = 1e6 / rate[which]

    base = None
    if args.heap:
        base = massif_peak(args.dut, ["hello"])
        for row in rows:
            row.heap_bytes = massif_peak(
                args.dut, [prep_line(row.op, row.key_bits, row.curve), "run n=1"])

    if args.json:
        print(json.dumps({"idle_heap_bytes": base, "rows": [asdict(r) for r in rows]}, indent=1))
        return 0
    if base is not None:
        print(f"peak heap of a session that prepares nothing: {base} B")
    print(f"{'op':14} {'params':10} {'n':>6} {'us/op':>11} {'openssl us':>11} {'x':>6} "
          f"{'stack B':>8} {'heap B':>8}")
    for r in rows:
        params = str(r.key_bits or r.curve or "-")
        ref = f"{r.openssl_us_per_op:11.1f}" if r.openssl_us_per_op else f"{'-':>11}"
        ratio = f"{r.us_per_op / r.openssl_us_per_op:6.1f}" if r.openssl_us_per_op else f"{'-':>6}"
        heap = f"{r.heap_bytes:8d}" if r.heap_bytes is not None else f"{'-':>8}"
        print(f"{r.op:14} {params:10} {r.n:6d} {r.us_per_op:11.1f} {ref} {ratio} "
              f"{r.stack_bytes:8d} {heap}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
