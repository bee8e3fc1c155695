"""Configuration helpers shared by every TOML file the rig reads (fixtures, plans).

- :class:`Strict`: the pydantic base of every configuration model (unknown keys are errors,
  instances are frozen);
- :func:`between`: a range check whose message states the unit;
- :func:`read_toml` and :func:`validate`: read a file and validate it into a model, every
  problem a :class:`~energyrig.errors.ConfigError` naming the file and the field as the
  operator reads the TOML (``fixtures/x.toml: instrument.supply_v: must be between 0.8 and
  5.0 V``, ``plans/p.toml: factors[0].payload_bytes[1]: ...``).

This module imports only pydantic, the standard library and :mod:`energyrig.bounded`, so the
CLI stays fast.
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from energyrig.bounded import read_text
from energyrig.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    """Unknown keys are errors (a misspelt key must not be silently ignored); NaN and
    infinity are errors (``offset_a = nan`` would turn every energy into NaN or worse, with
    nothing flagged); frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def between(value: float, low: float, high: float, unit: str) -> float:
    """``value`` if ``low <= value <= high``, else a :class:`ValueError` naming the range.

    Parameters
    ----------
    value, low, high:
        The value and its inclusive bounds, in ``unit``.
    unit:
        The unit written in the message (``"V"``, ``"s"``).
    """
    if not low <= value <= high:
        raise ValueError(f"must be between {low} and {high} {unit}")
    return value


def _problem(err: Any) -> str:
    """pydantic's message, phrased for an operator."""
    kind, msg = err["type"], err["msg"]
    if kind == "extra_forbidden":
        return "unknown field (misspelt?)"
    if kind == "missing":
        return "required field is missing"
    if kind == "union_tag_invalid":
        known = sorted(tag.strip("'") for tag in err["ctx"]["expected_tags"].split(", "))
        return f"unknown {_tag_field(err)} {err['ctx']['tag']!r} (known: {', '.join(known)})"
    if kind == "union_tag_not_found":
        return f"needs {_tag_field(err)}"
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            return msg[len(prefix):]
    return msg[0].lower() + msg[1:] if msg else msg


def _tag_field(err: Any) -> str:
    """The field that picks the member of a discriminated union (``kind``)."""
    return str(err["ctx"]["discriminator"]).strip("'")


def _without_tags(model: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` without the tags pydantic inserts after a discriminated union's field
    (``instrument.ppk2.supply_v`` -> ``instrument.supply_v``): the TOML has no such level."""
    out: list[int | str] = []
    current: Any = model
    parts = iter(loc)
    for part in parts:
        out.append(part)
        is_model = isinstance(current, type) and issubclass(current, BaseModel)
        info = current.model_fields.get(part) if is_model and isinstance(part, str) else None
        if info is None:
            current = None
            continue
        current = info.annotation
        if isinstance(info.discriminator, str):
            tag = next(parts, None)
            current = next((m for m in get_args(current)
                            if m.model_fields[info.discriminator].default == tag), None)
    return tuple(out)


def _field_path(prefix: str, loc: tuple[int | str, ...]) -> str:
    """A pydantic location as the operator reads the TOML: ``factors[0].payload_bytes[1]``."""
    field = prefix
    for part in loc:
        if isinstance(part, int):
            field += f"[{part}]"
        else:
            field += f".{part}" if field else str(part)
    return field


def validate(model: type[M], data: Any, path: Path, prefix: str = "") -> M:
    """``model.model_validate(data)`` with the first error as a :class:`ConfigError`.

    Parameters
    ----------
    model:
        The pydantic model.
    data:
        What was read (a TOML file's tables).
    path:
        The file ``data`` came from, named in the error.
    prefix:
        Written before the field's location (``"plan"`` for a plan given as a string).

    Raises
    ------
    ConfigError
        The first problem, naming the file and the field (``instrument.supply_v``,
        ``factors[0].payload_bytes[0]``; ``instrument.kind`` for an unknown kind, with the
        known ones).
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = _without_tags(model, tuple(err["loc"]))
        if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc += (_tag_field(err),)
        raise ConfigError(path, _field_path(prefix, loc), _problem(err)) from exc


def read_toml(file: Path, what: str) -> dict[str, Any]:
    """The tables of a TOML file plus ``path`` (the file), for a model with a ``path`` field.

    The file is read by :func:`energyrig.bounded.read_text`: a regular file of at most
    ``LIMITS[what]`` bytes.

    Raises
    ------
    ConfigError
        The file is missing, not a regular file, too large, unreadable, not TOML or nested
        deeper than the parser goes, or sets ``path`` itself; ``what`` ("fixture", "plan")
        names the kind of file in the message.
    """
    try:
        data = tomllib.loads(read_text(file, what))
    except FileNotFoundError as exc:
        raise ConfigError(file, "", f"no such {what} file") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, "", f"not valid TOML ({exc})") from exc
    except RecursionError:
        raise ConfigError(file, "", "nested too deeply for the TOML parser (a plan or "
                                    "fixture has a few levels)") from None
    if "path" in data:
        raise ConfigError(file, "path", "unknown field (misspelt?)")
    return {**data, "path": file}
