"""A byte-level fake SCPI instrument for expected-protocol tests (pymeasure style).

:class:`ExpectedProtocol` listens on a loopback TCP port (a VISA ``SOCKET`` resource) and
walks a script of ``(expected line, reply)`` pairs: every line the client sends must equal
the next expected line exactly; the reply (``str``: text plus ``\\n``; ``bytes``: sent as is
plus ``\\n``; ``None``: nothing) goes back. The first mismatch is recorded and the connection
closed, so a test asserts ``fake.error is None`` and ``fake.finished``.
"""
from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Self

Script = list[tuple[str, str | bytes | None]]


def ieee_block(data: bytes, digits: int = 9) -> bytes:
    """An IEEE 488.2 definite-length block, written out by hand for the tests."""
    return b"#" + str(digits).encode() + str(len(data)).zfill(digits).encode() + data


class ExpectedProtocol:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.step = 0
        self.error: str | None = None
        self.received: list[str] = []
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(1)
        self._server.settimeout(10)
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def resource(self) -> str:
        return f"TCPIP::127.0.0.1::{self._server.getsockname()[1]}::SOCKET"

    @property
    def finished(self) -> bool:
        return self.step == len(self.script)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._thread.join(timeout=10)
        self._server.close()

    def _run(self) -> None:
        try:
            conn, _ = self._server.accept()
        except OSError as exc:
            self.error = f"no connection ({exc})"
            return
        buf = b""
        with conn:
            conn.settimeout(10)
            while self.step < len(self.script):
                while b"\n" not in buf:
                    try:
                        data = conn.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        self.error = f"step {self.step}: connection closed, expected " \
                                     f"{self.script[self.step][0]!r}"
                        return
                    buf += data
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode("ascii", "replace")
                self.received.append(line)
                expected, reply = self.script[self.step]
                if line != expected:
                    self.error = f"step {self.step}: expected {expected!r}, got {line!r}"
                    return
                self.step += 1
                if reply is not None:
                    out = reply.encode("ascii") if isinstance(reply, str) else reply
                    conn.sendall(out + b"\n")
