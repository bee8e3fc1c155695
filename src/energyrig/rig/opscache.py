"""The firmware's catalogue for ``rig ops``, kept between calls for a DUT the rig starts.

Asking a host build for its catalogue means validating the fixture (pydantic) and starting
the program: several times the time of the command itself. For a DUT started from a program
(``link = "pty"`` or ``"stdio"``) the ``hello`` and ``ops`` replies are kept in
``$ENERGYRIG_CACHE_DIR`` (default ``$XDG_CACHE_HOME/energyrig``, else ``~/.cache/energyrig``),
one JSON file per fixture file, and used while every file they came from — the fixture, the
DUT's program and the fixture's footprint — has the size and modification time it had. The
replies are kept in the DUT's reply layout and parsed when read, so an entry depends on its
own layout (:data:`FORMAT`), not on the rig's version. A DUT on a serial port is always
asked: a board can be reflashed behind the rig's back. A cache that cannot be read or written is ignored (it only
saves time).

Standard library only until the DUT must be asked.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from energyrig.bounded import read_json
from energyrig.errors import ConfigError
from energyrig.fixtures.paths import default_fixture_path
from energyrig.rig.dut import OpInfo

log = logging.getLogger(__name__)

#: Environment variable naming the rig's cache directory.
CACHE_ENV = "ENERGYRIG_CACHE_DIR"
#: The layout of an entry; an entry of another layout is not used.
FORMAT = 1


@dataclass(frozen=True)
class Catalogue:
    """The firmware's ``hello`` reply and catalogue, where they came from (``"dut"``: asked
    now; ``"cache"``: kept from an earlier call), and the fixture's footprint file."""

    hello: dict[str, Any]
    ops: list[OpInfo]
    footprint: Path | None
    source: Literal["dut", "cache"]


def cache_dir() -> Path:
    """``$ENERGYRIG_CACHE_DIR``, else ``$XDG_CACHE_HOME/energyrig``, else
    ``~/.cache/energyrig``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "energyrig"


def firmware_catalogue(fixture: Path | None = None, *, refresh: bool = False) -> Catalogue:
    """The catalogue of the DUT of ``fixture`` (the default fixture if ``None``): kept from
    an earlier call while it is still valid (see the module docstring) unless ``refresh``,
    else asked of the DUT (and kept if the DUT is a program).

    Raises
    ------
    ConfigError
        The fixture is wrong (only validated when the DUT is asked).
    DutError
        The DUT does not answer.
    """
    path = fixture if fixture is not None else default_fixture_path()
    entry = _entry_path(path.resolve())
    kept = None if refresh else _read(entry)
    if kept is not None:
        return kept
    from energyrig.fixtures.loader import load_fixture, resolve_command
    from energyrig.rig.dut import open_dut
    fx = load_fixture(path)
    with open_dut(fx) as dut:
        found = Catalogue(dut.hello(), dut.ops(), fx.footprint_path, "dut")
    if fx.dut.link != "serial":
        program = shutil.which(resolve_command(fx)[0])
        if program is not None:
            sources = [path.resolve(), Path(program).resolve(),
                       *([found.footprint.resolve()] if found.footprint else [])]
            _write(entry, found, sources)
    return found


def _entry_path(fixture: Path) -> Path:
    return cache_dir() / "ops" / f"{hashlib.sha256(os.fsencode(fixture)).hexdigest()[:32]}.json"


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def _read(entry: Path) -> Catalogue | None:
    """The kept catalogue, or ``None`` if there is none, it is unreadable (not a regular file,
    over its size limit: :mod:`energyrig.bounded`), or a file it came from has changed."""
    try:
        doc = read_json(entry, "catalogue cache")
        if doc["format"] != FORMAT or any(
                _stamp(Path(p)) != stamp for p, stamp in doc["sources"].items()):
            return None
        return Catalogue(doc["hello"], [OpInfo.from_reply(o) for o in doc["ops"]],
                         None if doc["footprint"] is None else Path(doc["footprint"]), "cache")
    except (OSError, ConfigError, ValueError, KeyError, TypeError) as exc:
        if not isinstance(exc, FileNotFoundError):
            log.debug("ops cache %s not used: %s", entry, exc)
        return None


def _write(entry: Path, found: Catalogue, sources: list[Path]) -> None:
    """Keep ``found`` with the stamps of ``sources`` (atomically; a failure is logged)."""
    ops = [{**asdict(o), "payload": None if o.payload is None else dict(
        zip(("min", "max", "multiple"), o.payload))} for o in found.ops]
    doc = {"format": FORMAT, "sources": {str(p): _stamp(p) for p in sources},
           "hello": found.hello, "ops": ops,
           "footprint": None if found.footprint is None else str(found.footprint)}
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, entry)
    except OSError as exc:
        log.debug("ops cache %s not written: %s", entry, exc)
