"""Sweep plans: a TOML file of factors and levels, expanded into measurement points.

A plan (``plans/quick.toml`` is the annotated example)::

    name = "quick"
    seed = 20261121          # seed of the randomised order (drawn and recorded when absent)
    fixture = "../fixtures/sim.toml"   # bench used when `rig sweep` is given no --fixture;
                             # a list measures several boards, one after another
    repetitions = 1          # points per configuration (rep = 0, 1, ...)
    batch = "auto"           # ops per window, or "auto" (the bench picks it)
    cooldown_s = 0.0         # idle time between two points, s

    [adaptive]               # windows per point
    metric = "energy_per_op_j"
    ci_target = 0.01         # stop when the 95 % CI half-width is under 1 % of the mean
    min_windows = 3
    max_windows = 10

    [factors]                # one cross product; [[factors]] for a union of several
    op = ["aes-cbc-encrypt", "sha256"]
    key_bits = [128, 256]
    payload_bytes = [64, 1024]

    [[compare]]              # pairs the report compares (an op, or a table of factors)
    a = "sha256"
    b = { op = "aes-cbc-encrypt", key_bits = 128 }

Expansion (:func:`expand`) takes the firmware's catalogue (``ops``) and identity (``hello``):

- a factor an op does not take is not crossed with it (``sha256`` is measured once, not
  once per ``key_bits`` level); a factor an op needs and the plan leaves out takes every level
  the op allows (``key_bits``, ``curve``) or is a :class:`~energyrig.errors.ConfigError`
  (``payload_bytes``, which has no finite list of levels);
- a level the op cannot take (a key size it does not have, a payload above its maximum or
  not a multiple of its block, an op or backend missing from the catalogue) is *skipped* and
  listed with the reason, never an error;
- a CPU clock the board does not offer (``hello``'s ``cpu_hz_levels``; a board that cannot
  set its clock offers none but the one it runs at) is a
  :class:`~energyrig.errors.ConfigError` naming ``factors.cpu_hz``: the clock is a property of
  the board, not of an op, so no point of the plan could be measured at it;
- the points are shuffled with :class:`random.Random` seeded by the plan's seed, so drift
  over a night does not bias one factor.

Every malformed field is a :class:`~energyrig.errors.ConfigError` naming the file and field.
"""
from __future__ import annotations

import difflib
import logging
import math
import random
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from energyrig.config import Strict, read_toml, validate
from energyrig.errors import ConfigError
from energyrig.results.compare import Compare
from energyrig.domain import Point, check_name
from energyrig.rig.dut import PROTOCOL_RANGES, OpInfo

log = logging.getLogger(__name__)

#: The most points (configurations × repetitions), and the most combinations of levels
#: (measured or skipped), a plan may expand to on one board: a day of points at one a second,
#: well past a night's sweep (docs/sweep.md).
MAX_POINTS = 100_000

Metric = Literal["energy_per_op_j", "net_energy_per_op_j", "time_per_op_s"]


def _unique(levels: tuple[Any, ...]) -> tuple[Any, ...]:
    if len(set(levels)) != len(levels):
        raise ValueError(f"levels repeat: {list(levels)}")
    return levels


class Factors(Strict):
    """One cross product of factor levels. A factor left out is not swept.

    Attributes
    ----------
    op:
        Operation names of the firmware catalogue (``rig sweep`` lists unknown ones as skipped).
    key_bits, curve:
        Key sizes (bits) and curve names; left out, every level the op allows.
    payload_bytes:
        Payload sizes, bytes; required when an op takes a payload.
    backend:
        ``"software"`` and/or ``"hardware"`` (an accelerator), default software.
    cpu_hz:
        CPU clocks, Hz; left out, the board runs at the clock it runs at.
    """

    op: tuple[str, ...] = Field(min_length=1)
    key_bits: tuple[int, ...] | None = Field(None, min_length=1)
    payload_bytes: tuple[int, ...] | None = Field(None, min_length=1)
    curve: tuple[str, ...] | None = Field(None, min_length=1)
    backend: tuple[str, ...] = ("software",)
    cpu_hz: tuple[int, ...] | None = Field(None, min_length=1)

    @field_validator("op", "key_bits", "payload_bytes", "curve", "backend", "cpu_hz")
    @classmethod
    def _no_repeats(cls, v: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
        return None if v is None else _unique(v)

    @field_validator("op", "curve", "backend")
    @classmethod
    def _words(cls, v: tuple[str, ...] | None, info: ValidationInfo) -> tuple[str, ...] | None:
        for name in v or ():
            check_name(str(info.field_name), name)
        return v

    @field_validator("key_bits", "payload_bytes", "cpu_hz")
    @classmethod
    def _positive(cls, v: tuple[int, ...] | None, info: ValidationInfo
                  ) -> tuple[int, ...] | None:
        if v is not None and any(x < 1 for x in v):
            raise ValueError(f"levels must be positive integers: {list(v)}")
        limits = PROTOCOL_RANGES.get(str(info.field_name))  # cpu_hz is not sent
        if v is not None and limits is not None and (over := [x for x in v if x > limits[1]]):
            raise ValueError(f"{over[0]} is over {limits[1]}, the most the firmware protocol "
                             "takes (firmware/PROTOCOL.md)")
        return v


class Adaptive(Strict):
    """Windows per point: measure until the 95 % CI half-width of ``metric`` is at most
    ``ci_target`` of its mean, with at least ``min_windows`` and at most ``max_windows``."""

    metric: Metric = "energy_per_op_j"
    ci_target: float = Field(0.01, gt=0, lt=1)
    min_windows: int = Field(3, ge=2)
    max_windows: int = Field(10, ge=2)

    @model_validator(mode="after")
    def _ordered(self) -> Adaptive:
        if self.max_windows < self.min_windows:
            raise ValueError(f"max_windows ({self.max_windows}) is below min_windows "
                             f"({self.min_windows})")
        return self


class Plan(Strict):
    """A whole sweep plan. ``path`` is the file it came from (set by :func:`load_plan`)."""

    name: str = ""
    description: str = ""
    seed: int | None = Field(None, ge=0, lt=2**63)
    fixture: str | tuple[str, ...] | None = None
    repetitions: int = Field(1, ge=1)
    batch: int | Literal["auto"] = "auto"
    cooldown_s: float = Field(0.0, ge=0, le=3600)
    adaptive: Adaptive = Adaptive()
    factors: tuple[Factors, ...] = Field(min_length=1)
    compare: tuple[Compare, ...] = ()
    path: Path = Path("<memory>")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        """A name, not a path: it names the run directory (``runs/<name>-<UTC time>``)."""
        if any(sep in v for sep in ("/", "\\", "..")) or not v.isprintable():
            raise ValueError(f"{v!r} is not a name: it names the run directory "
                             "runs/<name>-<time>, so it may hold no '/', '\\', '..' or "
                             "control character")
        return v

    @field_validator("factors", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, Mapping) else v

    @field_validator("batch")
    @classmethod
    def _batch(cls, v: int | str) -> int | str:
        if isinstance(v, int) and not 1 <= v <= 1_000_000_000:
            raise ValueError("must be 'auto' or between 1 and 10^9 ops")
        return v

    @property
    def title(self) -> str:
        """The plan's name, else its file's stem."""
        return self.name or self.path.stem

    @field_validator("fixture")
    @classmethod
    def _fixtures(cls, v: str | tuple[str, ...] | None) -> str | tuple[str, ...] | None:
        if isinstance(v, tuple):
            if not v:
                raise ValueError("give at least one fixture file")
            _unique(v)
        return v

    def fixture_paths(self) -> tuple[Path, ...]:
        """The plan's fixtures (the board factor), resolved against the plan file."""
        names = (self.fixture,) if isinstance(self.fixture, str) else self.fixture or ()
        return tuple(p if p.is_absolute() else self.path.parent / p for p in map(Path, names))

    def with_seed(self) -> Plan:
        """This plan with its seed drawn now when it has none (to be recorded)."""
        if self.seed is not None:
            return self
        return self.model_copy(update={"seed": secrets.randbits(32)})

    def record(self) -> dict[str, Any]:
        """The plan as the run manifest keeps it; :func:`plan_from_record` reads it back."""
        data = self.model_dump(mode="json", exclude={"path"})
        return {**data, "path": str(self.path)}


def plan_from_record(record: Mapping[str, Any], source: str | Path) -> Plan:
    """The plan stored in a run manifest by :meth:`Plan.record`."""
    data = dict(record)
    path = Path(data.pop("path", "<memory>"))
    return validate(Plan, {**data, "path": path}, Path(source), "plan")


def load_plan(path: str | Path) -> Plan:
    """Read and validate a plan file.

    Raises
    ------
    ConfigError
        The file is missing, not TOML, or a field is wrong; the message names both.
    """
    file = Path(path)
    plan = validate(Plan, read_toml(file, "plan"), file)
    log.info("plan %s: %s", file, plan.title)
    return plan


# --- expansion ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Skipped:
    """A combination of levels an op cannot take, and why."""

    point: Point
    reason: str


@dataclass(frozen=True, slots=True)
class Expansion:
    """The points of a plan on one board, in measuring order, and what was skipped."""

    points: tuple[Point, ...]
    skipped: tuple[Skipped, ...]
    seed: int
    target: Target


@dataclass(frozen=True, slots=True)
class Target:
    """What expansion needs to know of the board: its catalogue and its clocks.

    Attributes
    ----------
    board:
        Board name recorded with every point.
    ops:
        The firmware's catalogue.
    cpu_hz:
        The clock the firmware runs at (``hello``'s ``cpu_hz``; 0 or None when unknown).
    cpu_hz_levels:
        Clocks the firmware can switch to; empty when it cannot change its clock.
    """

    board: str
    ops: tuple[OpInfo, ...]
    cpu_hz: int | None = None
    cpu_hz_levels: tuple[int, ...] = ()

    @classmethod
    def from_dut(cls, hello: Mapping[str, Any], ops: Iterable[OpInfo],
                 board: str | None = None) -> Target:
        """From the firmware's ``hello`` and ``ops`` replies (``board`` overrides hello's)."""
        return cls(board=board or str(hello.get("board", "")), ops=tuple(ops),
                   cpu_hz=int(hello["cpu_hz"]) if hello.get("cpu_hz") else None,
                   cpu_hz_levels=tuple(int(h) for h in hello.get("cpu_hz_levels", ())))

    def op(self, name: str, backend: str) -> OpInfo | None:
        """The catalogue entry of ``name`` on ``backend``, or None."""
        return next((o for o in self.ops if o.name == name and o.backend == backend), None)


def _levels_list(values: Iterable[Any]) -> str:
    return ", ".join(str(v) for v in values)


def payload_problem(info: OpInfo, size: int) -> str | None:
    """Why ``size`` bytes is not a payload ``info`` takes on this board, or None."""
    assert info.payload is not None
    low, high, multiple = info.payload
    if not low <= size <= high:
        return (f"{info.name}: payload_bytes={size} outside {low}..{high} "
                "(the op's limits on this board)")
    if size % multiple:
        return f"{info.name}: payload_bytes={size} not a multiple of {multiple}"
    return None


def _levels(info: OpInfo, factors: Factors, plan: Plan, block: int
            ) -> tuple[Sequence[int | None], Sequence[str | None], Sequence[int | None],
                       Sequence[int | None]]:
    """The key sizes, curves, payload sizes and clocks one op is crossed with in one block
    (``[None]`` for a factor it does not take)."""
    where = f"factors[{block}]" if len(plan.factors) > 1 else "factors"
    key_bits: Sequence[int | None] = [None]
    if info.key_bits:
        key_bits = factors.key_bits or info.key_bits
    curves: Sequence[str | None] = [None]
    if info.curves:
        curves = factors.curve or info.curves
    payloads: Sequence[int | None] = [None]
    if info.payload is not None:
        if factors.payload_bytes is None:
            raise ConfigError(plan.path, f"{where}.payload_bytes",
                              f"op {info.name!r} takes a payload; give its sizes in bytes")
        payloads = factors.payload_bytes
    clocks: Sequence[int | None] = factors.cpu_hz or [None]
    return key_bits, curves, payloads, clocks


def _choices(info: OpInfo, factors: Factors, target: Target, plan: Plan, block: int
             ) -> Iterable[tuple[dict[str, Any], str | None]]:
    """Every (levels, reason-to-skip-or-None) of one op on one backend in one block."""
    for kb, curve, size, hz in product(*_levels(info, factors, plan, block)):
        levels = {"key_bits": kb, "curve": curve, "payload_bytes": size, "cpu_hz": hz}
        reason = None
        if kb is not None and kb not in info.key_bits:
            reason = (f"{info.name}: key_bits={kb} not allowed "
                      f"(allowed: {_levels_list(info.key_bits)})")
        elif curve is not None and curve not in info.curves:
            reason = (f"{info.name}: curve={curve} not allowed "
                      f"(allowed: {_levels_list(info.curves)})")
        elif size is not None:
            reason = payload_problem(info, size)
        yield levels, reason


def _check_clocks(plan: Plan, target: Target) -> None:
    """A ConfigError naming the first ``cpu_hz`` level ``target`` does not offer: one of its
    ``cpu_hz_levels``, or the clock it runs at."""
    for block, factors in enumerate(plan.factors):
        for hz in factors.cpu_hz or ():
            if hz == target.cpu_hz or hz in target.cpu_hz_levels:
                continue
            where = f"factors[{block}].cpu_hz" if len(plan.factors) > 1 else "factors.cpu_hz"
            running = f"it runs at {target.cpu_hz} Hz" if target.cpu_hz else "its clock is unknown"
            if target.cpu_hz_levels:
                offered = (f"the firmware on {target.board} offers "
                           f"{_levels_list(target.cpu_hz_levels)} Hz")
            else:
                offered = f"the firmware on {target.board} cannot set its clock ({running})"
            raise ConfigError(plan.path, where, f"{hz} Hz: {offered}; give those levels or "
                                                "drop cpu_hz")


def nearest_hint(name: str, names: Iterable[str]) -> str:
    """"; did you mean X or Y?" for the catalogue's names nearest ``name``, else a pointer to
    ``rig ops``."""
    near = difflib.get_close_matches(name, sorted(set(names)), n=3)
    return f"; did you mean {' or '.join(near)}?" if near else " (`rig ops` lists them)"


def _check_known(name: str, target: Target, plan: Plan, block: int) -> None:
    """A ConfigError when ``name`` is not in ``target``'s catalogue (a typo must not be
    skipped quietly), suggesting the nearest names."""
    if any(o.name == name for o in target.ops):
        return
    hint = nearest_hint(name, (o.name for o in target.ops))
    where = f"factors[{block}].op" if len(plan.factors) > 1 else "factors.op"
    raise ConfigError(plan.path, where,
                      f"{name!r} is not in the firmware's catalogue on {target.board}{hint}")


def _compare_problem(side: dict[str, Any], target: Target) -> tuple[str, str] | None:
    """The factor of a ``[[compare]]`` side that no entry of ``target``'s catalogue can
    take, and why; else None. As for the factors, an op the catalogue lacks is an error; so
    is a key size or curve the op has on no backend, or a payload for an op that takes
    none: the side names one configuration, which could never be measured. What depends on
    the board's build (a backend, the payload limits) is left to the comparison, as a
    factor's level is skipped."""
    op = side["op"]
    infos = [o for o in target.ops if o.name == op]
    if not infos:
        return "op", (f"{op!r} is not in the firmware's catalogue on {target.board}"
                      f"{nearest_hint(op, (o.name for o in target.ops))}")
    allowed = {"key_bits": [k for o in infos for k in o.key_bits],
               "curve": [c for o in infos for c in o.curves]}
    for factor, levels in allowed.items():
        if factor in side and side[factor] not in levels:
            return factor, (f"{op} takes no {factor} {side[factor]} (allowed: "
                            f"{_levels_list(sorted(set(levels))) or 'none'})")
    if "payload_bytes" in side and all(o.payload is None for o in infos):
        return "payload_bytes", f"{op} takes no payload"
    return None


def _check_compare(plan: Plan, target: Target) -> None:
    """A ConfigError naming the first ``[[compare]]`` side that selects nothing ``target``'s
    catalogue has (an op it lacks, with the nearest names; a level its op does not take)."""
    for i, pair in enumerate(plan.compare):
        for name, (side, selector) in zip("ab", zip((pair.a, pair.b), pair.selectors())):
            problem = _compare_problem(selector, target)
            if problem is not None:
                field = f"compare[{i}].{name}" + ("" if isinstance(side, str)
                                                  else f".{problem[0]}")
                raise ConfigError(plan.path, field, problem[1])


def _combinations(plan: Plan, target: Target) -> int:
    """How many combinations of levels :func:`expand` goes through on ``target`` (measured
    and skipped), counted without going through them."""
    total = 0
    for block, factors in enumerate(plan.factors):
        for name, backend in product(factors.op, factors.backend):
            info = target.op(name, backend)
            total += 1 if info is None else math.prod(
                len(levels) for levels in _levels(info, factors, plan, block))
    return total


def _check_size(plan: Plan, count: int, what: str, field: str = "factors") -> None:
    """A ConfigError on ``field`` when ``count`` (``what`` says of what) is over
    :data:`MAX_POINTS`."""
    if count > MAX_POINTS:
        raise ConfigError(plan.path, field,
                          f"the plan expands to {what}, over the limit of {MAX_POINTS:,} per "
                          "board (docs/sweep.md): drop levels or split it into several plans")


def expand(plan: Plan, target: Target, seed: int | None = None) -> Expansion:
    """The measurement points of ``plan`` on ``target``, shuffled, and the skipped ones.

    Parameters
    ----------
    plan:
        The plan.
    target:
        The board's catalogue and clocks.
    seed:
        Seed of the order; default the plan's (a plan without one must get it from
        :meth:`Plan.with_seed` first, so that it is recorded).

    Raises
    ------
    ConfigError
        An op that takes a payload in a block without ``payload_bytes``; a ``cpu_hz`` level
        the board does not offer (:func:`_check_clocks`); a ``[[compare]]``
        side that selects nothing in the catalogue (:func:`_check_compare`); more than
        :data:`MAX_POINTS` combinations of levels or points (counted before they are made).
    """
    seed = plan.seed if seed is None else seed
    if seed is None:
        raise ValueError("expand needs a seed: call plan.with_seed() and record it")
    _check_compare(plan, target)
    combinations = _combinations(plan, target)
    _check_size(plan, combinations, f"{combinations:,} combinations of levels (measured or "
                                     "skipped)")
    _check_clocks(plan, target)  # after the size: a plan too large is that, whatever its levels
    configs: dict[str, Point] = {}
    skipped: dict[str, Skipped] = {}
    for block, factors in enumerate(plan.factors):
        for name, backend in product(factors.op, factors.backend):
            info = target.op(name, backend)
            if info is None:
                _check_known(name, target, plan, block)
                point = Point(op=name, board=target.board, backend=backend)
                skipped.setdefault(point.key, Skipped(
                    point, f"{name}: no {backend} backend on {target.board}"))
                continue
            for levels, reason in _choices(info, factors, target, plan, block):
                point = Point(op=name, board=target.board, backend=backend,
                              family=info.family or None, **levels)
                if reason is not None:
                    skipped.setdefault(point.key, Skipped(point, reason))
                else:
                    configs.setdefault(point.key, point)
    points = len(configs) * plan.repetitions
    _check_size(plan, points, f"{len(configs):,} configurations × {plan.repetitions:,} "
                              f"repetitions = {points:,} points",
                "repetitions" if plan.repetitions > MAX_POINTS else "factors")
    order = [replace(p, rep=rep) for p in configs.values() for rep in range(plan.repetitions)]
    random.Random(seed).shuffle(order)
    for s in skipped.values():
        log.info("skipped: %s", s.reason)
    return Expansion(points=tuple(order), skipped=tuple(skipped.values()), seed=seed,
                     target=target)
