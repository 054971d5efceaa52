"""From Python, an override or a run setting the program cannot take is refused in the
words the caller wrote: `arrivals=-1`, `sets["lambda"] = -1`, `defs`, `trace=`, never the
command line's `--arrivals -1` or `--set lambda=-1` (NOTES §64 left it, §66); the command
line keeps its options' names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import serq

ROOT = Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")

CASES = [
    ({"arrivals": -1}, ["-1 arrivals (with `arrivals=-1`)"]),
    ({"horizon": -5.0}, ["the horizon is -5 (with `horizon=-5`)"]),
    ({"warmup": 1e9}, ["(with `warmup=1000000000`)"]),
    ({"seed": -1}, ["`seed=-1`"]),
    (
        {"sets": {"lambda": -1}},
        ['`sets["lambda"] = -1` makes it so', 'give `sets["lambda"]` a value'],
    ),
    ({"sets": {"lambda": "0/0"}}, ['`sets["lambda"]` makes it so', '<sets["lambda"]>:1:14']),
    ({"sets": {"lambda": float("nan")}}, ['is NaN: `sets["lambda"]` makes it so']),
    (
        {"sets": {"nope": 1}},
        ["unknown `sets` argument or constant `nope`", "`sets` gives a program argument"],
    ),
    ({"sets": {"lambda": "1 +"}}, ['<sets["lambda"]>']),
    ({"defs": {"f": "1"}}, ["unknown `defs` name `f`", "`defs` replaces the body"]),
    ({"trace": "x.csv"}, ["`trace='x.csv'` gives a trace to replay", "`trace=` replaces"]),
]


@pytest.mark.parametrize(("given", "words"), CASES)
def test_compile_names_its_own_arguments(given: dict, words: list[str]) -> None:
    with pytest.raises(ValueError) as error:
        serq.compile(MM1, **given)
    message = str(error.value)
    for word in words:
        assert word in message
    assert not re.search("--[a-z]", message), message


def test_sweep_names_its_own_arguments() -> None:
    with pytest.raises(ValueError) as error:
        serq.sweep(MM1, sets={"lambda": [0.5, -1]}, arrivals=-3, jobs=1)
    message = str(error.value)
    assert '`sets["lambda"] = -1` makes it so' in message
    assert "(with `arrivals=-3`)" in message
    assert not re.search("--[a-z]", message), message
    with pytest.raises(ValueError, match=r'sets\["lambda"\]: a range is START:STOP:STEP'):
        serq.sweep(MM1, sets={"lambda": "0.5:x"}, jobs=1)


def test_the_command_line_keeps_its_options() -> None:
    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "serq.cli", "run", MM1, *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return done.stderr

    assert "(with `--warmup 1000000000`)" in run("--warmup", "1e9")
    assert "`--set lambda=-1` makes it so" in run("--set", "lambda=-1")
    assert "unknown --set argument or constant `nope`" in run("--set", "nope=1")
    assert "<--set nope>" in run("--set", "nope=1")
    assert "`--trace x.csv` gives a trace" in run("--trace", "x.csv")
