"""One exception hierarchy for the whole rig.

Every message is written for an operator: it names the file, field, channel or instrument
involved and, where one exists, what to do about it. The CLI prints ``str(exc)`` on one line
and exits with the error's ``exit_code``: 2 (bad input) for any :class:`EnergyrigError` but
:class:`DiskFullError` (75).
"""
from __future__ import annotations

from pathlib import Path


class EnergyrigError(Exception):
    """Base of every error the rig raises on purpose. Its text is one line: a message that
    quotes a library's multi-line one (configparser's, say) has its lines joined.
    ``rig`` exits with its :attr:`exit_code`: 2, bad input, unless a subclass says else."""

    exit_code = 2

    def __str__(self) -> str:
        return " ".join(super().__str__().split())


class CaptureError(EnergyrigError):
    """A capture file or stream is not what it claims to be."""

    def __init__(self, source: str | Path, problem: str) -> None:
        self.source = str(source)
        self.problem = problem
        super().__init__(f"{self.source}: {problem}")


class ChannelError(CaptureError):
    """A channel named by the user does not exist in the capture."""


class ConfigError(EnergyrigError):
    """A fixture, plan or calibration file is malformed; names the file and the field."""

    def __init__(self, path: str | Path, field: str, problem: str) -> None:
        self.path = str(path)
        self.field = field
        self.problem = problem
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {problem}")


class InstrumentError(EnergyrigError):
    """A power instrument did not answer, answered nonsense, or lost data."""


class DutError(EnergyrigError):
    """The device under test did not answer, or answered with an error."""


class RecordTooShort(InstrumentError):
    """A recorder's record ended before the trigger window did: the batch outlasted the time
    the record was planned for (a loaded host, an op whose time varies)."""


class NoTriggerWindow(InstrumentError):
    """The trigger never rose in an armed record: no sample caught the window (a window
    shorter than a sample: the empty window of ``run n=0`` on a fast board), or the trigger
    is not wired."""


class CalibrationError(EnergyrigError):
    """A calibration routine's measurement makes no sense (an open reference, a step that
    never comes, a gain far from 1); nothing is stored."""


class LabError(EnergyrigError):
    """The labgrid lab refused or failed a request: the coordinator is unreachable, a place
    is unknown, held by someone else or lacks a resource the rig needs (:mod:`energyrig.lab`)."""


class DiskFullError(EnergyrigError):
    """The disk (or the quota) filled up while a run was being written. Not bad input:
    nothing stored is lost and the run resumes once there is space, so ``rig`` exits with
    75 (``EX_TEMPFAIL`` of sysexits.h: try again later)."""

    exit_code = 75
