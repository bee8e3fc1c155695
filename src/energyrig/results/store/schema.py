"""The typed columns of a run's tables (:mod:`energyrig.results.store`), the schema version
the manifest records, and the reader of the previous version (docs/results.md).

Version 2 (this one): a window's and a point's flags are ``flag_list``, a list of names
(``list<string>``, a Python list per row once loaded); a window's ``corrections`` and
``uncertainty`` and a point's ``uncertainty_budget`` are structs with one named field per
correction or budget component. Version 1 (no ``schema_version`` in the manifest) held
them as text: ``flags`` joined by ``,``, ``corrections`` and ``uncertainty`` as
``name=value`` pairs joined by ``,``, ``uncertainty_budget`` as JSON; :func:`upgrade`
turns tables read as version 1 into version 2 (what :func:`~.read.load` gives).

Every name is a field of the struct, never a key only a string knows: a column of a new
name is a new schema version.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

from energyrig.domain import flag_list
from energyrig.energy.budget import SYSTEMATIC

#: Integer factors are absent for ops that do not take them: integers with <NA>.
NULLABLE = {pa.int64(): pd.Int64Dtype()}
#: The schema version the writer writes (the manifest's ``schema_version``) and the newest
#: the reader reads.
SCHEMA_VERSION = 2
#: The version of a run whose manifest records none (written before typed columns).
V1 = 1

#: A window's and a point's flags (sorted, unique names; empty when clean).
FLAG_LIST = "flag_list"
FLAG_LIST_TYPE = pa.list_(pa.string())

#: What the correction stage took out of a window, SI units (null: not applied): the
#: current offset, A, the gain (ratio), the trigger skew, s, the window overhead's time, s,
#: and energy, J, and per current range (index = range) the offsets and gains of an
#: instrument calibrated per range.
CORRECTIONS = ("offset_a", "gain", "skew_s", "overhead_s", "overhead_j")
RANGED_CORRECTIONS = ("offset_a", "gain")
CORRECTIONS_TYPE = pa.struct([*(pa.field(n, pa.float64()) for n in CORRECTIONS),
                              *(pa.field(f"range_{n}", pa.list_(pa.float64()))
                                for n in RANGED_CORRECTIONS)])

#: The components of a window's net energy budget (:func:`energyrig.energy.budget.window_budget`)
#: and of a point's per op (:func:`~energyrig.energy.budget.energy_budget`), as named there.
WINDOW_COMPONENTS = ("edge quantisation", "baseline noise", "sample noise", *SYSTEMATIC)
POINT_COMPONENTS = ("repeatability", *SYSTEMATIC)


def field_name(component: str) -> str:
    """The struct field of a budget component: ``ADC resolution`` → ``adc_resolution``."""
    return component.lower().replace(" ", "_")


#: A window's budget: each component's standard uncertainty, J (null: unknown).
UNCERTAINTY_TYPE = pa.struct([pa.field(field_name(c), pa.float64())
                              for c in WINDOW_COMPONENTS])
#: One component of a point's budget: its standard uncertainty per op, J (null: unknown),
#: its GUM type (``A`` or ``B``) and where it comes from.
COMPONENT_TYPE = pa.struct([pa.field("u_j", pa.float64()), pa.field("type", pa.string()),
                            pa.field("source", pa.string())])
#: A point's net energy budget per op, one field per component.
BUDGET_TYPE = pa.struct([pa.field(field_name(c), COMPONENT_TYPE) for c in POINT_COMPONENTS])


def _known(what: str, names: Iterable[str], allowed: Iterable[str]) -> None:
    if unknown := sorted(set(names) - set(allowed)):
        raise ValueError(f"{what} {unknown} has no field in the results schema "
                         f"(schema.py): add it, as a new schema version")


def corrections_struct(applied: Iterable[tuple[str, float]] | Mapping[str, float] | None
                       ) -> dict[str, Any]:
    """A window's corrections (``(name, value)`` as :class:`~energyrig.domain.Window` holds
    them; ``offset_a[2]``: range 2's offset) as the row of :data:`CORRECTIONS_TYPE`."""
    items = dict(applied or {})
    row: dict[str, Any] = {n: items.pop(n, None) for n in CORRECTIONS}
    for name in RANGED_CORRECTIONS:
        ranged = {int(k[len(name) + 1:-1]): items.pop(k) for k in list(items)
                  if k.startswith(f"{name}[") and k.endswith("]")}
        row[f"range_{name}"] = ([ranged.get(r, math.nan) for r in range(1 + max(ranged))]
                                if ranged else None)
    _known("the correction", items, ())
    return row


def uncertainty_struct(budget: Iterable[tuple[str, float]] | Mapping[str, float] | None
                       ) -> dict[str, float | None]:
    """A window's budget (``(component, u in J)``) as the row of :data:`UNCERTAINTY_TYPE`
    (an empty budget: every component null)."""
    given = dict(budget or {})
    _known("the window budget component", given, WINDOW_COMPONENTS)
    items = {field_name(k): v for k, v in given.items()}
    return {n: _finite(items.get(n)) for n in UNCERTAINTY_TYPE.names}


def budget_struct(components: Sequence[Mapping[str, Any]] | None) -> dict[str, Any] | None:
    """A point's budget as :meth:`energyrig.rig.pipeline.PointResult.uncertainty` gives it
    (``component``, ``type``, ``u_j``, ``source`` each) as the row of :data:`BUDGET_TYPE`;
    None without one."""
    if components is None:
        return None
    _known("the point budget component", (c["component"] for c in components),
           POINT_COMPONENTS)
    items = {field_name(c["component"]): c for c in components}
    return {n: ({"u_j": _finite(items[n].get("u_j")), "type": items[n].get("type"),
                 "source": items[n].get("source")} if n in items else None)
            for n in BUDGET_TYPE.names}


def _finite(value: Any) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


#: The typed columns of each version 2 table and the text column of version 1 they replace.
_RENAMED = {FLAG_LIST: "flags"}
NESTED = {FLAG_LIST: FLAG_LIST_TYPE, "corrections": CORRECTIONS_TYPE,
          "uncertainty": UNCERTAINTY_TYPE, "uncertainty_budget": BUDGET_TYPE}


def v1_schema(schema: pa.Schema) -> pa.Schema:
    """The version 1 schema of a version 2 table: its typed columns as text, ``flags``
    for ``flag_list``."""
    return pa.schema([pa.field(_RENAMED.get(f.name, f.name), pa.string())
                      if f.name in NESTED else f for f in schema])


def upgrade(frame: pd.DataFrame) -> pd.DataFrame:
    """A table read as version 1 (:func:`v1_schema`) in the shape of version 2: its text
    columns parsed into the typed ones, by the rules the version 1 writer joined them by."""
    out = frame.rename(columns={"flags": FLAG_LIST})
    if FLAG_LIST in out:
        out[FLAG_LIST] = [flag_list(f.split(",") if isinstance(f, str) else ())
                          for f in out[FLAG_LIST]]
    if "corrections" in out:
        out["corrections"] = [corrections_struct(_pairs(c)) for c in out["corrections"]]
    if "uncertainty" in out:
        out["uncertainty"] = [uncertainty_struct(_pairs(c)) for c in out["uncertainty"]]
    if "uncertainty_budget" in out:
        out["uncertainty_budget"] = [budget_struct(json.loads(b)) if isinstance(b, str) and b
                                     else None
                                     for b in out["uncertainty_budget"]]
    return out


def _pairs(text: str | None) -> list[tuple[str, float]]:
    """``name=value,...`` of a version 1 column as pairs."""
    pairs = [item.rpartition("=") for item in (text if isinstance(text, str) else "").split(",")
             if item]
    return [(name, float(value)) for name, _, value in pairs]


def python_values(table: pa.Table) -> pd.DataFrame:
    """``table`` as pandas with its nested columns as Python lists and dicts (pyarrow
    gives numpy arrays for lists) and integers nullable (``Int64``: factors an op does not
    take are <NA>)."""
    frame = table.to_pandas(types_mapper=NULLABLE.get)
    for name in NESTED:
        if name in frame:
            frame[name] = pd.Series(table.column(name).to_pylist(), index=frame.index,
                                    dtype=object)
    if FLAG_LIST in frame:
        frame[FLAG_LIST] = [f if f is not None else [] for f in frame[FLAG_LIST]]
    return frame


def flat(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for a CSV file (spreadsheets have no lists): ``flag_list`` joined by ``,``
    and each struct column split into one column per field, ``<column>.<field>``
    (``corrections.gain``, ``uncertainty_budget.repeatability.u_j``)."""
    out = frame.copy()
    if FLAG_LIST in out:
        out[FLAG_LIST] = [",".join(f) if isinstance(f, list) else "" for f in out[FLAG_LIST]]
    for name in [c for c in out.columns if c in NESTED and c != FLAG_LIST]:
        expanded = pd.json_normalize([v if isinstance(v, dict) else {} for v in out[name]],
                                     sep=".")
        expanded.index = out.index
        at = out.columns.get_loc(name)
        out = pd.concat([out.iloc[:, :at], expanded.add_prefix(f"{name}."),
                         out.iloc[:, at + 1:]], axis=1)
    return out
