"""The VISA transport every SCPI family shares: :func:`open_session` and :class:`VisaSession`.

A PyVISA session (by default through the pure-Python ``pyvisa-py`` backend,
``pyvisa.ResourceManager("@py")``) on a resource string, its failures turned into one-line
:class:`~energyrig.errors.InstrumentError` messages naming the instrument and the command.
As libsigrok's ``src/scpi/`` serves every SCPI driver, a new VISA family opens its session
here and keeps only its protocol (commands, replies) in its own folder.
"""
from __future__ import annotations

import logging
import socket
from typing import Any

import numpy as np
import numpy.typing as npt
import pyvisa
import pyvisa.errors

from energyrig.errors import InstrumentError

log = logging.getLogger(__name__)

#: What a VISA call raises besides answering: the backend's errors, the OS's, bad values.
VISA_ERRORS = (pyvisa.errors.Error, OSError, ValueError)


class VisaSession:
    """An open VISA resource: its resource manager and instrument, closed together.

    Parameters
    ----------
    rm, inst:
        The resource manager and the opened resource (:func:`open_session` makes them).
    source:
        The instrument as messages name it (``"scope:TCPIP::10.0.0.5::INSTR"``).
    product:
        What it is called in a message (``"scope"``).
    """

    def __init__(self, rm: pyvisa.ResourceManager, inst: Any, source: str,
                 product: str) -> None:
        self.rm = rm
        self.inst = inst
        self.source = source
        self.product = product

    def io(self, what: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        """``call(*args, **kwargs)`` on the session, a failure an
        :class:`~energyrig.errors.InstrumentError` naming ``what`` was sent."""
        try:
            return call(*args, **kwargs)
        except pyvisa.errors.VisaIOError as exc:
            raise InstrumentError(f"{self.source}: no answer to {what} ({exc.description})") \
                from exc
        except OSError as exc:
            raise InstrumentError(f"{self.source}: cannot reach the {self.product} ({exc}) "
                                  f"sending {what}; check the address, the LAN/USB link and "
                                  "that no other program holds it") from exc
        except VISA_ERRORS as exc:
            raise InstrumentError(f"{self.source}: {what} failed ({exc})") from exc

    def write(self, command: str) -> None:
        self.io(command, self.inst.write, command)

    def query(self, command: str) -> str:
        """The reply to ``command``, stripped."""
        return str(self.io(command, self.inst.query, command)).strip()

    def query_block(self, command: str, datatype: str) -> npt.NDArray[np.generic]:
        """A binary block reply as a numpy array (IEEE 488.2 definite length)."""
        return self.io(command, self.inst.query_binary_values, command, datatype=datatype,
                       container=np.ndarray, header_fmt="ieee", expect_termination=True)

    def read_bytes(self, what: str, n: int) -> bytes:
        """``n`` raw bytes (what follows a reply, ``what`` in messages)."""
        return bytes(self.io(what, self.inst.read_bytes, n))

    def close(self, last: str | None = None) -> None:
        """Write ``last`` (a stop command; a failure only logged), then close the session and
        its resource manager."""
        try:
            if last is not None:
                self.inst.write(last)
        except VISA_ERRORS as exc:
            log.warning("%s: could not send %s at close (%s)", self.source, last, exc)
        finally:
            self.inst.close()
            self.rm.close()


def open_session(resource: str, visa_library: str = "@py", timeout_s: float = 10.0, *,
                 source: str | None = None, product: str = "instrument") -> VisaSession:
    """Open the PyVISA session of ``resource`` through the backend ``visa_library``
    (terminations set, I/O timeout ``timeout_s`` in s; ``source``, ``product``: how messages
    name it, by default ``resource`` and ``"instrument"``).

    Raises
    ------
    InstrumentError
        The backend is missing or the resource does not open; the message says which.
    """
    try:
        rm = pyvisa.ResourceManager(visa_library)
    except VISA_ERRORS as exc:
        raise InstrumentError(f"VISA backend {visa_library!r} not available ({exc}); "
                              "install pyvisa-py or name another visa_library") from exc
    try:
        inst = rm.open_resource(resource, timeout=int(timeout_s * 1000),
                                read_termination="\n", write_termination="\n")
    except VISA_ERRORS as exc:
        rm.close()
        raise InstrumentError(f"{product} {resource}: does not open ({exc}); check the "
                              f"address, that the {product} is on the network/USB and not "
                              "held by another program") from exc
    _no_nagle(inst)
    return VisaSession(rm, inst, source or resource, product)


def _no_nagle(inst: Any) -> None:
    """Turn Nagle's algorithm off on a pyvisa-py ``SOCKET`` session.

    pyvisa-py leaves it on and its ``VI_ATTR_TCPIP_NODELAY`` setter raises UnknownAttribute
    (pyvisa-py 0.8; reported in nominal-io/instro#156), so each small command written before
    a query waits for the scope's delayed ACK: about 40 ms per query, 1 s per 6 Mpts read in
    250 000-point parts. NI-VISA turns it off by default. Other sessions are left alone.
    """
    session = getattr(inst.visalib, "sessions", {}).get(inst.session)
    sock = getattr(session, "interface", None)
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
