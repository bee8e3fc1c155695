"""Sweep plans: loading (errors name file and field), expansion against the host firmware's
real catalogue (skipped combinations listed with reasons), seeded order, the shipped plans."""
from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path

import pytest
from support.paths import ROOT

from energyrig.errors import ConfigError
from energyrig.fixtures import load_fixture
from energyrig.rig.dut import OpInfo
from energyrig.rig.plan import Plan, Target, expand, load_plan, plan_from_record
from energyrig.rig.sweep.dryrun import read_target

PLANS = sorted((ROOT / "plans").glob("*.toml"))


@pytest.fixture(scope="module")
def target() -> Target:
    """The catalogue of the host build of the firmware, asked over its protocol."""
    return read_target(load_fixture(ROOT / "fixtures" / "sim.toml"))


def write(tmp_path: Path, text: str, name: str = "plan.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def plan_of(tmp_path: Path, factors: str, head: str = "seed = 1") -> Plan:
    return load_plan(write(tmp_path, f"{head}\n{textwrap.dedent(factors)}"))


# --- the shipped plans --------------------------------------------------------------------

@pytest.mark.slow
def test_catalogue_is_the_firmwares(target: Target) -> None:
    names = {o.name for o in target.ops}
    assert {"aes-ecb-encrypt", "rc6-encrypt", "sha3-512", "rsa-keygen", "ecdh-shared",
            "iot-join"} <= names
    assert target.board == "host" and target.cpu_hz and target.cpu_hz > 0


@pytest.mark.parametrize("path", PLANS, ids=[p.stem for p in PLANS])
@pytest.mark.slow
def test_shipped_plans_load_and_expand(path: Path, target: Target) -> None:
    plan = load_plan(path)
    clocks = tuple(hz for factors in plan.factors for hz in factors.cpu_hz or ())
    if clocks:  # plans/clock.toml: for a board that sets its clock (the host DUT cannot)
        target = dataclasses.replace(target, cpu_hz_levels=clocks)
    expansion = expand(plan, target)
    assert expansion.points, f"{path.name} measures nothing"
    assert len({p.key for p in expansion.points}) == len(expansion.points)
    assert [p.is_file() for p in plan.fixture_paths()] == [True]
    for point in expansion.points:
        info = target.op(point.op, point.backend)
        assert info is not None and point.family == info.family


@pytest.mark.slow
def test_quick_plan_skips_nothing(target: Target) -> None:
    expansion = expand(load_plan(ROOT / "plans" / "quick.toml"), target)
    assert expansion.skipped == ()
    assert {p.family for p in expansion.points} == {"symmetric", "hash", "public-key"}


@pytest.mark.slow
def test_public_key_plan_lists_what_the_firmware_lacks(target: Target) -> None:
    expansion = expand(load_plan(ROOT / "plans" / "public-key.toml"), target)
    reasons = {(s.point.op, s.point.key_bits, s.point.curve): s.reason for s in expansion.skipped}
    assert reasons[("rsa-keygen", 8192, None)] == (
        "rsa-keygen: key_bits=8192 not allowed (allowed: 1024, 2048, 3072, 4096)")
    assert "curve=p224 not allowed" in reasons[("ecdsa-sign", None, "p224")]
    assert len(reasons) == 6
    # DH takes key sizes but no curves; ECDH curves but no key sizes: never crossed.
    ecdh = [p for p in expansion.points if p.op == "ecdh-shared"]
    assert sorted(p.curve for p in ecdh if p.rep == 0) == ["p256", "x25519"]
    assert all(p.key_bits is None for p in ecdh)


@pytest.mark.slow
def test_factorial_plan_is_a_full_2k_design(target: Target) -> None:
    expansion = expand(load_plan(ROOT / "plans" / "factorial.toml"), target)
    cells = {(p.op, p.key_bits, p.payload_bytes) for p in expansion.points}
    assert len(cells) == 8 and len(expansion.points) == 16


# --- expansion ----------------------------------------------------------------------------

@pytest.mark.slow
def test_factors_an_op_does_not_take_are_not_crossed(tmp_path: Path, target: Target) -> None:
    plan = plan_of(tmp_path, """
        [factors]
        op = ["sha256", "aes-cbc-encrypt"]
        key_bits = [128, 256]
        curve = ["p256"]
        payload_bytes = [64, 1024]
        """)
    points = expand(plan, target).points
    assert sorted((p.op, p.key_bits, p.payload_bytes) for p in points) == [
        ("aes-cbc-encrypt", 128, 64), ("aes-cbc-encrypt", 128, 1024),
        ("aes-cbc-encrypt", 256, 64), ("aes-cbc-encrypt", 256, 1024),
        ("sha256", None, 64), ("sha256", None, 1024)]
    assert all(p.curve is None and p.board == "host" for p in points)


@pytest.mark.slow
def test_levels_an_op_cannot_take_are_skipped_with_reasons(tmp_path: Path,
                                                            target: Target) -> None:
    plan = plan_of(tmp_path, """
        [factors]
        op = ["aes-ecb-encrypt", "rsa-encrypt"]
        key_bits = [128, 2048]
        payload_bytes = [100, 128, 2097152]
        backend = ["software", "hardware"]
        """)
    expansion = expand(plan, target)
    by_levels = {(s.point.op, s.point.key_bits, s.point.payload_bytes, s.point.backend): s.reason
                 for s in expansion.skipped}
    # aes: 5 of 6 sizes x keys; rsa: 5 of 6; one per op on the missing hardware backend
    assert len(by_levels) == len(expansion.skipped) == 5 + 5 + 2
    assert by_levels[("aes-ecb-encrypt", 128, 100, "software")] == (
        "aes-ecb-encrypt: payload_bytes=100 not a multiple of 16")
    assert by_levels[("aes-ecb-encrypt", 128, 2097152, "software")].startswith(
        "aes-ecb-encrypt: payload_bytes=2097152 outside 16..1048576")
    assert "key_bits=2048 not allowed (allowed: 128, 192, 256)" in \
        by_levels[("aes-ecb-encrypt", 2048, 100, "software")]
    assert "payload_bytes=128 outside 1..117" in by_levels[("rsa-encrypt", 2048, 128, "software")]
    assert by_levels[("aes-ecb-encrypt", None, None, "hardware")] == (
        "aes-ecb-encrypt: no hardware backend on host")
    assert sorted((p.op, p.key_bits, p.payload_bytes) for p in expansion.points) == [
        ("aes-ecb-encrypt", 128, 128), ("rsa-encrypt", 2048, 100)]


@pytest.mark.parametrize(("op", "problem"), [
    ("sha265", "'sha265' is not in the firmware's catalogue on host; did you mean sha256"),
    ("no-such-op", "'no-such-op' is not in the firmware's catalogue on host (`rig ops` lists"),
])
@pytest.mark.slow
def test_an_op_not_in_the_catalogue_is_an_error_with_the_nearest_names(
        tmp_path: Path, target: Target, op: str, problem: str) -> None:
    plan = plan_of(tmp_path, f"""
        [factors]
        op = ["aes-ecb-encrypt", "{op}"]
        payload_bytes = [16]
        """)
    with pytest.raises(ConfigError, match=re.escape(f"plan.toml: factors.op: {problem}")):
        expand(plan, target)


@pytest.mark.parametrize("op", ["sha256 payload_bytes=128", "sha256\\nhello", "shä256", "SHA256"])
def test_an_op_name_the_protocol_cannot_carry_is_refused_at_load(tmp_path: Path,
                                                                 op: str) -> None:
    with pytest.raises(ConfigError, match=r"plan.toml: factors\[0\]\.op: op .* is not a valid name"):
        plan_of(tmp_path, f"""
            [factors]
            op = ["{op}"]
            """)


@pytest.mark.slow
def test_left_out_key_bits_and_curves_take_every_allowed_level(tmp_path: Path,
                                                                target: Target) -> None:
    plan = plan_of(tmp_path, """
        [factors]
        op = ["rsa-keygen", "ecdsa-keygen"]
        """)
    levels = sorted((p.op, p.key_bits or 0, p.curve or "") for p in expand(plan, target).points)
    assert levels == [("ecdsa-keygen", 0, "p256"), ("ecdsa-keygen", 0, "p384"),
                      ("ecdsa-keygen", 0, "secp256k1"), ("rsa-keygen", 1024, ""),
                      ("rsa-keygen", 2048, ""), ("rsa-keygen", 3072, ""), ("rsa-keygen", 4096, "")]


@pytest.mark.slow
def test_a_payload_op_without_payload_sizes_is_a_config_error(tmp_path: Path,
                                                             target: Target) -> None:
    plan = plan_of(tmp_path, """
        [[factors]]
        op = ["aes-keygen"]
        [[factors]]
        op = ["sha256"]
        """)
    with pytest.raises(ConfigError) as err:
        expand(plan, target)
    assert err.value.field == "factors[1].payload_bytes"
    assert err.value.path == str(tmp_path / "plan.toml")
    assert "sha256" in str(err.value)


@pytest.mark.slow
def test_clock_levels_the_firmware_cannot_set_are_refused(tmp_path: Path,
                                                          target: Target) -> None:
    # issue 22 item 5: a clock the board does not offer is a plan error naming the field
    # (it was skipped: no point of the plan could be measured at it)
    assert target.cpu_hz is not None
    plan = plan_of(tmp_path, f"""
        [factors]
        op = ["aes-keygen"]
        key_bits = [128]
        cpu_hz = [{target.cpu_hz}, 64000000]
        """)
    with pytest.raises(ConfigError) as err:
        expand(plan, target)
    assert err.value.field == "factors.cpu_hz"
    assert "cannot set its clock" in str(err.value)
    settable = Target("nrf", target.ops, cpu_hz=64000000, cpu_hz_levels=(32000000,))
    plan = plan_of(tmp_path, """
        [factors]
        op = ["aes-keygen"]
        key_bits = [128]
        cpu_hz = [32000000, 64000000]
        """)
    assert sorted(p.cpu_hz for p in expand(plan, settable).points) == [32000000, 64000000]


@pytest.mark.slow
def test_repetitions_and_blocks_are_deduplicated(tmp_path: Path, target: Target) -> None:
    plan = plan_of(tmp_path, """
        [[factors]]
        op = ["sha256"]
        payload_bytes = [64]
        [[factors]]
        op = ["sha256", "md5"]
        payload_bytes = [64]
        """, head="seed = 1\nrepetitions = 3")
    points = expand(plan, target).points
    assert sorted((p.op, p.rep) for p in points) == [
        ("md5", 0), ("md5", 1), ("md5", 2), ("sha256", 0), ("sha256", 1), ("sha256", 2)]


@pytest.mark.slow
def test_order_is_shuffled_by_the_seed(tmp_path: Path, target: Target) -> None:
    factors = """
        [factors]
        op = ["sha256", "md5", "sha1", "sha512"]
        payload_bytes = [16, 64, 256, 1024, 4096]
        """
    plan = plan_of(tmp_path, factors)
    a, b = expand(plan, target), expand(plan, target)
    other = expand(plan, target, seed=2)
    assert a.points == b.points and a.seed == 1
    assert a.points != other.points and set(a.points) == set(other.points)
    generated = sorted(a.points, key=lambda p: (["sha256", "md5", "sha1", "sha512"].index(p.op),
                                                p.payload_bytes))
    assert list(a.points) != generated


@pytest.mark.slow
def test_a_drawn_seed_is_kept_in_the_record(tmp_path: Path, target: Target) -> None:
    plan = load_plan(write(tmp_path, """
        [factors]
        op = ["sha256"]
        payload_bytes = [64, 128]
        [[compare]]
        a = "sha256"
        b = { op = "sha256", payload_bytes = 64 }
        """))
    assert plan.seed is None
    with pytest.raises(ValueError, match="seed"):
        expand(plan, target)
    seeded = plan.with_seed()
    assert seeded.seed is not None and seeded.with_seed() is seeded
    back = plan_from_record(seeded.record(), tmp_path / "manifest.json")
    assert back == seeded
    assert back.record()["compare"][0]["b"] == {"op": "sha256", "payload_bytes": 64}
    assert expand(back, target).points == expand(seeded, target).points


# --- errors name the file and the field ---------------------------------------------------

@pytest.mark.parametrize(("text", "field", "problem"), [
    ("seed = 1\nsede = 2\n[factors]\nop = ['sha256']", "sede", "unknown field"),
    ("[factors]\nop = 'sha256'", "factors[0].op", "tuple"),
    ("[factors]\nop = []", "factors[0].op", "at least 1"),
    ("[factors]\nop = ['sha256']\npayload = [1]", "factors[0].payload", "unknown field"),
    ("[factors]\nop = ['sha256']\npayload_bytes = [0, 16]", "factors[0].payload_bytes",
     "positive"),
    ("[factors]\nop = ['sha256', 'sha256']", "factors[0].op", "repeat"),
    ("[[factors]]\nop = ['md5']\n[[factors]]\nop = ['sha1']\nkey_bits = ['x']",
     "factors[1].key_bits[0]", "integer"),
    ("name = 'x'", "factors", "required"),
    ("batch = 0\n[factors]\nop = ['md5']", "batch", "auto"),
    ("[adaptive]\nmin_windows = 5\nmax_windows = 4\n[factors]\nop = ['md5']", "adaptive",
     "below min_windows"),
    ("[adaptive]\nci_target = 2\n[factors]\nop = ['md5']", "adaptive.ci_target", "less than 1"),
    ("[[compare]]\na = 'md5'\n[factors]\nop = ['md5']", "compare[0].b", "required"),
    ("path = 'x'\n[factors]\nop = ['md5']", "path", "unknown field"),
    ("fixture = []\n[factors]\nop = ['md5']", "fixture", "at least one fixture"),
    ("fixture = ['a.toml', 'a.toml']\n[factors]\nop = ['md5']", "fixture", "repeat"),
])
def test_malformed_plans_name_file_and_field(tmp_path: Path, text: str, field: str,
                                             problem: str) -> None:
    path = write(tmp_path, text, "bad.toml")
    with pytest.raises(ConfigError) as err:
        load_plan(path)
    assert err.value.path == str(path)
    assert err.value.field == field
    assert problem in err.value.problem
    assert str(err.value).startswith(f"{path}: {field}: ")


def test_fixtures_resolve_against_the_plan_file(tmp_path: Path) -> None:
    plan = load_plan(write(tmp_path, "fixture = ['a.toml', '/abs/b.toml']\n"
                                     "[factors]\nop = ['md5']"))
    assert plan.fixture_paths() == (tmp_path / "a.toml", Path("/abs/b.toml"))
    assert load_plan(write(tmp_path, "[factors]\nop = ['md5']")).fixture_paths() == ()


def test_unreadable_plans_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such plan file"):
        load_plan(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="not valid TOML") as err:
        load_plan(write(tmp_path, "[factors\nop = 1"))
    assert err.value.path == str(tmp_path / "plan.toml")


def test_target_from_replies() -> None:
    hello = {"board": "nrf52840dk", "cpu_hz": 64000000}
    ops = [OpInfo("sha256", "hash", "software", payload=(1, 1024, 1))]
    t = Target.from_dut(hello, ops)
    assert (t.board, t.cpu_hz, t.cpu_hz_levels) == ("nrf52840dk", 64000000, ())
    assert t.op("sha256", "software") is ops[0] and t.op("sha256", "hardware") is None
    assert Target.from_dut({"cpu_hz": 0}, ops, board="x").cpu_hz is None
