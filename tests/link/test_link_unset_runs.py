"""W-unset against the simulator: every attribute a run reads before its session wrote it is
warned, on random programs of sets, reads, branches, loops, turns, holds and chooses.

The run's attribute arrays record each read of a slot the session has not written (the
built-ins excepted); the warnings name attributes, so the check is per attribute: what a
run reads unset is a subset of what W-unset names (with many sessions and coin-flip
branches, each warned attribute is also read unset by some run, which is checked too)."""

from __future__ import annotations

import random

import pytest

from serq import api, ir
from serq.sim import api as sim_api
from serq.sim import session as sim_session

ATTRS = ("a", "b", "c", "d")
VALUES = ("0", "-1.5", "0.25", "3", "inf")


def _expr(r: random.Random) -> str:
    if r.random() < 0.2:
        return r.choice(VALUES)
    return " + ".join(r.sample(ATTRS, r.randint(1, 2)))


def _block(r: random.Random, depth: int, keys: bool = False) -> str:
    out = []
    for _ in range(r.randint(1, 4)):
        k = r.random()
        if keys and k < 0.15:
            out.append("hold mem (1) { run e decode (2); }")
        elif k < 0.3:
            out.append(f"set {r.choice(ATTRS)} = {_expr(r)};")
        elif k < 0.35:
            out.append(f"set {r.choice(ATTRS)} = {r.choice(VALUES)};")
        elif k < 0.5:
            out.append(f"run s (min(abs({_expr(r)}), 1) * 0.01);")
        elif k < 0.6:
            out.append(f"observe o{r.randint(0, 3)} = {_expr(r)};")
        elif k < 0.75 and depth < 3:
            other = f" else {{ {_block(r, depth + 1, keys)} }}" if r.random() < 0.5 else ""
            out.append(f"branch (~bernoulli(0.5)) {{ {_block(r, depth + 1, keys)} }}{other}")
        elif k < 0.82 and depth < 2:
            out.append(
                f"loop {{ {_block(r, depth + 1, keys)} branch (~bernoulli(0.4)) {{ end; }} }}"
            )
        elif k < 0.9:
            out.append("turn;")
        elif k < 0.95 and depth < 3:
            out.append(
                f"hold kv (min(abs({_expr(r)}), 1) * 0 + 1) {{ {_block(r, depth + 1, keys)} }} "
                f"cache (min(abs({_expr(r)}), 1) * 0);"
            )
        else:
            out.append(f"choose j in 2 by ({_expr(r)}, j);\n set {r.choice(ATTRS)} = j;")
    return "\n  ".join(out)


def random_program(seed: int, keys: bool = False) -> str:
    """A random program; with `keys`, a pool whose queue and a step stage whose serving
    order read attributes, and holds and runs on them."""
    r = random.Random(seed)
    init = " ".join(f"set {x} = {r.choice(VALUES)};" for x in ATTRS if r.random() < 0.25)
    turn = " ".join(f"set {x} = {_expr(r)};" for x in ATTRS if r.random() < 0.3)
    every = " ".join(f"set {x} = 0;" for x in ATTRS)  # each name is an attribute
    head = "stage s : fifo(1);\npool kv { cap 100; }\n"
    if keys:
        head = (
            f"stage s : fifo(1);\npool kv {{ cap 2; queue by ({_expr(r)}, waited); }}\n"
            "pool mem { cap 3; }\n"
            f"stage e : step {{ budget 4; cost 0.01; serve by ({_expr(r)}); memory mem; }}\n"
        )
    return (
        head + f"workload {{ arrive poisson({8 if keys else 2}); init {{ {init} }} "
        f"turn {{ {turn} }} }}\n"
        f"session {{\n  {_block(r, 0, keys)}\n  {every}\n}}\nrun {{ horizon 20; }}\n"
    )


class _Recording(list):
    """A session's attributes that note each read of a slot not written yet."""

    __slots__ = ("written", "reads")

    def __init__(self, n: int, reads: set[int]) -> None:
        super().__init__([0.0] * n)
        self.written = set(range(len(ir.BUILTIN_ATTRS)))
        self.reads = reads

    def __getitem__(self, i):
        if i not in self.written and i != len(self) - 1:  # the last slot is the session
            self.reads.add(i)
        return list.__getitem__(self, i)

    def __setitem__(self, i, v):
        self.written.add(i)
        list.__setitem__(self, i, v)


@pytest.fixture
def unset_reads(monkeypatch) -> set[int]:
    reads: set[int] = set()
    plain = sim_session.Session.__init__

    def recording(self, serial: int, n_attrs: int) -> None:
        plain(self, serial, n_attrs)
        attrs = _Recording(n_attrs + 1, reads)
        list.__setitem__(attrs, n_attrs, self)
        self.attrs = attrs

    monkeypatch.setattr(sim_session.Session, "__init__", recording)
    return reads


@pytest.mark.parametrize("seed", range(40))
def test_what_a_run_reads_unset_is_warned(seed, unset_reads):
    text = random_program(seed)
    diagnostics = api.check_source(text, "random.sq")
    assert [d.message for d in diagnostics if d.code != "W-unset"] == []
    warned = {d.message.split("`")[1] for d in diagnostics}
    compiled, _ = sim_api.compile_program(text, "random.sq", horizon=20)
    assert compiled is not None
    report, ran = sim_api.execute(compiled, fast_forward=False, codegen=False)
    assert report is not None, [d.message for d in ran]
    read = {compiled.program.attrs[i] for i in unset_reads}
    assert read <= warned, text
    assert warned <= read, text  # every path is a coin flip: some session takes it


@pytest.mark.parametrize("seed", range(20))
def test_what_the_scheduler_reads_unset_is_warned(seed, unset_reads):
    # a queue or serving key is read only when sessions wait or share the engine, so
    # here only: what a run reads unset is warned
    text = random_program(seed, keys=True)
    diagnostics = api.check_source(text, "random.sq")
    assert [d.message for d in diagnostics if d.code != "W-unset"] == []
    warned = {d.message.split("`")[1] for d in diagnostics}
    compiled, _ = sim_api.compile_program(text, "random.sq", horizon=20)
    assert compiled is not None
    report, ran = sim_api.execute(compiled, fast_forward=False, codegen=False)
    assert report is not None, [d.message for d in ran]
    assert {compiled.program.attrs[i] for i in unset_reads} <= warned, text
