"""Driving a Zephyr build of the firmware: the smallest valid ``prep`` of an op, the Mbed TLS
options every board must build with, and waiting until a freshly started board answers."""
from __future__ import annotations

import os
import select
import subprocess
import time

from energyrig.rig.dut import Dut, OpInfo

#: The speed options every board must build Mbed TLS with (README "Conditions").
INTENDED_CRYPTO = {
    "mbedtls_ecp_nist_optim": "on",
    "mbedtls_have_asm": "on",
    "mbedtls_aes_tables": "full-ram",
    "mbedtls_sha256": "full",
    "sha3_impl": "mbedtls",
}



def smallest_prep(dut: Dut, op: OpInfo) -> dict:
    args = {"backend": op.backend}
    if op.key_bits:
        args["key_bits"] = op.key_bits[0]
    if op.curves:
        args["curve"] = op.curves[0]
    if op.payload:
        lo, _, multiple = op.payload
        args["payload_bytes"] = -(-lo // multiple) * multiple
    return dut.prep(op.name, timeout_s=600, **args)


def check_crypto(conditions: dict) -> None:
    wrong = {k: conditions.get(k) for k, v in INTENDED_CRYPTO.items() if conditions.get(k) != v}
    assert not wrong, f"Mbed TLS built otherwise than intended: {wrong}"


def wait_until_listening(proc: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    """Bytes that reach the UART before the firmware has set it up are lost: send empty
    lines until one is answered, then drop any further answers."""
    assert proc.stdin is not None and proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        proc.stdin.write(b"\n")
        if select.select([proc.stdout], [], [], 1.0)[0]:
            while select.select([proc.stdout], [], [], 0.5)[0]:
                os.read(proc.stdout.fileno(), 4096)
            return
    raise AssertionError(f"the firmware did not answer within {timeout_s} s")


