"""The DUT link against the real host firmware (stdio and pty), and against DUTs that
misbehave: one that never answers, one that answers late, one that answers garbage."""
from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from support.paths import ROOT

from energyrig.errors import DutError
from energyrig.rig.dut import Dut, DutProcess, DutRefused, SerialTransport

FIRMWARE = (str(ROOT / "build" / "host" / "energyrig-dut"),)


def shell(script: str) -> tuple[str, ...]:
    """A DUT command running ``script`` in sh (DutProcess appends --stdio as $1)."""
    return ("sh", "-c", script, "sh")


@pytest.mark.parametrize("link", ["stdio", "pty"])
@pytest.mark.slow
def test_a_session_with_the_host_firmware(link: str) -> None:
    with DutProcess(FIRMWARE, link, board="bench-7") as proc:
        dut = proc.dut
        assert dut is not None
        hello = dut.hello()
        assert hello["protocol"] == 1 and hello["board"] == "bench-7"
        ops = {o.name: o for o in dut.ops()}
        assert ops["aes-cbc-encrypt"].key_bits == (128, 192, 256)
        assert ops["aes-cbc-encrypt"].payload == (16, hello["payload_max"], 16)
        assert "p256" in ops["ecdsa-sign"].curves and ops["rsa-keygen"].payload is None
        prep = dut.prep("sha256", payload_bytes=64, seed=3)
        assert prep["selftest"] == "pass" and prep["seed"] == 3
        run = dut.run(100, timeout_s=5)
        assert run.n == 100 and run.elapsed_ns > 0 and run.cycles > 0
        assert 0.0105 <= dut.idle(0.0101) < 1.0  # rounded up to whole ms


@pytest.mark.slow
def test_a_refusal_carries_the_firmware_error_and_the_link_goes_on() -> None:
    with DutProcess(FIRMWARE, "stdio") as proc:
        dut = proc.dut
        assert dut is not None
        with pytest.raises(DutRefused, match=r"key_bits=100 not allowed \(allowed: 128, 192, "
                                             r"256\)") as info:
            dut.prep("aes-cbc-encrypt", key_bits=100, payload_bytes=16)
        assert info.value.reply["ok"] is False
        with pytest.raises(DutRefused, match="run"):
            dut.run(1, timeout_s=5)  # nothing prepared
        assert dut.hello()["protocol"] == 1


def test_a_hung_dut_is_an_error_naming_the_request() -> None:
    with DutProcess(shell("cat > /dev/null"), "stdio", timeout_s=0.3) as proc:
        assert proc.dut is not None
        t0 = time.monotonic()
        with pytest.raises(DutError, match=r"did not answer 'prep sha256 payload_bytes=64' "
                                           r"within 0.3 s"):
            proc.dut.prep("sha256", payload_bytes=64)
        assert time.monotonic() - t0 >= 0.3  # it waited its bound (load only lengthens it)


def test_a_late_reply_is_not_taken_for_the_next_one() -> None:
    script = 'while read l; do sleep 0.4; echo "{\\"ok\\":true,\\"req\\":\\"$l\\"}"; done'
    with DutProcess(shell(script), "stdio", timeout_s=0.1) as proc:
        dut = proc.dut
        assert dut is not None
        with pytest.raises(DutError, match="did not answer 'hello'"):
            dut.request("hello")
        assert dut.request("ops", timeout_s=3)["req"] == "ops"
        assert dut.request("help", timeout_s=3)["req"] == "help"


def test_boot_text_before_the_first_reply_is_skipped() -> None:
    """The ESP32's ROM bootloader prints at reset, before the firmware runs."""
    rom = "ets Jun  8 2016 00:22:57\nrst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)"
    script = f"printf '{rom}\\n\\n'; read l; echo '{{\"ok\":true,\"protocol\":1}}'"
    with DutProcess(shell(script), "stdio") as proc:
        assert proc.dut is not None
        assert proc.dut.hello()["protocol"] == 1


def test_garbage_and_an_exited_dut_are_errors() -> None:
    script = "read l; echo '{\"ok\":true}'; read l; echo 'not json'; read l; echo '[1]'"
    with DutProcess(shell(script), "stdio") as proc:
        dut = proc.dut
        assert dut is not None
        dut.hello()  # the first reply: after it, every line is taken for a reply
        with pytest.raises(DutError, match="reply to 'hello' is not a JSON object: b'not json'"):
            dut.hello()
        with pytest.raises(DutError, match="not a JSON object"):
            dut.hello()
        with pytest.raises(DutError, match="exited|closed its output"):
            dut.hello()


@pytest.mark.slow
def test_a_missing_program_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(DutError, match="make firmware-host"):
        DutProcess((str(tmp_path / "energyrig-dut"),), "stdio").__enter__()


def test_a_pty_dut_that_prints_nothing_is_an_error() -> None:
    with pytest.raises(DutError, match="printed no pty path"):
        with DutProcess(shell("sleep 5"), "pty", timeout_s=0.3):
            pass



def test_a_dut_behind_a_url_answers_through_a_socket() -> None:
    """``socket://host:port`` (a port shared on the network without Telnet): the link waits
    on the socket's descriptor."""
    server = socket.create_server(("127.0.0.1", 0))
    host, port = server.getsockname()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            request = b""
            while not request.endswith(b"\n"):
                request += conn.recv(64)
            conn.sendall(b'{"ok": true, "echo": "' + request.strip() + b'"}\n')

    thread = threading.Thread(target=serve)
    thread.start()
    transport = SerialTransport(f"socket://{host}:{port}")
    try:
        assert Dut(transport, timeout_s=5).request("hello") == {"ok": True, "echo": "hello"}
    finally:
        transport.close()
        thread.join(timeout=5)
        server.close()


def test_a_url_nobody_serves_is_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(DutError, match=f"DUT on rfc2217://127.0.0.1:{port}: cannot open"):
        SerialTransport(f"rfc2217://127.0.0.1:{port}")
