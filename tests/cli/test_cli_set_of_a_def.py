"""`--set NAME=...` of a `def` points to `--def`.

`serq sweep main.sq --set twice=1,2`, `twice` a `def` of the library main.sq uses, said
"unknown --set argument or constant `twice`" and listed the lets: true, but the user
wanted to vary the def, which `--def twice=EXPR` does. It now says `twice` is a `def`
and gives the `--def` to write (status 2, a usage error, as before).
"""

from __future__ import annotations

import pytest

import serq
from serq import cli

PROGRAM = """use "lib.sq";
let rate = 0.5;
stage s : fifo(1);
workload { arrive poisson(rate); }
session { run s (~exp(1)); observe x = twice(1) + own(1); }
run { horizon 5; }
def own(x) = x;
"""


@pytest.fixture
def program(tmp_path):
    (tmp_path / "lib.sq").write_text("def twice(x) = 2 * x;\n")
    (tmp_path / "main.sq").write_text(PROGRAM)
    return str(tmp_path / "main.sq")


@pytest.mark.parametrize("name", ["twice", "own"])
@pytest.mark.parametrize("command", ["run", "sweep", "check"])
def test_set_of_a_def(capsys, program, name, command):
    argv = [command, program, "--set", f"{name}=1"] + (
        ["--jobs", "1"] if command == "sweep" else []
    )
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"`{name}` is a `def`, not a --set argument or constant" in err, err
    assert f"`--def {name}=EXPR` replaces its body" in err, err


def test_the_api_says_so_too(program):
    with pytest.raises(ValueError, match="`twice` is a `def`"):
        serq.compile(program, sets={"twice": 1})


def test_a_name_that_is_nothing_is_still_unknown(capsys, program):
    assert cli.main(["run", program, "--set", "rat=1"]) == 2
    assert "unknown --set argument or constant `rat`" in capsys.readouterr().err
