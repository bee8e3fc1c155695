"""The op families: the firmware declares them, the host keeps one data row of each.

The firmware declares its op families once (``firmware/core/er_family.c``'s
``er_families``; ``hello`` lists them as ``families``, every op of ``ops`` names one). The
host's data row of each is in ``opfamilies.toml`` beside this module, in the firmware's
order (a family's trigger-wire id is its place plus one): the report's references and the
first words of its op names (:mod:`energyrig.results.report`), and the simulated boards'
currents while its ops run (:mod:`energyrig.instruments.sim.power`). A new family is its
ops in the firmware and one row there (docs/ARCHITECTURE.md, "A new op family");
:func:`firmware_mismatch` says where the firmware and the rows disagree.

Standard library only.
"""
from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The data file: one ``[[family]]`` row per op family.
DATA_FILE = Path(__file__).with_name("opfamilies.toml")


@dataclass(frozen=True, slots=True)
class Reference:
    """What makes an op configuration its family's reference: every condition given holds.

    Attributes
    ----------
    op:
        The op's name, hyphens ignored (``sha256``).
    op_prefix:
        The start of the op's name (``aes``).
    key_bits:
        The configuration's key size, bits.
    curve:
        The configuration's curve (``p256``).
    """

    op: str | None = None
    op_prefix: str | None = None
    key_bits: int | None = None
    curve: str | None = None

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether the configuration ``row`` (``op``, ``key_bits``, ``curve``) is this
        reference; a missing value matches no condition on it."""
        name = str(row["op"])
        checks = ((self.op, lambda: name.replace("-", "") == str(self.op).replace("-", "")),
                  (self.op_prefix, lambda: name.startswith(str(self.op_prefix))),
                  (self.key_bits, lambda: row["key_bits"] == self.key_bits),
                  (self.curve, lambda: row["curve"] == self.curve))
        return all(bool(check()) for given, check in checks if given is not None)


@dataclass(frozen=True, slots=True)
class OpFamily:
    """The host's data row of one op family.

    Attributes
    ----------
    name:
        The name its ops declare (``er_op_s.family``, the ``family`` of ``rig ops``).
    prefixes:
        First words of op names of this family (a run whose store has no family column).
    verb_panels:
        Whether the report splits its energy-time figure by what an op does.
    references:
        The report's references of the family, in order of preference.
    currents:
        Per simulated board (a power-model profile): the fields of
        :class:`energyrig.instruments.sim.power.FamilyCurrent` (A, s).
    """

    name: str
    prefixes: tuple[str, ...]
    verb_panels: bool
    references: tuple[Reference, ...]
    currents: Mapping[str, Mapping[str, float]]


def _row(data: dict[str, Any]) -> OpFamily:
    return OpFamily(name=data["name"], prefixes=tuple(data["prefixes"]),
                    verb_panels=data["verb_panels"],
                    references=tuple(Reference(**ref) for ref in data["references"]),
                    currents=data.get("current", {}))


#: Every op family's row, in the firmware's order.
OP_FAMILIES: tuple[OpFamily, ...] = tuple(
    _row(row) for row in tomllib.loads(DATA_FILE.read_text(encoding="utf-8"))["family"])
#: The families' names, in the firmware's order: wire id ``i`` is ``NAMES[i - 1]``.
NAMES: tuple[str, ...] = tuple(f.name for f in OP_FAMILIES)
#: Each row by its family's name.
BY_NAME: dict[str, OpFamily] = {f.name: f for f in OP_FAMILIES}


def firmware_mismatch(families: Sequence[str]) -> str:
    """Where the firmware's op families (``hello``'s ``families``, in its order) and the
    rows of :data:`DATA_FILE` disagree, ``""`` when they agree."""
    listed = tuple(families)
    problems = [f"no data row for {', '.join(sorted(set(listed) - set(NAMES)))}"
                if set(listed) - set(NAMES) else "",
                f"a data row for {', '.join(sorted(set(NAMES) - set(listed)))} that the "
                "firmware does not declare" if set(NAMES) - set(listed) else ""]
    if not any(problems) and listed != NAMES:
        problems.append(f"the firmware's order is {', '.join(listed)}, the rows' "
                        f"{', '.join(NAMES)}")
    return "; ".join(p for p in problems if p)
