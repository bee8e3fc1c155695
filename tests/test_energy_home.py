"""The energy of a window has one home (issue 21, item 2): the pipeline and every calibration
routine record their windows through one ``record_window`` and take a window's energy from
one finder (:mod:`energyrig.energy`); no calibration module integrates samples itself.

Read from the source (AST), so a routine that grows its own ``Σ v·i`` fails here."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from support.paths import ROOT

from energyrig.calibration.routines import marks, overhead
from energyrig.energy import record, windows
from energyrig.rig import pipeline

SRC = ROOT / "src" / "energyrig"
CALIBRATION = sorted((SRC / "calibration").rglob("*.py"))
PIPELINE = SRC / "rig" / "pipeline.py"

#: Calls that integrate (or accumulate) samples.
INTEGRATING = {"trapezoid", "trapz", "cumulative_trapezoid", "simpson", "sum", "cumsum",
               "fsum", "nansum", "dot", "einsum"}
CURRENT = re.compile(r"^(current|current_a|i|i_a|amps)$|_a$")
VOLTAGE = re.compile(r"^(voltage|voltage_v|v|volts)$|_v$")
POWER = re.compile(r"^(power|p|watts)$|_w$")


def _names(node: ast.AST) -> set[str]:
    """The variable and attribute names in ``node``."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, (ast.Name, ast.Attribute))}


def _called(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr \
        if isinstance(func, ast.Attribute) else ""


def _integrations(source: str) -> list[str]:
    """Where ``source`` integrates samples itself: a product of a current and a voltage (a
    power, v·i), a trapezoid, a sum over a power, or the window kernel reached past
    :mod:`energyrig.energy` (``line: what``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        where = str(getattr(node, "lineno", 0))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            left, right = _names(node.left), _names(node.right)
            if any(CURRENT.search(a) for a in left) and any(VOLTAGE.search(b) for b in right) \
                    or any(VOLTAGE.search(a) for a in left) and \
                    any(CURRENT.search(b) for b in right):
                found.append(f"{where}: v·i product")
        elif isinstance(node, ast.Call) and _called(node) in INTEGRATING:
            if {"trapezoid", "trapz", "cumulative_trapezoid", "simpson"} & {_called(node)} \
                    or any(POWER.search(n) for n in _names(node)):
                found.append(f"{where}: {_called(node)} over samples of power")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [f"{node.module}.{a.name}" for a in node.names]
            if any(m.endswith("_energy") or m.endswith(".Integrator") for m in modules):
                found.append(f"{where}: the window kernel imported")
        elif isinstance(node, ast.Attribute) and node.attr == "Integrator":
            found.append(f"{where}: the window kernel called")
    return found


def _calls(path: Path) -> set[str]:
    """The names of what ``path`` calls."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {_called(n) for n in ast.walk(tree) if isinstance(n, ast.Call)}


@pytest.mark.parametrize("path", CALIBRATION, ids=lambda p: str(p.relative_to(SRC)))
def test_no_calibration_module_integrates_samples_itself(path: Path) -> None:
    assert not _integrations(path.read_text(encoding="utf-8"))


def test_the_check_sees_an_integration() -> None:
    """The check above finds a routine's own ``Σ v·i`` (as ``_empty_window`` once had), and
    passes what the routines do with currents (a mean, a difference, V / R)."""
    assert sorted(_integrations(
        "power = current * voltage\n"
        "energy = power[3:9].sum() * period\n"
        "e = np.trapezoid(x, dx=period)\n"
        "from energyrig.energy import _energy\n"
        "k = windows._energy.Integrator(period)\n")) == [
        "1: v·i product", "2: sum over samples of power", "3: trapezoid over samples of power",
        "4: the window kernel imported", "5: the window kernel called"]
    assert not _integrations("mean = float(current.mean())\nx = supply_v / ohms\n"
                             "cum = np.cumsum(seg)\nstep = active - idle\n")


def test_the_pipeline_and_calibration_share_one_recorder_and_one_window_energy() -> None:
    assert pipeline.record_window is marks.record_window is record.record_window
    assert pipeline.find_windows is overhead.find_windows is windows.find_windows
    calibration_calls = set().union(*(_calls(p) for p in CALIBRATION))
    for calls in (_calls(PIPELINE), calibration_calls):
        assert {"record_window", "find_windows"} <= calls


@pytest.mark.parametrize("path", [PIPELINE, *CALIBRATION],
                         ids=lambda p: str(p.relative_to(SRC)))
def test_nobody_arms_and_collects_past_record_window(path: Path) -> None:
    assert not {"arm", "collect"} & _calls(path)
