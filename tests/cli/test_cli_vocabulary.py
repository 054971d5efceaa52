"""`serq run|check|ir` with `--set` (program arguments and lets), `--def` and `--claims-fail`,
and the programs of examples/vocabulary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import serq
from serq.cli import EXIT_CLAIMS, EXIT_ERRORS, EXIT_OK, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[2]
VOCABULARY = sorted((ROOT / "examples" / "vocabulary").glob("*.sq"))
HORIZON = re.compile(r"^// horizon: (\S+)$", re.M)

PROGRAM = """use "std/args";
fn main() {
  let n = args.number("sessions", 2);
  def service(k) { 1 + k }
  stage svc : delay;
  workload { arrive batch(n); }
  server { run svc (cost(svc, service(serial))); observe t = now; }
  claim few: at end (count(t) <= 2);
}
"""


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def program(tmp_path: Path) -> str:
    path = tmp_path / "args.sq"
    path.write_text(PROGRAM, encoding="utf-8")
    return str(path)


def test_set_gives_a_program_argument(capsys, program):
    status, out, _ = _run(
        capsys, "run", program, "--horizon", "50", "--json", "--set", "sessions=3"
    )
    report = json.loads(out)
    assert status == EXIT_OK and report["arrivals"] == 3
    assert report["claims"][0]["result"] == "fails"  # 3 samples: the claim is reported only


def test_claims_fail_exits_non_zero(capsys, program):
    argv = ("run", program, "--horizon", "50", "--claims-fail")
    assert _run(capsys, *argv)[0] == EXIT_OK
    status, out, _ = _run(capsys, *argv, "--set", "sessions=3")
    assert status == EXIT_CLAIMS
    assert "claim `few` fails: at the end 50 (count(t) = 3)" in out


def test_claims_fail_exits_non_zero_beside_a_warning(capsys, tmp_path):
    # a run that warns (W-draw here) reports its claims, and a failing one is status 3
    path = tmp_path / "warned.sq"
    path.write_text(PROGRAM.replace("service(serial)", "~h2(1, 0.5)"), encoding="utf-8")
    status, out, err = _run(
        capsys, "run", str(path), "--horizon", "50", "--claims-fail", "--set", "sessions=3"
    )
    assert status == EXIT_CLAIMS and "W-draw" in out + err
    assert "claim `few` fails: at the end 50 (count(t) = 3)" in out


def test_def_gives_a_body(capsys, program):
    status, out, _ = _run(capsys, "run", program, "--horizon", "50", "--json", "--def", "service=5")
    assert status == EXIT_OK and json.loads(out)["observes"]["t"]["mean"] == 5


@pytest.mark.parametrize("command", ["run", "check", "ir"])
def test_unknown_names_are_usage_errors(capsys, program, command):
    extra = ["--horizon", "50"] if command == "run" else []
    status, _, err = _run(capsys, command, program, *extra, "--set", "session=3")
    assert status == EXIT_USAGE and "did you mean `sessions`?" in err
    status, _, err = _run(capsys, command, program, *extra, "--def", "servce=1")
    assert status == EXIT_USAGE and "did you mean `service`?" in err


def test_check_and_ir_take_the_overrides(capsys, program):
    assert _run(capsys, "check", program, "--set", "sessions=4", "--def", "service=k")[0] == EXIT_OK
    status, out, _ = _run(capsys, "ir", program, "--set", "sessions=4", "--compact")
    assert status == EXIT_OK and json.loads(out)["arrival"]["Batch"]["size"] == 4
    assert _run(capsys, "check", program, "--set", "sessions=1 +")[0] == EXIT_USAGE


def test_help_says_what_set_gives(capsys):
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "args.number" in out and "--def" in out and "--claims-fail" in out


def test_a_claim_link_error_has_a_position(capsys, tmp_path):
    path = tmp_path / "bad.sq"
    path.write_text(
        "fn main() {\n  stage s : delay;\n  claim c: every iteration of t (now > 0);\n}\n",
        encoding="utf-8",
    )
    status, _, err = _run(capsys, "check", str(path))
    assert status == EXIT_ERRORS and "unknown stage `t`" in err and "bad.sq:3:" in err


@pytest.mark.parametrize("path", VOCABULARY, ids=lambda p: p.stem)
def test_vocabulary_examples_run_and_their_claims_hold(path):
    horizon = float(HORIZON.search(path.read_text(encoding="utf-8")).group(1))
    report = serq.run(serq.compile(str(path), horizon=horizon))
    assert report.claims and not report.claims_failed(), report.claims


def test_sarathi_example_is_the_reference(run014):
    path = ROOT / "examples" / "vocabulary" / "sarathi_claims.sq"
    child = (
        "a = json.loads(sys.stdin.read()); r = pyserq.run(pyserq.compile(a[0], horizon=a[1]))\n"
        "print(r.json().replace(chr(10), ' '))"
    )
    theirs = run014(child, [str(path), 20])
    mine = json.loads(serq.run(serq.compile(str(path), horizon=20)).json())
    assert mine["claims"] == theirs["claims"]
    for key in ("arrivals", "ended", "turns"):
        assert mine[key] == theirs[key], key
    for name, o in theirs["observes"].items():  # the same samples, summed in another order
        for stat, value in o.items():
            assert mine["observes"][name][stat] == pytest.approx(value, rel=1e-12), (name, stat)
