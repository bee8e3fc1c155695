"""Hostile input files (issue 20): every file the rig reads as configuration is a regular
file under its size limit (``energyrig.bounded.LIMITS``), a plan is counted before it is
expanded, a name stays a name, numbers that reach the firmware are within the protocol's
limits, and a ``[[compare]]`` side is checked like the factors.

Each case exits 2 with one line ``rig: error: ...`` naming the file and field (or the
option), with no traceback, and leaves every file as it was (``assert_refused`` of
``tests/support/bad_input.py``). No case reads a device or a large file: a special file is
refused before it is read, and the size cases use a small limit.
"""
from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
from support.bad_input import GOOD_FIXTURE, GOOD_PLAN, assert_refused
from support.paths import ROOT

from energyrig import bounded
from energyrig.config import validate
from energyrig.errors import ConfigError
from energyrig.rig import opscache
from energyrig.rig import plan as plan_module
from energyrig.rig.dut import OpInfo
from energyrig.rig.plan import Plan, Target, expand

SIM = ROOT / "fixtures" / "sim.toml"
CALIBRATE_SHOW = ["calibrate", "show", "FILE", "-f", str(SIM)]
# (id, what the file is, argv with FILE where the file goes, its LIMITS kind)
READERS = [
    ("fixture", "fixture", ["run", "--op", "sha256", "--payload-bytes", "64", "-f", "FILE"]),
    ("plan", "plan", ["sweep", "FILE", "--dry-run"]),
    ("plan-fixture", "fixture", ["sweep", "PLAN", "--dry-run"]),
    ("calibration-show", "calibration record", CALIBRATE_SHOW),
    ("calibration-store", "calibration record", ["calibrate", "list", "-f", str(SIM)]),
    ("manifest", "run manifest", ["report", "run"]),
]
SPECIALS = ["dev-zero", "fifo"]


def _place(kind: str, tmp_path: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch
           ) -> tuple[list[str], Path]:
    """Where the file of ``argv`` goes (FILE, a plan's fixture, a store record or a run's
    manifest) and the argv to run; the caller makes the file there."""
    if argv[0] == "report":
        (tmp_path / "run").mkdir()
        return argv, tmp_path / "run" / "manifest.json"
    if argv[:2] == ["calibrate", "list"]:
        monkeypatch.setenv("ENERGYRIG_CALIBRATION_DIR", str(tmp_path / "cal"))
        (tmp_path / "cal").mkdir()
        return argv, tmp_path / "cal" / "20261120T000000Z-ppk2-offset_a.json"
    if "PLAN" in argv:
        (tmp_path / "plan.toml").write_text(GOOD_PLAN.format(fixture="bench.toml"),
                                            encoding="utf-8")
        return ["plan.toml" if a == "PLAN" else a for a in argv], tmp_path / "bench.toml"
    return [f"the-{kind}" if a == "FILE" else a for a in argv], tmp_path / f"the-{kind}"


@pytest.mark.parametrize("special", SPECIALS)
@pytest.mark.parametrize(("what", "argv"), [c[1:] for c in READERS], ids=[c[0] for c in READERS])
@pytest.mark.slow
def test_a_configuration_file_that_is_not_a_regular_file_is_refused_unread(
        tmp_path: Path, what: str, argv: list[str], special: str,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    argv, where = _place(what, tmp_path, argv, monkeypatch)
    if special == "dev-zero":  # endless: read whole, it filled the memory
        where.symlink_to("/dev/zero")
        kind = "a character device"
    else:
        os.mkfifo(where)  # no writer: opening it for reading must not block
        kind = "a FIFO"
    assert_refused(argv, f"{where.relative_to(tmp_path)}: is {kind}, not a regular file: "
                          f"give a {what} file", tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize(("what", "argv"), [c[1:] for c in READERS], ids=[c[0] for c in READERS])
@pytest.mark.slow
def test_a_configuration_file_over_its_size_limit_is_refused(
        tmp_path: Path, what: str, argv: list[str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    argv, where = _place(what, tmp_path, argv, monkeypatch)
    monkeypatch.setitem(bounded.LIMITS, what, 4000)
    # well-formed in its own syntax, so that only the size can refuse it
    filler = "#" + "x" * 4000 + "\n"
    good = {"fixture": GOOD_FIXTURE + filler, "plan": GOOD_PLAN.format(fixture=SIM) + filler}
    where.write_text(good.get(what, json.dumps({"padding": "x" * 4000})), encoding="utf-8")
    assert_refused(argv, f"{where.relative_to(tmp_path)}: larger than 4000 bytes, the limit "
                          f"of a {what}", tmp_path, capsys, monkeypatch)


def test_the_limits_are_read_in_chunks_up_to_one_byte_past_the_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader asks for at most limit + 1 bytes however large the file is (a file that
    grows between the check and the read is still refused)."""
    asked: list[int] = []
    real_read = os.read

    def read(fd: int, n: int) -> bytes:
        asked.append(n)
        return real_read(fd, n)

    monkeypatch.setitem(bounded.LIMITS, "plan", 100_000)
    monkeypatch.setattr(bounded.os, "read", read)
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * 300_000)
    with pytest.raises(ConfigError, match="larger than 100000 bytes"):
        bounded.read_text(big, "plan")
    assert sum(asked) == 100_001 and max(asked) < 100_001


def test_a_kept_catalogue_that_is_not_a_regular_file_is_not_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache only saves time: an entry that is a FIFO or over its limit is ignored (and
    the DUT asked), never read until it ends."""
    monkeypatch.setenv(opscache.CACHE_ENV, str(tmp_path))
    entry = opscache._entry_path(SIM.resolve())
    entry.parent.mkdir(parents=True)
    os.mkfifo(entry)
    assert opscache._read(entry) is None
    entry.unlink()
    entry.write_text(json.dumps({"format": opscache.FORMAT, "sources": {}, "hello": {},
                                 "ops": [], "footprint": None}), encoding="utf-8")
    assert opscache._read(entry) is not None  # a good entry is used ...
    monkeypatch.setitem(bounded.LIMITS, "catalogue cache", 10)
    assert opscache._read(entry) is None  # ... and ignored past its limit


# -- nesting --------------------------------------------------------------------------------

DEEP = 5000


@pytest.mark.parametrize("shape", ["array", "inline-table"])
def test_a_plan_nested_thousands_of_levels_deep_is_one_line(
        tmp_path: Path, shape: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    value = "[" * DEEP + "]" * DEEP if shape == "array" else "{a=" * DEEP + "1" + "}" * DEEP
    (tmp_path / "plan.toml").write_text(f"x = {value}\n" + GOOD_PLAN.format(fixture=SIM),
                                        encoding="utf-8")
    assert_refused(["sweep", "plan.toml", "--dry-run"],
                    "plan.toml: nested too deeply for the TOML parser", tmp_path, capsys,
                    monkeypatch)


@pytest.mark.slow
def test_a_calibration_record_nested_thousands_of_levels_deep_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cal.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert_refused(["calibrate", "show", "cal.json", "-f", str(SIM)],
                    "cal.json: corrupt calibration record: nested too deeply", tmp_path,
                    capsys, monkeypatch)


def test_a_manifest_nested_thousands_of_levels_deep_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text("[" * 100_000 + "]" * 100_000,
                                                    encoding="utf-8")
    assert_refused(["report", "run"], "run: manifest.json is not valid JSON", tmp_path,
                    capsys, monkeypatch)


# -- plan size ------------------------------------------------------------------------------

AES = OpInfo(name="aes-cbc-encrypt", family="symmetric", backend="software",
             key_bits=(128, 192, 256), payload=(16, 1 << 20, 16))
TARGET = Target(board="host", ops=(AES,))


def _plan(factors: str, head: str = "") -> Plan:
    return validate(Plan, {**tomllib.loads(f"seed = 1\n{head}\n[[factors]]\n{factors}"),
                           "path": Path("plan.toml")}, Path("plan.toml"))


SIZE_CASES = [
    ("cross-product", "", 'op = ["aes-cbc-encrypt"]\nkey_bits = [128, 192, 256]\n'
     f"payload_bytes = {[16 * i for i in range(1, 4001)]}\ncpu_hz = {list(range(1, 1001))}",
     "plan.toml: factors: the plan expands to 12,000,000 combinations of levels (measured or "
     "skipped), over the limit of 100,000 per board"),
    ("repetitions", "repetitions = 1000000000",
     'op = ["aes-cbc-encrypt"]\nkey_bits = [128]\npayload_bytes = [16]',
     "plan.toml: repetitions: the plan expands to 1 configurations × 1,000,000,000 "
     "repetitions = 1,000,000,000 points, over the limit of 100,000 per board"),
    ("configurations-times-repetitions", "repetitions = 50",
     'op = ["aes-cbc-encrypt"]\nkey_bits = [128, 192, 256]\n'
     f"payload_bytes = {[16 * i for i in range(1, 1001)]}",
     "plan.toml: factors: the plan expands to 3,000 configurations × 50 repetitions = "
     "150,000 points, over the limit of 100,000"),
]


@pytest.mark.parametrize(("head", "factors", "expected"), [c[1:] for c in SIZE_CASES],
                         ids=[c[0] for c in SIZE_CASES])
def test_a_plan_is_counted_before_it_is_expanded(head: str, factors: str, expected: str
                                                 ) -> None:
    with pytest.raises(ConfigError) as refused:
        expand(_plan(factors, head), TARGET)
    assert str(refused.value).startswith(expected)


@pytest.mark.parametrize("limit", [36, 35])
def test_a_plan_at_the_limit_expands_and_one_point_over_is_refused(
        limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_module, "MAX_POINTS", limit)
    # 15 combinations, 3 skipped (33 bytes), 12 configurations × 3 repetitions = 36 points
    plan = _plan('op = ["aes-cbc-encrypt"]\nkey_bits = [128, 192, 256]\n'
                 "payload_bytes = [16, 32, 33, 48, 64]", "repetitions = 3")
    if limit == 35:
        with pytest.raises(ConfigError, match="36 points, over the limit of 35"):
            expand(plan, TARGET)
    else:
        expansion = expand(plan, TARGET)
        assert (len(expansion.points), len(expansion.skipped)) == (36, 3)


@pytest.mark.slow
def test_a_plan_of_twelve_million_points_is_refused_by_the_dry_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    factors = ('op = ["aes-cbc-encrypt"]\nkey_bits = [128, 192, 256]\n'
               f"payload_bytes = {[16 * i for i in range(1, 4001)]}\n"
               f"cpu_hz = {list(range(1, 1001))}\n")
    plan = GOOD_PLAN.format(fixture=SIM).split("[[factors]]")[0]
    (tmp_path / "plan.toml").write_text(f"{plan}[[factors]]\n{factors}", encoding="utf-8")
    assert_refused(["sweep", "plan.toml", "--dry-run"],
                    "plan.toml: factors: the plan expands to 12,000,000 combinations of "
                    "levels", tmp_path, capsys, monkeypatch)


# -- a name is a name -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../../escaped", "runs/../../escaped", "a/b", "..", "a\\\\b",
                                  "x\\ny"], ids=["dotdot-path", "inner-dotdot", "slash",
                                                 "dotdot", "backslash", "newline"])
def test_a_plan_name_that_is_a_path_is_refused(tmp_path: Path, name: str,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The name makes the run directory runs/<name>-<time>: a path there wrote the run
    outside runs/, making folders on the way."""
    plan = GOOD_PLAN.format(fixture=SIM)
    (tmp_path / "plan.toml").write_text(f'name = "{name}"\n{plan}', encoding="utf-8")
    assert_refused(["sweep", "plan.toml"], "plan.toml: name: ", tmp_path, capsys, monkeypatch)
    assert [p.name for p in tmp_path.iterdir()] == ["plan.toml"]


# -- numbers that reach the firmware --------------------------------------------------------

PROTOCOL_CASES = [
    ("batch-huge", ["run", "--op", "sha256", "--batch", "99999999999999999999"],
     "'--batch': 99999999999999999999: the firmware takes 1 .. 1000000000"),
    ("batch-over", ["run", "--op", "sha256", "--batch", "1000000001"],
     "'--batch': 1000000001: the firmware takes 1 .. 1000000000"),
    ("seed-negative", ["run", "--op", "sha256", "--seed", "-1"],
     "'--seed': -1: the firmware takes 0 .. 4294967295"),
    ("seed-over", ["run", "--op", "sha256", "--seed", "4294967296"],
     "'--seed': 4294967296: the firmware takes 0 .. 4294967295"),
]


@pytest.mark.parametrize(("argv", "expected"), [c[1:] for c in PROTOCOL_CASES],
                         ids=[c[0] for c in PROTOCOL_CASES])
def test_an_option_outside_the_protocols_range_is_refused_before_the_dut(
        tmp_path: Path, argv: list[str], expected: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert_refused([*argv, "--payload-bytes", "64", "-f", str(SIM)], expected, tmp_path,
                    capsys, monkeypatch)


@pytest.mark.parametrize(("factor", "level", "high"), [
    ("key_bits", 65536, 65535), ("payload_bytes", 2**32, 2**32 - 1),
    ("payload_bytes", 99999999999999999999, 2**32 - 1)])
def test_a_plan_level_outside_the_protocols_range_is_refused(
        tmp_path: Path, factor: str, level: int, high: int,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    plan = GOOD_PLAN.format(fixture=SIM).replace("op = [\"sha256\"]",
                                                 "op = [\"aes-cbc-encrypt\"]")
    plan = plan.replace("payload_bytes = [64]", f"payload_bytes = [64]\n{factor} = [{level}]"
                        if factor == "key_bits" else f"payload_bytes = [64, {level}]")
    (tmp_path / "plan.toml").write_text(plan, encoding="utf-8")
    assert_refused(["sweep", "plan.toml", "--dry-run"],
                    f"plan.toml: factors[0].{factor}: {level} is over {high}, the most the "
                    "firmware protocol takes", tmp_path, capsys, monkeypatch)


# -- [[compare]] is checked like the factors ------------------------------------------------

COMPARE_CASES = [
    ("issue-20", '{ op = "nothing", key_bits = "x" }',
     "compare[0].b: key_bits 'x' is not a positive integer"),
    ("unknown-op", '{ op = "nothing" }',
     "compare[0].b.op: 'nothing' is not in the firmware's catalogue on host"),
    ("misspelt-op", '"sha265"',
     "compare[0].b: 'sha265' is not in the firmware's catalogue on host; did you mean sha256"),
    ("unknown-factor", '{ op = "sha256", keybits = 128 }',
     "compare[0].b: 'keybits' is not a factor (factors: op, backend, curve, key_bits"),
    ("no-op", "{ key_bits = 128 }", "compare[0].b: a table of factors needs op"),
    ("op-not-a-word", '{ op = "sha 256" }', "compare[0].b: op 'sha 256' is not a valid name"),
    ("key-bits-zero", '{ op = "aes-cbc-encrypt", key_bits = 0 }',
     "compare[0].b: key_bits 0 is not a positive integer"),
    ("key-bits-not-allowed", '{ op = "aes-cbc-encrypt", key_bits = 100 }',
     "compare[0].b.key_bits: aes-cbc-encrypt takes no key_bits 100 (allowed: 128, 192, 256)"),
    ("key-bits-not-taken", '{ op = "sha256", key_bits = 128 }',
     "compare[0].b.key_bits: sha256 takes no key_bits 128 (allowed: none)"),
    ("curve-not-allowed", '{ op = "ecdsa-sign", curve = "p999" }',
     "compare[0].b.curve: ecdsa-sign takes no curve p999"),
]


@pytest.mark.parametrize(("side", "expected"), [c[1:] for c in COMPARE_CASES],
                         ids=[c[0] for c in COMPARE_CASES])
@pytest.mark.slow
def test_a_compare_side_is_validated_against_the_catalogue(
        tmp_path: Path, side: str, expected: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    plan = GOOD_PLAN.format(fixture=SIM)
    (tmp_path / "plan.toml").write_text(f'{plan}[[compare]]\na = "sha256"\nb = {side}\n',
                                        encoding="utf-8")
    assert_refused(["sweep", "plan.toml", "--dry-run"], f"plan.toml: {expected}", tmp_path,
                    capsys, monkeypatch)


def test_a_compare_side_the_catalogue_has_is_accepted() -> None:
    plan = _plan('op = ["aes-cbc-encrypt"]\nkey_bits = [128]\npayload_bytes = [16]\n'
                 '[[compare]]\na = "aes-cbc-encrypt"\n'
                 'b = { op = "aes-cbc-encrypt", key_bits = 256, payload_bytes = 16 }')
    assert len(expand(plan, TARGET).points) == 1
