"""The ``[[compare]]`` tables of a plan: the pairs of configurations the report compares.

A plan names them (``rig/plan.py`` validates them with the rest of the plan when the file is
read)::

    [[compare]]
    a = "sha256"                                   # an op name
    b = { op = "aes-cbc-encrypt", key_bits = 128 } # or a table of factors

The run manifest keeps the validated plan; :func:`recorded_comparisons` reads the pairs back
from it for the report. The model lives here, below ``rig``, so that ``results`` never imports
``rig``.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError, field_validator

from energyrig.config import Strict
from energyrig.domain import check_name
from energyrig.errors import ConfigError

#: One side of a pair: an op name, or a table of factors (column → level).
Side = str | dict[str, str | int]
#: The factors a side may name, and whether each is a whole number (else a name).
FACTORS: dict[str, bool] = {"op": False, "backend": False, "curve": False, "key_bits": True,
                            "payload_bytes": True, "cpu_hz": True}


class Compare(Strict):
    """A pair the report compares, A against B (differences A − B, ratios A / B).

    Attributes
    ----------
    a, b:
        Each an op name (``"sha256"``) or a table of factors
        (``{"op": "aes-ecb-encrypt", "key_bits": 128}``).
    """

    a: Side
    b: Side

    @field_validator("a", "b", mode="before")
    @classmethod
    def _side(cls, v: Any) -> Any:
        """An op name, or a table of factors with an op, each level of its factor's type
        (the plan's factors are checked the same way; the catalogue at expansion)."""
        if isinstance(v, str):
            check_name("op", v)
        elif isinstance(v, Mapping):
            if "op" not in v:
                raise ValueError("a table of factors needs op (the op it selects)")
            for factor, level in v.items():
                whole = FACTORS.get(factor)
                if whole is None:
                    raise ValueError(f"{factor!r} is not a factor (factors: "
                                     f"{', '.join(FACTORS)})")
                if not whole:
                    check_name(factor, level)
                elif isinstance(level, bool) or not isinstance(level, int) or level < 1:
                    raise ValueError(f"{factor} {level!r} is not a positive integer")
        return v

    def selectors(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """A and B as row selectors of the points table (an op name is ``{"op": name}``)."""
        return _selector(self.a), _selector(self.b)


def _selector(side: Side) -> dict[str, Any]:
    return {"op": side} if isinstance(side, str) else dict(side)


def recorded_comparisons(plan: Mapping[str, Any], source: Path) -> tuple[Compare, ...]:
    """The pairs a run's plan record (the manifest's ``plan``) asks to compare.

    Parameters
    ----------
    plan:
        The plan as the manifest records it; no ``compare`` entry means no pairs.
    source:
        The manifest file, named in errors.

    Raises
    ------
    ConfigError
        An entry that is not a pair, naming ``source`` and the field (``plan.compare[0]``).
    """
    pairs = []
    for i, entry in enumerate(plan.get("compare") or ()):
        try:
            pairs.append(Compare.model_validate(entry))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(part) for part in err["loc"])
            raise ConfigError(source, f"plan.compare[{i}]",
                              "needs an a and a b (an op name or a table of factors); "
                              f"{where or 'entry'}: {err['msg']}") from exc
    return tuple(pairs)
