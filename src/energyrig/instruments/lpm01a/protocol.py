"""The STM32 Power Shield's (X-NUCLEO-LPM01A) serial command protocol: commands, replies,
numbers.

Shared by the driver (:mod:`.driver`) and the emulator (:mod:`.emulator`). Sources, read side
by side (docs/lpm01a.md cites them): ST's user manual UM2243 and the board firmware's own
``help`` text, which MLPerf Tiny's energy runner (``mlcommons/tiny``,
``benchmark/runner/power_manager.py``) carries verbatim; the runner and Zephyr's power
measurement scripts (``zephyrproject-rtos/zephyr``, ``scripts/pm/stm32l562e_dk/``) show it used:

* the host sends one command a line (``htc``, ``volt 3300m``, ``freq 100k``, ``acqtime 0``,
  ``format bin_hexa``, ``trigsrc sw``, ``eventsrc d7 fal``, ``start``, ``stop``,
  ``status``...), at 3686400 baud;
* the board answers each line with ``PowerShield > ack <command> [<value>]`` or
  ``PowerShield > error <command>`` followed by ``Error detail: <why>``, lines ending in
  CR LF; ``stop`` is not acknowledged: the stream ends (:mod:`.processing`) and
  ``Acquisition completed`` follows;
* numbers are digits with a unit letter (``u``, ``m``, ``k``: ``3300m``, ``100k``) or a power
  of ten (``2-3`` = 2e-3, ``6409-07``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: The board's baud rate (UM2243; both the runner and Zephyr's scripts open it so).
BAUD_RATE = 3_686_400
#: What the board writes before each reply.
PROMPT = "PowerShield > "
#: Line end of the board's text.
EOL = b"\r\n"
#: The line that ends an acquisition's text after ``stop``.
COMPLETED = "Acquisition completed"
#: The detail line that follows an ``error`` reply.
DETAIL = "Error detail:"

_UNITS = {"u": 1e-6, "m": 1e-3, "k": 1e3}
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)(?:([umk])|([+-]\d{1,2}))?")


def parse_value(text: str) -> float:
    """A number as the board writes and reads them: ``3300m`` -> 3.3, ``100k`` -> 1e5,
    ``2-3`` -> 2e-3, ``6409-07`` -> 6.409e-4, ``10`` -> 10.

    Raises
    ------
    ValueError
        Not such a number.
    """
    match = _NUMBER.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a PowerShield number: {text!r}")
    digits, unit, power = match.groups()
    value = float(digits)
    if unit:
        return value * _UNITS[unit]
    return value * 10.0 ** int(power) if power else value


def format_rate(rate_hz: int) -> str:
    """``freq``'s argument for ``rate_hz`` (100000 -> ``100k``, 500 -> ``500``)."""
    return f"{rate_hz // 1000}k" if rate_hz >= 1000 else str(rate_hz)


def format_millis(value: float) -> str:
    """A value in thousandths, as ``volt`` takes it (3.3 -> ``3300m``)."""
    return f"{round(value * 1000)}m"


@dataclass(frozen=True)
class Reply:
    """The board's answer to one command.

    Attributes
    ----------
    command:
        The command it answers, as sent.
    ok:
        ``ack`` (True) or ``error`` (False).
    value:
        What follows the command after ``ack`` (``3292-03`` for ``volt get``), or the error's
        detail.
    """

    command: str
    ok: bool
    value: str = ""


def strip_prompt(line: str) -> str:
    """``line`` without the board's prompt and the spaces around."""
    return line.replace(PROMPT.strip(), "", 1).strip() if line.lstrip().startswith(
        PROMPT.strip()) else line.strip()


def parse_reply(line: str, command: str) -> Reply | None:
    """The reply to ``command`` that ``line`` is, or ``None`` (another line: an echo, a
    message). An ``error`` reply's detail comes on the next line (:func:`error_detail`)."""
    text = strip_prompt(line)
    for word, ok in (("ack", True), ("error", False)):
        head = f"{word} {command}"
        if text == head or text.startswith(head + " "):
            return Reply(command, ok, text[len(head):].strip())
    return None


def error_detail(line: str) -> str | None:
    """The detail an ``Error detail: ...`` line gives, else ``None``."""
    text = strip_prompt(line)
    return text[len(DETAIL):].strip() if text.startswith(DETAIL) else None


def ack_line(command: str, value: str = "") -> bytes:
    """The board's ``ack`` of ``command`` (with ``value``), one line."""
    return f"{PROMPT}ack {command}{' ' + value if value else ''}".encode("ascii") + EOL


def error_lines(command: str, detail: str) -> bytes:
    """The board's ``error`` reply to ``command`` and its detail line."""
    return (f"{PROMPT}error {command}".encode("ascii") + EOL
            + f"{DETAIL} {detail}".encode("ascii") + EOL)
