"""A run of no work at a stage named by a computed index (tests/sim/NOTES.md §31): the
index is read all the same. serq skipped it, since a run of zero work completes at once,
so `transfer[1 - j] (0) ...` with j = 2 ran on a family of three where pyserq 0.1.4 stops
with the index out of range (serving_family.program(233017, "main")), and an index that
draws made no draw, which moved every later draw of the session's stream. Each program
runs on the generated code (fast-forwarded and stepped) and the interpreter: a plain
stage, a flow over two stages and a step engine's prefill.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from serq.sim.api import compile_program, execute

PROGRAM = """\
stage up : ps(4);
stage link[3] : {kind};
pool kv {{ cap 1000; }}
stage E[3] : step {{ budget 64; cost 0.01; memory kv; }}{share}
workload {{ arrive batch({n}); }}
session {{
  set i = serial - 1;
  {run}
  set x = ~uniform(0, 1);
  observe x = x;
}}
run {{ horizon 10; warmup 0; seed 1; }}
"""
RUNS = {
    "plain": "run link[{index}] ({w});",
    "flow": "run up, link[{index}] ({w});",
    "step": "hold kv (1) {{ run E[{index}] prefill ({w}) growing kv; }}",
}
KINDS = ("ps(1)", "fifo(1)", "delay")  # a flow's stages are ps: ps(1) alone there
WAYS = (("generated", True, True), ("stepped", True, False), ("interpreter", False, True))


def _program(shape: str, kind: str, n: int, index: str, w: str) -> str:
    share = " share maxmin;" if shape == "flow" else ""
    return PROGRAM.format(kind=kind, n=n, share=share, run=RUNS[shape].format(index=index, w=w))


def _runs(text: str) -> list[tuple[str, list, object]]:
    """(path, diagnostics, report JSON and samples of `x` by session) on the three ways."""
    compiled, diagnostics = compile_program(text, "t.sq")
    assert compiled is not None, [d.message for d in diagnostics]
    out = []
    for name, codegen, fast in WAYS:
        report, said = execute(compiled, codegen=codegen, fast_forward=fast)
        whole = None
        if report is not None:
            o = report.observe("x")
            whole = dict(zip(o.sessions, o.samples, strict=True))
        out.append((name, [(d.code, d.span.line, d.message) for d in said], whole))
    return out


# every (shape, stage kind) but a flow's over a stage that is not ps
SHAPE_KINDS = [(sh, k) for sh in RUNS for k in KINDS if sh != "flow" or k == "ps(1)"]


@pytest.mark.parametrize(("shape", "kind"), SHAPE_KINDS)
@pytest.mark.parametrize("w", ("0", "-1", "0 * i"))
def test_an_index_out_of_range_stops_a_run_of_no_work(shape, kind, w):
    text = _program(shape, kind, 3, "i", w)
    for name, said, whole in _runs(text):
        assert whole is None, name
        assert said[0][0] == "E-run" and "index -1 is out of range" in said[0][2], (name, said)
        assert said[0][1] == 8, (name, said)


@pytest.mark.parametrize("shape", RUNS)
def test_an_index_that_draws_draws_for_a_run_of_no_work(shape):
    """The session's later draw is the one it makes after a run of some work: the index's
    draw is made either way (one session, so that no other draws in between)."""
    index = "floor(~uniform(0, 3))"
    none = _program(shape, "ps(1)", 1, index, "0")
    some = _program(shape, "ps(1)", 1, index, "0.5")
    drawn = _runs(some)[0][2]
    assert drawn is not None
    for name, said, whole in _runs(none):
        assert whole == drawn, (name, said)


def test_pyserq_014_stops_there_too(tmp_path, run014):
    """The `fn main` program of a plain run: 0.1.4 refuses the index as serq now does."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
    import differential

    path = tmp_path / "zero.sq"
    path.write_text(
        "fn main() {\n  stage link[3] : ps(1000);\n"
        "  workload { arrive batch(2); session { turn; } }\n"
        "  server { run link[serial - 1] (cost(link, 0)); observe x = serial; }\n}\n"
    )
    theirs = differential.reference(str(path), 60.0, main=True, horizon=10.0, seed=1)
    assert "index `serial - 1` is -1" in theirs.get("error", ""), theirs
    mine = differential.ours(str(path), horizon=10.0, seed=1)
    assert "stage index -1 is out of range" in mine.get("error", ""), mine
    assert json.dumps(mine)  # plain data
