"""Flags are declared by the layer that raises them and collected in one registry
(energyrig.rig.flags.FLAGS): every flag the source raises is registered there with its note,
each is declared once, and a flag stays its name wherever it travels."""
from __future__ import annotations

import ast
import copy
import importlib
import pickle
import re
from dataclasses import asdict
from pathlib import Path

import pytest
from support.layers import nodes, parsed
from support.paths import ROOT

from energyrig.domain import Window, windows_frame
from energyrig.flags import GLITCH, TOO_FEW_SAMPLES, Flag, registry
from energyrig.rig.flags import FLAGS

PACKAGE = ROOT / "src" / "energyrig"
CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*")


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _flagged(node: ast.AST) -> bool:
    """Whether ``node`` names a collection of flags (``flags``, ``self.flags``, ...)."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name.endswith("flags")


def _raised(path: Path) -> list[ast.AST]:
    """The expressions of the source file ``path`` that make a window's or a point's flags:
    what is put into a ``*flags`` collection (assigned, appended, passed as ``flags=``) or
    returned by a function whose name says it gives flags."""
    found: list[ast.AST] = []
    for node in nodes(path):
        if isinstance(node, ast.Call):
            found += [k.value for k in node.keywords if k.arg == "flags"]
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "add") \
                    and _flagged(func.value):
                found += node.args
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(_flagged(t) for t in targets):
                found.append(node.value)
        elif isinstance(node, ast.FunctionDef) and "flags" in node.name:
            found += [r.value for r in ast.walk(node)
                      if isinstance(r, ast.Return) and r.value is not None]
    return found


def _declarations() -> list[tuple[str, str, str]]:
    """``(module, constant, flag name)`` of every ``NAME = Flag("name", ...)`` in src/."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in parsed(path).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and getattr(node.value.func, "id", "") == "Flag":
                name = node.value.args[0]
                assert isinstance(name, ast.Constant), f"{path}: a flag's name is a literal"
                out += [(_module(path), t.id, name.value) for t in node.targets
                        if isinstance(t, ast.Name)]
    return out


def _bare_strings(expr: ast.AST) -> list[str]:
    """The string literals ``expr`` puts among flags: itself, or an item of a tuple, list or
    set in it (not a key, a separator or a column name)."""
    items = [expr] + [i for n in ast.walk(expr) if isinstance(n, (ast.Tuple, ast.List, ast.Set))
                      for i in n.elts]
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def test_every_flag_raised_in_the_source_is_registered_with_its_note() -> None:
    raised: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = importlib.import_module(_module(path))
        for expr in _raised(path):
            for text in filter(None, _bare_strings(expr)):
                raised.setdefault(text, set()).add(f"{path.name} (a bare string)")
            for node in ast.walk(expr):
                if isinstance(node, ast.Name) and CONSTANT.fullmatch(node.id) \
                        and hasattr(module, node.id):
                    value = getattr(module, node.id)
                    values = value if isinstance(value, tuple) else (value,)
                    for flag in values:
                        if isinstance(flag, str):
                            raised.setdefault(flag, set()).add(path.name)
                            assert isinstance(flag, Flag), f"{path.name}: {node.id} is no Flag"
    # The source raises flags in every layer that declares them.
    assert {"too_few_samples", "stream_loss", "edge_error_over_bound", "no_truth",
            "uncalibrated", "ci_target_not_met", "trigger_drops"} <= set(raised)
    unregistered = {f: sorted(where) for f, where in raised.items() if f not in FLAGS}
    assert not unregistered, f"flags raised but not registered: {unregistered}"
    for name, flag in FLAGS.items():
        assert name == flag and flag.meaning and flag.action, name


def test_each_flag_is_declared_once_and_registered_as_declared() -> None:
    declared = _declarations()
    names = [name for _, _, name in declared]
    assert len(names) == len(set(names)), \
        f"declared twice: {sorted({n for n in names if names.count(n) > 1})}"
    assert set(names) == set(FLAGS)
    layers = set()
    for module, constant, name in declared:
        assert getattr(importlib.import_module(module), constant) is FLAGS[name]
        layers.add(module)
    # Declared by the layers that raise them, not by one module for all.
    assert {"energyrig.flags", "energyrig.instruments.sim.flags", "energyrig.rig.flags"} <= layers


def test_the_registry_refuses_a_flag_declared_twice() -> None:
    again = Flag("glitch", "a second meaning", "a second action")
    with pytest.raises(ValueError, match="'glitch' is declared twice"):
        registry((TOO_FEW_SAMPLES, GLITCH), (again,))
    with pytest.raises(ValueError, match="needs a name, a meaning and an action"):
        Flag("glitch", "", "an action")


def test_a_flag_is_its_name_wherever_it_travels() -> None:
    for flag in (copy.deepcopy(GLITCH), pickle.loads(pickle.dumps(GLITCH))):
        assert flag == "glitch" and type(flag) is Flag
        assert (flag.meaning, flag.action) == (GLITCH.meaning, GLITCH.action)
    window = Window(0.0, 1e-3, 100, 2e-6, 1e-3, flags=(TOO_FEW_SAMPLES, GLITCH))
    assert asdict(window)["flags"] == ("too_few_samples", "glitch")
    assert windows_frame([window], 1)["flag_list"].tolist() == [["glitch", "too_few_samples"]]
    assert all(type(f) is str for f in windows_frame([window], 1)["flag_list"].iloc[0])
