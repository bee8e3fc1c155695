"""Bad input over every command (issue 11): each case exits 2 with one line on stderr,
``rig: error: ...``, naming the file and field (or the option), with no traceback, and
leaves every file as it was.

The rig runs in this process through its console-script entry point (``cli.app.main``), so
what is asserted is what an operator sees. No case may reach a bench: the checks happen
where the input is read.
"""
from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from support.bad_input import GOOD_FIXTURE, GOOD_PLAN, assert_refused
from support.paths import ROOT
from support.fixtures import fixture_text
from support.synthetic import make_run


CSV_HEAD = "time_s,current_a,voltage_v,trigger\n"
CSV_ROWS = "".join(f"{i * 1e-5:.5f},2e-3,3.0,{int(100 <= i < 200)}\n" for i in range(400))


# (case id, files to write {name: text or bytes}, argv; FIX, PLAN, CSV, RUN name files)
FIXTURE_CASES = [
    ("offset-nan", fixture_text(**{"sim.power.offset_a": math.nan}), "sim.power.offset_a: input should be a finite number"),
    ("noise-inf", fixture_text(**{"sim.power.noise_a": math.inf}), "sim.power.noise_a: input should be a finite number"),
    ("supply-negative", fixture_text(**{"sim.power.supply_v": -3}), "sim.power.supply_v: input should be greater than 0"),
    ("seed-negative", fixture_text(**{"sim.seed": -1}), "sim.seed: input should be greater than or equal to 0"),
    ("unknown-key", fixture_text(**{"dut.timout_s": 1}), "dut.timout_s: unknown field"),
    ("unknown-kind", fixture_text(**{"instrument.kind": "ppk3"}), "instrument.kind: unknown kind 'ppk3'"),
    ("bad-link", fixture_text(**{"dut.link": "usb"}), "dut.link: input should be"),
    ("supply-range", fixture_text(**{"instrument.supply_v": 7.5}), "instrument.supply_v: must be between 0.8 and 5.0 V"),
    ("latency-zero", fixture_text(**{"sim.latency_s": 0}), "sim.latency_s: input should be greater than 0"),
    ("guard-negative", fixture_text(**{"windows.guard_s": -1.0e-3}), "windows.guard_s: input should be greater than or equal to 0"),
    ("baseline-zero", fixture_text(**{"windows.baseline_s": 0}), "windows.baseline_s: input should be greater than 0"),
    ("reps-zero", fixture_text(**{"measure.reps": 0}), "measure.reps: input should be greater than or equal to 1"),
    ("edge-error-nan", fixture_text(**{"measure.max_edge_error": math.nan}), "measure.max_edge_error: input should be a finite number"),
    ("pre-too-short", fixture_text(**{"measure.pre_s": 0.001}), "must hold windows.guard_s + windows.baseline_s"),
    ("trigger-bit", fixture_text(**{"instrument.trigger_bit": 9}), "instrument.trigger_bit"),
    ("gain-error-range", fixture_text(**{"sim.power.gain_error": 1.5}), "sim.power.gain_error: input should be less than 1"),
    ("tolerance-range", fixture_text(**{"calibration.reference_tolerance": 0.7}), "calibration.reference_tolerance: input should be less than 0.5"),
    ("duty-range", fixture_text(**{"sim.power.loads": [{"amplitude_a": 1e-3, "period_s": 0.1, "duty": 2}]}), "sim.power.loads[0].duty: input should be less than or equal to 1"),
    ("not-toml", "name = \n", "not valid TOML"),
    ("wrong-type", fixture_text(**{"measure.reps": "ten"}), "measure.reps: input should be a valid integer"),
]

PLAN_CASES = [
    ("op-with-space", 'op = ["sha 256"]', "factors[0].op: op 'sha 256' is not a valid name"),
    ("op-non-ascii", 'op = ["shä256"]', "factors[0].op: op 'shä256' is not a valid name"),
    ("op-uppercase", 'op = ["SHA256"]', "factors[0].op: op 'SHA256' is not a valid name"),
    ("payload-zero", 'op = ["sha256"]\npayload_bytes = [0]', "factors[0].payload_bytes: levels must be positive integers"),
    ("key-bits-negative", 'op = ["aes-ecb-encrypt"]\nkey_bits = [-128]', "factors[0].key_bits: levels must be positive integers"),
    ("empty-ops", 'op = []', "factors[0].op: tuple should have at least 1 item"),
    ("curve-word", 'op = ["ecdsa-sign"]\ncurve = ["p 256"]', "factors[0].curve: curve 'p 256' is not a valid name"),
    ("unknown-factor", 'op = ["sha256"]\nkeybits = [128]', "factors[0].keybits: unknown field"),
    ("repeated-level", 'op = ["sha256", "sha256"]', "factors[0].op: levels repeat"),
]

PLAN_HEAD_CASES = [
    ("repetitions-zero", "repetitions = 0", "repetitions: input should be greater than or equal to 1"),
    ("seed-text", 'seed = "x"', "seed: input should be a valid integer"),
    ("cooldown-negative", "cooldown_s = -1.0", "cooldown_s: input should be greater than or equal to 0"),
    ("cooldown-inf", "cooldown_s = inf", "cooldown_s: input should be a finite number"),
    ("batch-zero", "batch = 0", "batch: must be 'auto' or between 1 and 10^9 ops"),
    ("ci-target-nan", "[adaptive]\nci_target = nan", "adaptive.ci_target: input should be a finite number"),
    ("windows-inverted", "[adaptive]\nmin_windows = 5\nmax_windows = 2", "max_windows (2) is below min_windows"),
    ("missing-fixture", 'fixture = "../nowhere/x.toml"', "no such fixture file"),
]


OPTION_CASES = [
    ("op-space", ["run", "--op", "sha256 payload_bytes=128"], "op 'sha256 payload_bytes=128' is not a valid name"),
    ("op-newline", ["run", "--op", "sha256\nhello"], "is not a valid name"),
    ("op-non-ascii", ["run", "--op", "shä256"], "op 'shä256' is not a valid name"),
    ("reps-zero", ["run", "--op", "sha256", "--reps", "0"], "'--reps'"),
    ("batch-zero", ["run", "--op", "sha256", "--batch", "0"], "--batch"),
    ("batch-word", ["run", "--op", "sha256", "--batch", "lots"], "--batch"),
    ("payload-negative", ["run", "--op", "sha256", "--payload-bytes", "-1"], "payload_bytes must be >= 0"),
    ("key-bits-zero", ["run", "--op", "aes-ecb-encrypt", "--key-bits", "0"], "key_bits must be >= 1"),
    ("curve-word", ["run", "--op", "ecdsa-sign", "--curve", "p 256"], "curve 'p 256' is not a valid name"),
    ("voltage-nan", ["analyze", "CSV", "--voltage", "nan"], "voltage must be a finite number > 0 V, got nan"),
    ("voltage-negative", ["analyze", "CSV", "--voltage", "-3"], "voltage must be a finite number > 0 V, got -3.0"),
    ("voltage-inf", ["analyze", "CSV", "--voltage", "inf"], "voltage must be a finite number > 0 V, got inf"),
    ("shunt-zero", ["analyze", "CSV", "--shunt-ohms", "0"], "c.csv: shunt resistance must be > 0 ohm, got 0.0"),
    ("shunt-nan", ["analyze", "CSV", "--shunt-ohms", "nan"], "c.csv: shunt resistance must be > 0 ohm, got nan"),
    ("scale-inf", ["analyze", "CSV", "--current-scale", "inf"], "c.csv: current scale must be a finite number"),
    ("level-nan", ["analyze", "CSV", "--trigger", "current_a", "--trigger-level", "nan"], "c.csv: trigger 'current_a'"),
    ("hysteresis-negative", ["analyze", "CSV", "--trigger-hysteresis", "-1"], "'--trigger-hysteresis'"),
    ("guard-negative", ["analyze", "CSV", "--guard", "-1"], "guard_s must be a finite number >= 0 s"),
    ("baseline-nan", ["analyze", "CSV", "--baseline", "nan"], "baseline_s must be a finite number"),
    ("min-samples-zero", ["analyze", "CSV", "--min-samples", "0"], "min_samples must be >= 1"),
    ("analyze-batch-zero", ["analyze", "CSV", "--batch", "0"], "'--batch'"),
    ("probe-alone", ["sweep", "PLAN", "--probe"], "--probe works with --dry-run"),
    ("resume-overwrite", ["sweep", "--resume", "RUN", "--overwrite"], "--resume continues a run"),
    ("dry-run-out", ["sweep", "PLAN", "--dry-run", "--out", "elsewhere"], "--dry-run writes nothing"),
    ("retry-without-resume", ["sweep", "PLAN", "--retry-failed"], "--retry-failed works with --resume"),
    ("resume-and-plan", ["sweep", "PLAN", "--resume", "RUN"], "--resume takes the run directory only"),
    ("no-plan", ["sweep"], "give a PLAN (or --resume RUN_DIR)"),
    ("unknown-option", ["run", "--opp", "sha256"], "No such option: --opp"),
    ("unknown-command", ["runn"], "No such command 'runn'"),
    ("flag-with-value", ["ops", "--json", "true"], "unexpected extra argument"),
]

CAPTURE_CASES = [
    ("csv-nan", "c.csv", CSV_HEAD + CSV_ROWS.replace("0.00100,2e-3", "0.00100,nan", 1), "line 102: column 'current_a' has 'nan', not a finite number"),
    ("csv-word", "c.csv", CSV_HEAD + CSV_ROWS.replace("0.00100,2e-3", "0.00100,lots", 1), "column 'current_a' has 'lots'"),
    ("csv-no-trigger", "c.csv", "time_s,current_a,voltage_v\n0,1,3\n", "trigger"),
    ("csv-empty", "c.csv", "", "c.csv"),
    ("csv-binary", "c.csv", b"\x00\x01\x02PAR1" * 50, "c.csv"),
    ("missing", "absent.csv", None, "absent.csv"),
    ("sr-garbage", "c.sr", b"PK\x03\x04 not really a zip" * 10, "c.sr"),
    ("ppk2-garbage", "c.ppk2", b"\xff" * 7, "c.ppk2"),
    ("ppk2raw-garbage", "c.ppk2raw", b"\xff" * 7, "c.ppk2raw"),
]

RUN_CASES = [
    ("no-manifest", None, "no manifest.json: not a run directory"),
    ("manifest-list", "[]", "manifest.json: not a run manifest (a JSON object expected, found list)"),
    ("manifest-empty", "{}", "manifest.json: not a run manifest of this rig"),
    ("manifest-not-json", "{not json", "manifest.json is not valid JSON"),
    ("manifest-binary", b"\xff\xfe\x00", "manifest.json is not valid JSON"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in FIXTURE_CASES],
                         ids=[c[0] for c in FIXTURE_CASES])
def test_a_bad_fixture(tmp_path: Path, text: str, expected: str,
                       capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bench.toml").write_text(text, encoding="utf-8")
    for argv in (["run", "--op", "sha256", "--payload-bytes", "16", "-f", "bench.toml"],
                 ["calibrate", "zero", "--yes", "-f", "bench.toml"]):
        assert_refused(argv, f"bench.toml: {expected}" if ":" in expected.split()[0] else expected,
                        tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize(("body", "expected"), [c[1:] for c in PLAN_CASES],
                         ids=[c[0] for c in PLAN_CASES])
def test_a_bad_plan_factor(tmp_path: Path, body: str, expected: str,
                           capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    plan = GOOD_PLAN.format(fixture=ROOT / "fixtures" / "sim.toml").split("[[factors]]")[0]
    (tmp_path / "plan.toml").write_text(f"{plan}[[factors]]\n{body}\n", encoding="utf-8")
    assert_refused(["sweep", "plan.toml", "--dry-run"], f"plan.toml: {expected}", tmp_path,
                    capsys, monkeypatch)


@pytest.mark.parametrize(("head", "expected"), [c[1:] for c in PLAN_HEAD_CASES],
                         ids=[c[0] for c in PLAN_HEAD_CASES])
def test_a_bad_plan_setting(tmp_path: Path, head: str, expected: str,
                            capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    settings = {"seed": "1", "fixture": f'"{ROOT / "fixtures" / "sim.toml"}"'}
    adaptive = {"min_windows": "2", "max_windows": "3"}
    key, _, value = head.partition(" = ")
    if head.startswith("[adaptive]"):
        adaptive = {}
        extra = head.removeprefix("[adaptive]\n")
    else:
        settings[key] = value
        extra = ""
    top = "".join(f"{k} = {v}\n" for k, v in settings.items())
    adapt = "".join(f"{k} = {v}\n" for k, v in adaptive.items()) + (extra + "\n" if extra else "")
    (tmp_path / "plan.toml").write_text(
        f"{top}[adaptive]\n{adapt}[[factors]]\nop = [\"sha256\"]\npayload_bytes = [64]\n",
        encoding="utf-8")
    assert_refused(["sweep", "plan.toml", "--dry-run"], expected, tmp_path, capsys, monkeypatch)


@pytest.mark.slow
def test_an_op_not_in_the_catalogue_is_refused_with_the_nearest_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    plan = GOOD_PLAN.format(fixture=ROOT / "fixtures" / "sim.toml")
    (tmp_path / "plan.toml").write_text(plan.replace('"sha256"', '"sha265"'), encoding="utf-8")
    assert_refused(["sweep", "plan.toml", "--dry-run"],
                    "plan.toml: factors.op: 'sha265' is not in the firmware's catalogue on host; "
                    "did you mean sha256", tmp_path, capsys, monkeypatch)


def test_a_plan_cannot_run_a_fixture_from_an_untrusted_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "bench.toml").write_text(GOOD_FIXTURE, encoding="utf-8")
    plan = GOOD_PLAN.format(fixture="elsewhere/bench.toml")
    (tmp_path / "plan.toml").write_text(plan, encoding="utf-8")
    assert_refused(["sweep", "plan.toml", "--dry-run"],
                    "plan.toml: fixture: elsewhere/bench.toml runs a program", tmp_path, capsys,
                    monkeypatch)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A good capture, plan and run, shared by the option cases (each checks that it
    changed nothing)."""
    path = tmp_path_factory.mktemp("workspace")
    (path / "c.csv").write_text(CSV_HEAD + CSV_ROWS, encoding="utf-8")
    (path / "plan.toml").write_text(GOOD_PLAN.format(fixture=ROOT / "fixtures" / "sim.toml"),
                                    encoding="utf-8")
    make_run(path / "run", reps=1, n_windows=2)
    return path


@pytest.mark.parametrize(("argv", "expected"), [c[1:] for c in OPTION_CASES],
                         ids=[c[0] for c in OPTION_CASES])
def test_a_bad_option(workspace: Path, argv: list[str], expected: str,
                      capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    names = {"CSV": "c.csv", "PLAN": "plan.toml", "RUN": "run"}
    assert_refused([names.get(a, a) for a in argv], expected, workspace, capsys, monkeypatch)


@pytest.mark.parametrize(("name", "content", "expected"), [c[1:] for c in CAPTURE_CASES],
                         ids=[c[0] for c in CAPTURE_CASES])
def test_a_bad_capture(tmp_path: Path, name: str, content: str | bytes | None, expected: str,
                       capsys: pytest.CaptureFixture[str],
                       monkeypatch: pytest.MonkeyPatch) -> None:
    if isinstance(content, bytes):
        (tmp_path / name).write_bytes(content)
    elif content is not None:
        (tmp_path / name).write_text(content, encoding="utf-8")
    assert_refused(["analyze", name], expected, tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize(("manifest", "expected"), [c[1:] for c in RUN_CASES],
                         ids=[c[0] for c in RUN_CASES])
def test_a_bad_run_directory(tmp_path: Path, manifest: str | bytes | None, expected: str,
                             capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    run.mkdir()
    if isinstance(manifest, bytes):
        (run / "manifest.json").write_bytes(manifest)
    elif manifest is not None:
        (run / "manifest.json").write_text(manifest, encoding="utf-8")
    for argv in (["report", "run"], ["sweep", "--resume", "run"]):
        assert_refused(argv, f"run: {expected}", tmp_path, capsys, monkeypatch)


def test_a_corrupt_table_of_a_run_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    make_run(tmp_path / "run", reps=1, n_windows=2)
    segment = next((tmp_path / "run" / "points.parquet").iterdir())
    segment.write_bytes(b"PAR1 truncated")
    assert_refused(["report", "run"], f"{segment.name}", tmp_path, capsys, monkeypatch)
    shutil.rmtree(tmp_path / "run")


@pytest.mark.slow
def test_a_bad_calibration_record_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cal.json").write_text("{not json", encoding="utf-8")
    assert_refused(["calibrate", "show", "cal.json", "-f", str(ROOT / "fixtures" / "sim.toml")],
                    "cal.json: corrupt calibration record: not valid JSON", tmp_path, capsys,
                    monkeypatch)
