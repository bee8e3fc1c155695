"""The family record: everything the rig knows of one instrument family, in one place.

Each family folder (``ppk2/``, ``scope/``, ``sigrok/``) exports ``FAMILY = Family(...)`` from
its ``family.py``; :mod:`energyrig.instruments.registry` collects them. As libsigrok's
``struct sr_dev_driver`` does for its drivers, the record says what the family is called in a
fixture (``kind``), the pydantic model of its ``[instrument]`` table, how to open an
acquisition from a validated table, how to find attached instruments, which emulator plays it
on the simulated bench, and which capture files it reads.

This module imports no instrument code (no numpy, pyvisa or pyserial), so the registry and
the CLI stay cheap to import.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from energyrig.flags import Flag

if TYPE_CHECKING:
    from energyrig.capture import Capture
    from energyrig.config import Strict
    from energyrig.instruments.base import Acquisition
    from energyrig.instruments.fileopts import CaptureOptions


@dataclass(frozen=True, slots=True)
class Found:
    """One instrument a family's scan found.

    Attributes
    ----------
    kind:
        The family's fixture ``kind``.
    address:
        Where it is (serial port, VISA resource, sigrok ``--driver`` spec).
    description:
        What it says it is.
    fixture:
        The lines of a fixture's ``[instrument]`` table that select it.
    """

    kind: str
    address: str
    description: str
    fixture: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class FileKind:
    """One capture file format.

    Attributes
    ----------
    name:
        What the format is called in messages (``"sigrok session"``).
    extensions:
        File name extensions, lower case with the dot (``(".sr",)``).
    sniff:
        ``sniff(head)`` -> whether the first bytes of a file are this format (must import
        nothing heavy: it runs for every file opened).
    reader:
        ``"module:function"``, imported when a file of this kind is opened, called as
        ``function(path, options)`` -> :class:`~energyrig.capture.Capture`.
    """

    name: str
    extensions: tuple[str, ...]
    sniff: Callable[[bytes], bool]
    reader: str

    def open(self, path: Path, options: CaptureOptions) -> Capture:
        """Open ``path`` with this kind's reader."""
        module, _, func = self.reader.partition(":")
        opener: Callable[[Path, CaptureOptions], Capture] = getattr(
            importlib.import_module(module), func)
        return opener(path, options)


def _no_emulator_args(config: Any) -> list[str]:
    return []


#: Faults of an instrument's stream (lost samples, corrupt bytes, a cable pulled, a second
#: lost at once) and of its ranges (an offset and a gain error per range), each emulated by
#: some emulators only; offset, gain and skew are the power model's and every emulator
#: applies them.
STREAM_FAULTS = ("drop_rate", "corrupt_rate", "disconnect_after_s", "loss_at_s",
                 "range_offset_a", "range_gain_error")


@dataclass(frozen=True)
class Family:
    """One instrument family, as the rig sees it.

    Attributes
    ----------
    kind:
        The ``kind`` of a fixture's ``[instrument]`` table that selects the family.
    config_model:
        ``"module:Class"``, the pydantic model of that table (its ``kind`` field is
        ``Literal[kind]``): :attr:`config`, imported on first use, so the capture files'
        table (``rig analyze``) does not import pydantic.
    open:
        ``open(config, address)`` -> the (unstarted) acquisition; ``address`` overrides the
        table's (the emulator's pty or VISA resource on the simulated bench), ``None`` keeps
        it.
    scan:
        ``scan()`` -> the attached instruments of this family (``rig instruments``); raises
        :class:`~energyrig.errors.EnergyrigError`, :class:`OSError` or :class:`ImportError`
        when it cannot search.
    address_field:
        The field of ``config`` that says where the instrument is (a PPK2's ``port``, a
        scope's VISA ``resource``): what ``open``'s ``address`` overrides and what a lab
        place's instrument resource rewrites (:func:`energyrig.lab.place.fixture_for_place`).
    labgrid_resource:
        The labgrid resource class a lab place exports the instrument as
        (``NetworkSerialPort``, ``PyVISADevice``); ``None``: none, a place cannot serve it.
    emulator:
        The ``python -m`` module that emulates the family on the simulated bench (``None``:
        none does, and a ``[sim]`` fixture refuses the kind).
    emulator_args:
        ``emulator_args(config)`` -> the emulator's options beyond the shared command line.
    file_kinds:
        The capture files this family's software writes that ``rig analyze`` reads.
    emulator_faults:
        The stream faults of the power model (:data:`STREAM_FAULTS`) the emulator
        emulates; a ``[sim]`` fixture that sets another is refused, not silently ignored.
    program_fields:
        The fields of ``config`` that name a program the rig runs or a library it loads
        (sigrok's ``sigrok_cli``, a scope's ``visa_library``): set to anything but their
        default, they make the fixture code, which the trust rule then applies to
        (:func:`energyrig.fixtures.loader.check_trusted`, docs/security.md).
    flags:
        The window flags the family's driver raises (declared in its folder's ``flags.py``),
        which the registry of every layer's flags collects
        (:data:`energyrig.rig.flags.FLAGS`).
    """

    kind: str
    config_model: str
    open: Callable[[Any, str | None], Acquisition]
    scan: Callable[[], list[Found]]
    address_field: str
    labgrid_resource: str | None = None
    emulator: str | None = None
    emulator_args: Callable[[Any], list[str]] = _no_emulator_args
    file_kinds: tuple[FileKind, ...] = ()
    emulator_faults: frozenset[str] = frozenset()
    program_fields: tuple[str, ...] = ()
    flags: tuple[Flag, ...] = ()

    @cached_property
    def config(self) -> type[Strict]:
        """The pydantic model of the family's table (``config_model``, imported now); the
        fixture validates it once, the driver uses it as it is.

        Raises
        ------
        ValueError
            ``address_field`` or a ``program_fields`` entry is not a field of the model.
        """
        module, _, name = self.config_model.partition(":")
        model: type[Strict] = getattr(importlib.import_module(module), name)
        if self.address_field not in model.model_fields:
            raise ValueError(f"Family {self.kind}: address_field {self.address_field!r} is not "
                             f"a field of {model.__name__}")
        unknown = [f for f in self.program_fields if f not in model.model_fields]
        if unknown:
            raise ValueError(f"Family {self.kind}: program_fields {unknown} are not fields of "
                             f"{model.__name__}")
        return model
