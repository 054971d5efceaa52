"""`--set` and `--def` fail the same way in every command that takes them: a name given
twice is one `E-name-clash` naming both occurrences, and an override that cannot be
applied is a usage error (status 2) in `check`, `ir`, `run` (with `--emit-python` too)
and `sweep`; `--help` says so. `sweep --def` runs what `run --def` runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serq.cli import EXIT_ERRORS, EXIT_USAGE, main

PROGRAM = """let lambda = 0.8;
def svc(x) { x * 2 }
def note() { observe z = 1; }
stage server : fifo(1);
workload { arrive poisson(lambda); }
session {
  set arrived = now;
  run server (~exp(svc(1)));
  note();
  observe sojourn = now - arrived;
}
run { horizon 100; warmup 10; seed 1; }
"""

# every command that takes `--set`, with what it needs to stop early and quietly
SET_COMMANDS = [("check",), ("ir",), ("run",), ("run", "--emit-python"), ("sweep", "--jobs", "1")]
DEF_COMMANDS = SET_COMMANDS  # sweep takes --def too, the same at every point


@pytest.fixture
def program(tmp_path: Path) -> str:
    path = tmp_path / "p.sq"
    path.write_text(PROGRAM, encoding="utf-8")
    return str(path)


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main([*argv, "--color", "never"])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("command", SET_COMMANDS, ids=" ".join)
def test_a_set_given_twice_is_one_usage_error_naming_both(capsys, program, command):
    argv = (command[0], program, *command[1:], "--set", "lambda=0.5", "--set", "lambda=0.6")
    status, out, err = _run(capsys, *argv)
    assert status == EXIT_USAGE, err
    assert out == ""  # nothing ran, nothing printed
    assert err.count("error[E-name-clash]") == 1
    assert (
        "error[E-name-clash]: `--set lambda` is given twice: `lambda=0.5` and `lambda=0.6`\n"
        " --> <--set lambda>:1:24\n"
    ) in err
    assert "--set lambda=0.5 --set lambda=0.6" in err and "first given here" in err


@pytest.mark.parametrize("command", DEF_COMMANDS, ids=" ".join)
def test_a_def_given_three_times_names_every_occurrence(capsys, program, command):
    argv = (command[0], program, *command[1:])
    argv += ("--def", "svc=x", "--def", "svc=2*x", "--def", "svc=3")
    status, _, err = _run(capsys, *argv)
    assert status == EXIT_USAGE, err
    assert "`--def svc` is given 3 times: `svc=x`, `svc=2*x` and `svc=3`" in err
    assert "first given here" in err and "given again here" in err


def test_check_json_lists_the_repeated_name(capsys, program):
    status, out, _ = _run(capsys, "check", program, "--json", "--set", "lambda=1", "--set", "lambda=1")
    (found,) = json.loads(out)
    assert status == EXIT_USAGE and found["code"] == "E-name-clash"
    assert [label["text"] for label in found["labels"]] == ["first given here"]


def test_different_names_are_not_repeated(capsys, program):
    status, _, err = _run(capsys, "check", program, "--set", "lambda=0.5", "--def", "svc=x")
    assert status == 0, err


BAD_DEFS = [
    ("nope=1", "unknown --def `nope`"),  # a name not declared
    ("svc=(", "expected an expression"),  # does not parse
    ("svc=y", "unknown name `y`"),  # reads a parameter `svc` does not have
    ("svc=server", "`server` is a stage, not a value"),  # the wrong kind of value
    ("note=1", "`def note` is statements"),  # the wrong kind of definition
]


@pytest.mark.parametrize("command", DEF_COMMANDS, ids=" ".join)
@pytest.mark.parametrize(("value", "message"), BAD_DEFS, ids=[v for v, _ in BAD_DEFS])
def test_a_bad_def_is_a_usage_error_in_every_command(capsys, program, command, value, message):
    status, _, err = _run(capsys, command[0], program, *command[1:], "--def", value)
    assert status == EXIT_USAGE, err
    assert message in err
    assert f" --> <--def {value.partition('=')[0]}>:1:" in err  # in the option's text


BAD_SETS = [
    ("nope=1", "unknown --set argument or constant `nope`"),
    ("lambda=(", "expected an expression"),
    ("lambda=now", "`now` is a context variable, not a constant"),
    ("lambda=server", "unknown name `server`"),
]


@pytest.mark.parametrize("command", SET_COMMANDS, ids=" ".join)
@pytest.mark.parametrize(("value", "message"), BAD_SETS, ids=[v for v, _ in BAD_SETS])
def test_a_bad_set_is_a_usage_error_in_every_command(capsys, program, command, value, message):
    status, _, err = _run(capsys, command[0], program, *command[1:], "--set", value)
    assert status == EXIT_USAGE, err
    assert message in err


@pytest.mark.parametrize("command", SET_COMMANDS, ids=" ".join)
def test_a_set_value_out_of_its_domain_is_the_programs_error(capsys, program, command):
    status, _, err = _run(capsys, command[0], program, *command[1:], "--set", "lambda=-1")
    assert status == EXIT_ERRORS, err
    assert "`--set lambda=-1` makes it so" in err


@pytest.mark.parametrize("command", ["check", "ir", "run", "sweep"])
def test_help_says_the_exit_status_of_a_bad_override(capsys, command):
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "2 a usage error" in text
    assert "a --set or --def that cannot be applied (a name given twice" in text


ARGUMENT = """use "std/args";
let rate = args.number("lam", 0.5);
stage server : fifo(1);
workload { arrive poisson(rate); }
session { set a = now; run server (~exp(1)); observe s = now - a; }
run { horizon 100; warmup 10; seed 1; }
"""


@pytest.mark.parametrize("command", SET_COMMANDS, ids=" ".join)
def test_a_let_given_by_its_argument_and_its_name_is_a_usage_error(capsys, tmp_path, command):
    # `--set lam=0.6 --set rate=0.7` both gave `let rate`: the last one won, silently
    path = tmp_path / "argument.sq"
    path.write_text(ARGUMENT, encoding="utf-8")
    argv = (command[0], str(path), *command[1:], "--set", "lam=0.6", "--set", "rate=0.7")
    status, out, err = _run(capsys, *argv)
    assert status == EXIT_USAGE and out == "", err
    assert "error[E-name-clash]: `--set lam` and `--set rate` both give `let rate`" in err
    assert "first given here" in err


def test_sweep_def_runs_what_run_def_runs(capsys, program, tmp_path):
    out = tmp_path / "r.json"
    argv = ("sweep", program, "--set", "lambda=0.3", "--def", "svc=x/4", "--jobs", "1")
    status, _, err = _run(capsys, *argv, "--out", str(out))
    assert status == 0, err
    swept = json.loads(out.read_text())["points"][0]["sojourn"]
    status, report, err = _run(capsys, "run", program, "--set", "lambda=0.3", "--def", "svc=x/4", "--json")
    assert status == 0, err
    assert swept == json.loads(report)["observes"]["sojourn"]["mean"]
    status, _, _ = _run(capsys, "sweep", program, "--set", "lambda=0.3", "--jobs", "1", "--out", str(out))
    assert json.loads(out.read_text())["points"][0]["sojourn"] != swept  # the def did something
