"""Fuzzing of what the rig reads from files (issues 11, 13): the capture readers (CSV, sigrok
``.sr``, the raw PPK2 stream, the Power Profiler app's export and session) and the plan and
fixture loaders.

Each target takes a valid file, damages it as a bad disk, a truncated download or a hostile
author would (bytes flipped, cut, inserted, repeated; values of any type in any field), and
asserts the one contract: the file is read, or it is refused with an
:class:`~energyrig.errors.EnergyrigError` (one line naming the file), never another
exception and never a hang. Hypothesis drives the damage; each target is bounded in
examples and time so CI spends about a minute here (``ENERGYRIG_FUZZ_EXAMPLES`` raises the
bound for a longer campaign). The firmware's protocol parser has its own libFuzzer target
(``scripts/fuzz-parser.sh``; figures in ``docs/performance.md``).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.paths import DATA, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from energyrig.errors import EnergyrigError
from energyrig.fixtures import load_fixture
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.ppk2.decode import encode_words
from energyrig.instruments.ppk2.metadata import parse_metadata
from energyrig.instruments.ppk2.rawfile import Ppk2StreamWriter
from energyrig.rig.analysis import analyze_file
from energyrig.rig.plan import load_plan
from support.ppk_app import convert_bits16, write_csv_export, write_session

EXAMPLES = int(os.environ.get("ENERGYRIG_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


# -- damage ---------------------------------------------------------------------------------

@st.composite
def damaged(draw: st.DrawFn, good: bytes) -> bytes:
    """``good`` with a few random edits: flips, cuts, insertions, repeats."""
    data = bytearray(good)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(("flip", "cut", "insert", "repeat", "truncate")))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del data[at:at + draw(st.integers(1, 64))]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=32))
        elif kind == "repeat":
            data[at:at] = data[at:at + draw(st.integers(1, 256))]
        else:
            del data[at:]
    return bytes(data)


def _read(path: Path, options: CaptureOptions | None = None) -> None:
    """The contract: read it whole (every window), or refuse it with an EnergyrigError."""
    try:
        analyze_file(path, options, batch_n=10)
    except EnergyrigError as exc:
        assert str(exc) and "\n" not in str(exc).strip()


# -- the capture readers -------------------------------------------------------------------

GOOD_CSV = (DATA / "synthetic-capture.csv").read_bytes()[:60_000]


@FUZZ
@given(data=damaged(GOOD_CSV))
def test_the_csv_reader_reads_or_refuses(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "c.csv"
    path.write_bytes(data)
    _read(path)


@pytest.fixture(scope="module")
def good_sr(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    if shutil.which("sigrok-cli") is None:
        pytest.fail("sigrok-cli is missing: scripts/install-deps.sh installs it")
    path = tmp_path_factory.mktemp("sr") / "demo.sr"
    subprocess.run(["sigrok-cli", "--driver", "demo", "--config", "samplerate=100k",
                    "--samples", "3000", "--channels", "D0,A0", "--output-file", str(path)],
                   check=True, capture_output=True, timeout=60)
    return path.read_bytes()


@FUZZ
@given(data=st.data())
def test_the_sr_reader_reads_or_refuses(tmp_path: Path, good_sr: bytes, data: st.DataObject) -> None:
    # Damage the whole zip, or one member inside a well-formed zip (its metadata, its data).
    with zipfile.ZipFile(_bytes_file(tmp_path / "in.sr", good_sr)) as zin:
        members = {n: zin.read(n) for n in zin.namelist()}
    path = tmp_path / "c.sr"
    target = data.draw(st.sampled_from(["<zip>", *sorted(members)]))
    if target == "<zip>":
        path.write_bytes(data.draw(damaged(good_sr)))
    else:
        members[target] = data.draw(damaged(members[target]))
        with zipfile.ZipFile(path, "w") as zout:
            for name, content in members.items():
                zout.writestr(name, content)
    _read(path)


APP = CaptureOptions(voltage=3.0, trigger="D1")


def _app_samples() -> tuple[np.ndarray, np.ndarray]:
    """3000 samples: 2 mA under D1 every other 500, idle 10 µA, as the app stores them."""
    high = (np.arange(3000) // 500) % 2 == 1
    return (np.where(high, 2000.0, 10.0).astype(np.float32),
            convert_bits16(high.astype(np.uint8) << 1))


@FUZZ
@given(data=st.data())
def test_the_power_profiler_export_reader_reads_or_refuses(tmp_path: Path,
                                                           data: st.DataObject) -> None:
    good = tmp_path / "good.csv"
    with good.open("w", newline="") as out:
        write_csv_export(out, [_app_samples()], 100_000.0)
    path = tmp_path / "c.csv"
    path.write_bytes(data.draw(damaged(good.read_bytes())))
    _read(path, APP)


@FUZZ
@given(data=st.data())
def test_the_power_profiler_session_reader_reads_or_refuses(tmp_path: Path,
                                                            data: st.DataObject) -> None:
    # Damage the whole zip, or one member inside a well-formed zip.
    good = tmp_path / "good.ppk2"
    write_session(good, [_app_samples()], 100_000.0)
    with zipfile.ZipFile(good) as zin:
        members = {n: zin.read(n) for n in zin.namelist()}
    path = tmp_path / "c.ppk2"
    target = data.draw(st.sampled_from(["<zip>", *sorted(members)]))
    if target == "<zip>":
        path.write_bytes(data.draw(damaged(good.read_bytes())))
    else:
        members[target] = data.draw(damaged(members[target]))
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
            for name, content in members.items():
                zout.writestr(name, content)
    _read(path, APP)


def _bytes_file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def good_ppk2(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    text = (DATA / "ppk2-metadata.txt").read_text()
    cal = parse_metadata(text)
    t = np.arange(3000)
    amps = np.where((t // 500) % 2 == 1, 3e-3, 5e-6)
    logic = ((t // 500) % 2).astype(np.uint8)
    path = tmp_path_factory.mktemp("ppk2") / "good.ppk2raw"
    with Ppk2StreamWriter(path, text, vdd_mv=3000) as rec:
        rec.write(encode_words(amps, cal, 3000, logic=logic).tobytes())
    return path.read_bytes()


@FUZZ
@given(data=st.data())
def test_the_raw_ppk2_reader_reads_or_refuses(tmp_path: Path, good_ppk2: bytes,
                                              data: st.DataObject) -> None:
    path = tmp_path / "c.ppk2raw"
    path.write_bytes(data.draw(damaged(good_ppk2)))
    _read(path)


# -- the loaders ---------------------------------------------------------------------------

def _toml_value() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.integers(-2**63, 2**63 - 1), st.floats(), st.booleans(),
                        st.text(max_size=20))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(min_size=1, max_size=12), inner, max_size=4),
                        max_leaves=8)


def _dump(table: dict[str, Any], prefix: str = "") -> str:
    """A minimal TOML writer for the fuzzer's tables (inline tables below the top)."""
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(v), repr(v))
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return '"' + v.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return "{" + ", ".join(f"{_key(k)} = {value(x)}" for k, x in v.items()) + "}"
    lines = [f"{_key(k)} = {value(v)}" for k, v in table.items() if not isinstance(v, dict)]
    for k, v in table.items():
        if isinstance(v, dict):
            lines.append(f"[{prefix}{_key(k)}]")
            lines += [f"{_key(kk)} = {value(vv)}" for kk, vv in v.items()]
    return "\n".join(lines) + "\n"


def _key(k: str) -> str:
    return '"' + k.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


def _mutated(good: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``good`` with fields replaced, removed or added, at the top and one level down."""
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        table = {k: dict(v) if isinstance(v, dict) else v for k, v in good.items()}
        for _ in range(draw(st.integers(1, 4))):
            section = draw(st.sampled_from([None, *[k for k, v in table.items()
                                                    if isinstance(v, dict)]]))
            where = table if section is None else table[section]
            action = draw(st.sampled_from(("replace", "remove", "add")))
            if action == "add" or not where:
                where[draw(st.text(min_size=1, max_size=10))] = draw(_toml_value())
            elif action == "remove":
                del where[draw(st.sampled_from(sorted(where)))]
            else:
                where[draw(st.sampled_from(sorted(where)))] = draw(_toml_value())
        return table
    return build()


def _load_or_refuse(loader: Any, path: Path) -> None:
    try:
        loader(path)
    except EnergyrigError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc).strip()


GOOD_FIXTURE = tomllib.loads((ROOT / "fixtures" / "sim.toml").read_text(encoding="utf-8"))
GOOD_PLAN = tomllib.loads((ROOT / "plans" / "quick.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("loader", "good", "name"), [(load_fixture, GOOD_FIXTURE, "bench.toml"),
                                                    (load_plan, GOOD_PLAN, "plan.toml")],
                         ids=["fixture", "plan"])
@FUZZ
@given(data=st.data())
def test_the_loaders_load_or_refuse(tmp_path: Path, loader: Any, good: dict[str, Any],
                                    name: str, data: st.DataObject) -> None:
    path = tmp_path / name
    path.write_text(_dump(data.draw(_mutated(good))), encoding="utf-8")
    _load_or_refuse(loader, path)


@FUZZ
@given(data=damaged((ROOT / "plans" / "quick.toml").read_bytes()))
def test_damaged_plan_bytes_are_refused_or_loaded(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "plan.toml"
    path.write_bytes(data)
    _load_or_refuse(load_plan, path)
