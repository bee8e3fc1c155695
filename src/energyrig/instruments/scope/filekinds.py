"""The capture files of the scope family (``Family.file_kinds``): content tests, no numpy.

A scope's CSV export (:mod:`.csvexport`) and its binary waveform files (:mod:`.wavefile`);
the layouts and their sources are in docs/formats.md.
"""
from __future__ import annotations

from energyrig.instruments.family import FileKind
from energyrig.instruments.scope.csvexport import is_scope_csv


def is_waveform_bin(head: bytes) -> bool:
    """A Keysight/Agilent (``AG``) or Rigol (``RG``) ``.bin``: the cookie and a two-digit
    version (an unknown version passes: the reader names it)."""
    return head[:2] in (b"AG", b"RG") and head[2:4].isdigit() and len(head) >= 12


def is_isf(head: bytes) -> bool:
    """A Tektronix ``.isf``: an ASCII preamble with the byte count field and ``CURV`` before
    the ``#`` of the curve block."""
    preamble = head.split(b"#", 1)[0].upper()
    return b"#" in head and b"BYT_N" in preamble and b"CURV" in preamble


def is_tek_wfm(head: bytes) -> bool:
    """A Tektronix ``.wfm``: the byte-order mark ``0x0F0F`` or ``0xF0F0``, then ``:WFM#`` (any
    version: the reader names one it does not read)."""
    return head[:2] in (b"\x0f\x0f", b"\xf0\xf0") and head[2:7] == b":WFM#"


#: Rigol ``.wfm``: the first four bytes -> the scopes that write that layout (RigolWFM 1.6.0,
#: ``wfm.py`` ``_detect_model_from_header``); the reader tells the models sharing a magic
#: apart (the serial, the file's size).
RIGOL_WFM_MAGICS = {b"\xa5\xa5\x00\x00": "DS1000E/D", b"\xa5\xa5\x38\x00": "DS2000/DS4000/DS6000",
                    b"\x01\xff\xff\xff": "DS1000Z", b"\xa5\xa5\xa4\x01": "DS1000B",
                    b"\xa1\xa5\x00\x00": "DS1000C"}


def is_rigol_wfm(head: bytes) -> bool:
    """A Rigol ``.wfm``: one of the magics of :data:`RIGOL_WFM_MAGICS`."""
    return head[:4] in RIGOL_WFM_MAGICS


FILE_KINDS = (
    FileKind("scope CSV export", (".csv",), is_scope_csv,
             "energyrig.instruments.scope.csvexport:open_scope_csv"),
    FileKind("Keysight/Rigol waveform", (".bin",), is_waveform_bin,
             "energyrig.instruments.scope.wavefile:open_bin"),
    FileKind("Tektronix ISF waveform", (".isf",), is_isf,
             "energyrig.instruments.scope.wavefile:open_isf"),
    FileKind("Tektronix WFM waveform", (".wfm",), is_tek_wfm,
             "energyrig.instruments.scope.wavefile:open_tek_wfm"),
    FileKind("Rigol WFM waveform", (".wfm",), is_rigol_wfm,
             "energyrig.instruments.scope.wavefile:open_rigol_wfm"),
)
