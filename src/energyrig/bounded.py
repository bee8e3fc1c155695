"""Bounded reads of the files the rig takes as configuration.

A fixture, a plan, a calibration record, a footprint, a run manifest or a kept catalogue is
read whole into memory and parsed; a name that points at ``/dev/zero``, a FIFO or a
gigabyte file must not make the rig read forever, fill the memory or hang on ``open``. Every
such file goes through :func:`read_bytes`: it must be a regular file (a symlink to one is
followed) of at most :data:`LIMITS` bytes for its kind, else a
:class:`~energyrig.errors.ConfigError` naming the file; it is read in chunks, so Ctrl-C
stops a read on a slow disk.

Standard library only (the CLI imports it before anything heavy).
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from energyrig.errors import ConfigError

_MiB = 1 << 20
#: The largest file of each kind the rig reads, bytes (docs/security.md). Each is hundreds of
#: times what the rig writes or ships (a fixture or plan of a few kB, a manifest of tens).
LIMITS: dict[str, int] = {
    "fixture": _MiB,
    "plan": _MiB,
    "calibration record": _MiB,
    "footprint": _MiB,
    "catalogue cache": _MiB,
    "run manifest": 16 * _MiB,
    "segment index": 16 * _MiB,
}
#: Bytes read per call: a read returns to Python (and sees Ctrl-C) at least this often.
_CHUNK = 64 * 1024
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"))


def read_bytes(file: Path, what: str) -> bytes:
    """The bytes of ``file``, a regular file of at most ``LIMITS[what]`` bytes.

    Parameters
    ----------
    file:
        The file (a symlink is followed).
    what:
        Its kind, a key of :data:`LIMITS` (``"plan"``), named in the messages.

    Raises
    ------
    FileNotFoundError
        There is no such file (the caller says what is missing and where one comes from).
    ConfigError
        It is not a regular file (a device, FIFO, directory or socket), is larger than its
        limit, or cannot be read; the message names the file.
    """
    limit = LIMITS[what]
    try:
        # O_NONBLOCK: opening a FIFO with no writer returns at once (then refused below).
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(file, "", f"cannot read the {what} ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a file")
            raise ConfigError(file, "", f"is {kind}, not a regular file: give a {what} file")
        data = _read_at_most(fd, limit + 1)
    except OSError as exc:
        raise ConfigError(file, "", f"cannot read the {what} ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ConfigError(file, "", f"larger than {limit} bytes, the limit of a {what} "
                                    "(docs/security.md): not a file the rig wrote")
    return data


def read_text(file: Path, what: str) -> str:
    """The UTF-8 text of ``file`` (read by :func:`read_bytes`).

    Raises
    ------
    FileNotFoundError
        There is no such file.
    ConfigError
        As :func:`read_bytes`, or the file is not UTF-8 text.
    """
    try:
        return read_bytes(file, what).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(file, "", f"cannot read the {what} (not UTF-8 text: {exc})") \
            from None


def _read_at_most(fd: int, n: int) -> bytes:
    """Up to ``n`` bytes of ``fd``, one chunk per call."""
    chunks: list[bytes] = []
    left = n
    while left > 0:
        chunk = os.read(fd, min(_CHUNK, left))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_json(file: Path, what: str) -> Any:
    """The JSON document of ``file`` (read by :func:`read_text`).

    Raises
    ------
    FileNotFoundError
        There is no such file.
    ConfigError
        As :func:`read_text`, or the text is not JSON (``corrupt <what>: not valid JSON``),
        or is nested deeper than Python's parser goes.
    """
    text = read_text(file, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(file, "", f"corrupt {what}: not valid JSON ({exc})") from None
    except RecursionError:
        raise ConfigError(file, "", f"corrupt {what}: nested too deeply") from None
