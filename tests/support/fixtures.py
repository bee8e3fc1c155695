"""Fixture files built in code: fixtures/*.toml with dotted-key overrides, written as TOML
(tests/conftest.py's ``sim_fixture`` writes them into a test's tmp_path)."""
from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    """``value`` (a string, number, boolean, list or table) as a TOML value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}"
                                for k, v in value.items()) + " }"
    return "[" + ", ".join(_toml_value(v) for v in value) + "]"


def _toml(table: Mapping[str, Any], prefix: str = "") -> str:
    """``table`` as a TOML document: its values, then its subtables under their headers."""
    lines = [f"{_toml_key(k)} = {_toml_value(v)}\n" for k, v in table.items()
             if not isinstance(v, Mapping)]
    for key, sub in table.items():
        if isinstance(sub, Mapping):
            name = f"{prefix}{_toml_key(key)}"
            lines.append(f"\n[{name}]\n{_toml(sub, name + '.')}")
    return "".join(lines)


def fixture_text(base: str = "sim.toml", **overrides: Any) -> str:
    """``fixtures/<base>`` as TOML with ``overrides``: dotted keys (``"sim.power.gain_error":
    0.05``) set to their value (a new key or table is added), or removed when the value is
    None. The DUT's command is made absolute first, so the file runs the host firmware
    wherever it is written."""
    data = tomllib.loads((FIXTURES / base).read_text(encoding="utf-8"))
    command = data.get("dut", {}).get("command")
    if command and not Path(command[0]).is_absolute():
        command[0] = str((FIXTURES / command[0]).resolve())
    for dotted, value in overrides.items():
        *tables, key = dotted.split(".")
        table = data
        for name in tables:
            table = table.setdefault(name, {})
        if value is None:
            del table[key]
        else:
            table[key] = value
    return _toml(data)


def write_fixture(path: Path, base: str = "sim.toml", **overrides: Any) -> Path:
    """:func:`fixture_text` written at ``path`` (its folder made). Returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(fixture_text(base, **overrides), encoding="utf-8")
    return path
