"""The methods paragraph of a run: how its numbers were made, in words a user can paste.

:func:`methods_paragraph` writes, from the run's manifest alone, the instrument (family,
model, serial), the calibration record (id, its age when the run started, when it expires),
the firmware build and its crypto configuration (``hello``'s conditions), the plan's seed
and the software's version; :func:`largest_components` names, per measured point, the
largest component of its uncertainty budget. :func:`methods_markdown` is both, as
``report/methods.md``; :func:`~energyrig.results.report.page.methods_html` the report's
section. A fact the manifest does
not hold reads :data:`NOT_RECORDED`.
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from energyrig.domain import KEY_FACTORS
from energyrig.results.report.tables import by_factor, config_label
from energyrig.results.store.read import Run
from energyrig.results.store.schema import POINT_COMPONENTS, field_name
from energyrig.units import format_duration, format_si

#: What the paragraph says of a fact the manifest does not hold.
NOT_RECORDED = "not recorded"
#: How the calibration store stamps a record's id (its first word, UTC).
RECORD_TIME = "%Y%m%dT%H%M%SZ"


def _utc(text: Any) -> datetime | None:
    """An ISO 8601 time of the manifest as an aware datetime; None if absent or malformed."""
    try:
        t = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _when(t: datetime) -> str:
    return f"{t.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC"


def record_time(record_id: str) -> datetime | None:
    """When a calibration record was made, from its id (``20261126T143801Z-ppk2-...``);
    None for an id of another form."""
    try:
        return datetime.strptime(record_id.split("-", 1)[0], RECORD_TIME).replace(
            tzinfo=timezone.utc)
    except ValueError:
        return None


def _age(seconds: float) -> str:
    """An age, s: in days from one day on (``3.0 days``), else ``2 h 05 min``."""
    return f"{seconds / 86400:.1f} days" if seconds >= 86400 else format_duration(seconds)


def _instrument(m: Mapping[str, Any]) -> str:
    cal_inst = (m.get("calibration") or {}).get("instrument") or {}
    fix_inst = (m.get("fixture") or {}).get("instrument") or {}
    family = cal_inst.get("kind") or fix_inst.get("kind") or NOT_RECORDED
    text = (f"a {family} power instrument (model {cal_inst.get('name') or NOT_RECORDED}, "
            f"serial {cal_inst.get('serial') or NOT_RECORDED})")
    if isinstance(fix_inst.get("supply_v"), (int, float)) and fix_inst["supply_v"] > 0:
        text += f" supplying the board at {format_si(fix_inst['supply_v'], 'V')}"
    return text


def _calibration(m: Mapping[str, Any]) -> str:
    cal = m.get("calibration") or {}
    if not cal.get("id"):
        return "No calibration record was applied (calibration: not recorded)."
    if cal.get("complete") is False:
        return (f"The readings were not fully calibrated ({cal.get('problem') or NOT_RECORDED}; "
                f"record {cal['id']}).")
    made = record_time(str(cal["id"]))
    started = _utc(m.get("started_at"))
    age = (f"{_age((started - made).total_seconds())} old when the run started"
           if made and started else f"age at run time {NOT_RECORDED}")
    expiries = sorted(((t, name) for name, v in (cal.get("values") or {}).items()
                       if isinstance(v, Mapping) and (t := _utc(v.get("expires_utc")))),
                      key=lambda e: e[0])
    expiry = (f"its first quantity to expire, {expiries[0][1]}, expires {_when(expiries[0][0])}"
              if expiries else f"expiry {NOT_RECORDED}")
    expired = cal.get("expired") or []
    late = f"; expired at run time: {', '.join(map(str, expired))}" if expired else ""
    return (f"The readings were corrected with calibration record {cal['id']} "
            f"({age}; {expiry}{late}).")


def _firmware(m: Mapping[str, Any]) -> str:
    fw = m.get("firmware") or {}
    boards = fw.get("boards") or ({fw.get("board"): fw} if fw else {})
    if not boards:
        return f"The firmware's build and crypto configuration are {NOT_RECORDED}."
    parts = []
    for board, hello in boards.items():
        conditions = hello.get("conditions") or {}
        config = (", ".join(f"{k}={v}" for k, v in sorted(conditions.items())) or NOT_RECORDED)
        clock = (format_si(hello["cpu_hz"], "Hz") if isinstance(hello.get("cpu_hz"), (int, float))
                 else NOT_RECORDED)
        parts.append(
            f"board {board or NOT_RECORDED} ran energyrig firmware "
            f"{hello.get('firmware') or NOT_RECORDED} (build {hello.get('build') or NOT_RECORDED}, "
            f"{hello.get('toolchain') or 'toolchain ' + NOT_RECORDED}, CPU clock {clock}) with "
            f"{hello.get('crypto') or 'crypto library ' + NOT_RECORDED} configured as {config}")
    return "The " + "; the ".join(parts) + "."


def _software(m: Mapping[str, Any]) -> str:
    plan = m.get("plan") or {}
    sw = m.get("software") or {}
    seed = m.get("seed", plan.get("seed"))
    return (f"The plan {plan.get('name') or NOT_RECORDED} was measured in an order randomised "
            f"with seed {NOT_RECORDED if seed is None else seed}, by energyrig "
            f"{sw.get('energyrig') or NOT_RECORDED} (git revision "
            f"{sw.get('git_revision') or NOT_RECORDED}, "
            f"Python {sw.get('python') or NOT_RECORDED}).")


def _budget(value: Any) -> list[Mapping[str, Any]]:
    """A point's uncertainty budget (the store's struct: a field per component, each
    ``{u_j, type, source}``, None where the point has no such component) as a list of
    components, each with its name under ``component`` (:data:`POINT_COMPONENTS`); empty
    when the point has none."""
    if not isinstance(value, Mapping):
        return []
    return [{"component": name, **value[field_name(name)]} for name in POINT_COMPONENTS
            if isinstance(value.get(field_name(name)), Mapping)]


def largest_components(points: pd.DataFrame) -> pd.DataFrame:
    """The largest component of each measured point's uncertainty budget.

    Columns: the point's factors (:data:`energyrig.domain.KEY_FACTORS`), ``point``
    (its label), ``component``, ``u_j`` (its standard uncertainty, J), ``share`` (its part of
    the combined variance, 0…1) and ``u_expanded_j`` (the point's U, k = 2, J); sorted by
    factor. Points without a budget are left out.
    """
    ok = points[points["status"] == "ok"] if "status" in points else points
    rows = []
    for _, p in by_factor(ok).iterrows():
        budget = [c for c in _budget(p.get("uncertainty_budget"))
                  if pd.notna(c.get("u_j"))]
        if not budget:
            continue
        top = max(budget, key=lambda c: float(c["u_j"]))
        total = sum(float(c["u_j"]) ** 2 for c in budget)
        label = config_label(p)
        if pd.notna(p.get("payload_bytes")):
            label += f", {int(p['payload_bytes']):,} B"
        if pd.notna(p.get("rep")) and len(ok) > 1:
            label += f" #{int(p['rep'])}"
        rows.append({**{f: p.get(f) for f in KEY_FACTORS}, "point": label,
                     "component": str(top["component"]), "u_j": float(top["u_j"]),
                     "share": float(top["u_j"]) ** 2 / total if total > 0 else float("nan"),
                     "u_expanded_j": p.get("net_energy_per_op_u_j")})
    return pd.DataFrame(rows, columns=[*KEY_FACTORS, "point", "component", "u_j", "share",
                                       "u_expanded_j"])


def _largest_text(largest: pd.DataFrame) -> str:
    if largest.empty:
        return ("The uncertainty budget of the points is "
                f"{NOT_RECORDED} (a run written before budgets, or no point measured).")
    counts = largest["component"].value_counts()
    listed = ", ".join(f"{comp} for {n} point{'s' if n != 1 else ''}"
                       for comp, n in counts.items())
    return ("Each op's net energy is the trigger window's integral of v·i, less the idle "
            "baseline, divided by the batch size; its expanded uncertainty (k = 2) follows "
            f"the GUM, and the largest component of its budget was {listed}.")


def methods_paragraph(run: Run) -> str:
    """How the run's numbers were made, as one paragraph of plain text (see the module)."""
    m = run.manifest
    return " ".join([
        f"Energy was measured with {_instrument(m)}.", _calibration(m), _firmware(m),
        _software(m), _largest_text(largest_components(run.points))])


def methods_markdown(run: Run, heading: str = "#") -> str:
    """The methods paragraph and, per measured point, its budget's largest component, as
    Markdown (``report/methods.md``); ``heading``: the level of its title (``#``, ``##``)."""
    largest = largest_components(run.points)
    lines = [f"{heading} Methods: {(run.manifest.get('plan') or {}).get('name') or run.name}",
             "", methods_paragraph(run), ""]
    if not largest.empty:
        lines += ["| point | U (k=2) | largest component | its u | share of variance |",
                  "|---|---|---|---|---|"]
        lines += [f"| {r.point} | {format_si(r.u_expanded_j, 'J')} | {r.component} | "
                  f"{format_si(r.u_j, 'J')} | {r.share * 100:.0f} % |"
                  for r in largest.itertuples()]
        lines.append("")
    return "\n".join(lines)
