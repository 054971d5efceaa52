"""The flow network's incremental rates are the whole recomputation's, to the bit.

`FlowNetwork.reschedule` works the share out over the live routes, leaving out the
stages of capacity inf, sets a flow's rate only when its route's changes and sums and
reports only the stages a change touched; `flows.FROM_SCRATCH` switches back to
recomputing every flow's rate over every stage and reporting every stage at each change.
A family of drawn flow programs (both shares; one link array and several; capacities inf,
fractions, thousandths and 7e5; flows of one, two and three stages beside single-stage
runs; holds around them; works drawn, constant, zero and inf) must give the same report,
every sample and gauge point included, both ways, and the same on the interpreter
(`codegen=False`, where holds around flows are not written inline).
"""

from __future__ import annotations

import random
import sys
import warnings
from pathlib import Path

import pytest

from serq.sim import flows
from serq.sim.api import compile_program, execute

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))

from differential import _whole  # noqa: E402

CAPACITIES = ["inf", "0.5", "1/3", "2", "1e-3", "7e5", "1", "3.7"]


def program(k: int) -> str:
    """The `k`th drawn flow program."""
    rng = random.Random(k)
    n_up, n_link = rng.randint(1, 2), rng.randint(1, 3)
    lines = [
        f"share {rng.choice(['maxmin', 'bottleneck'])};",
        f"stage up[{n_up}] : ps({rng.choice(CAPACITIES)});",
        f"stage link[{n_link}] : ps({rng.choice(CAPACITIES)});",
        f"stage x[1] : ps({rng.choice(CAPACITIES)});",
        "stage think : delay;",
    ]
    pools = rng.random() < 0.5
    if pools:
        lines.append(f"pool kv[2] {{ cap {rng.choice([3, 10, 100])}; }}")
    lines.append("gauge g = queue(link[0]) + busy(up[0]) + queue(x[0]);")
    rate = rng.choice(["0.5", "1", "3", "6"])
    lines.append(f"workload {{ arrive poisson({rate}); }}")

    def work() -> str:
        return rng.choice(["~exp(1)", "~exp(0.1)", "~exp(1)", "1/3", "0.5", "0", "2"])

    def run() -> str:
        shape = rng.random()
        if shape < 0.45:
            return f"run up[i], link[j] ({work()});"
        if shape < 0.65:
            return f"run up[i], link[j], x[0] ({work()});"
        if shape < 0.8:
            return f"run link[j] ({work()});"
        if shape < 0.9:
            return f"run link[j], x[0] ({work()});"
        return f"run up[i] ({work()});"

    body = [
        f"set i = floor(~uniform(0, {n_up}));",
        f"set j = floor(~uniform(0, {n_link}));",
        "set t0 = now;",
    ]
    runs = [run() for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.3:
        runs.insert(1, "run think (~exp(1));")
    if rng.random() < 0.4:
        runs = [f"branch with (0.5) {{ {runs[0]} }} else {{ {run()} }}", *runs[1:]]
    if not any("," in r for r in runs):  # a run over several stages, for `share`
        runs.append(f"run up[i], link[j] ({work()});")
    if rng.random() < 0.05:
        runs.append("run up[i], link[j] (inf);")
    if pools:
        units = rng.choice([1, 2, 5])
        body.append("choose p in 2 by (free(kv[p]) > 0 ? 0 : 1, queued(kv[p]));")
        body.append(f"hold kv[p] ({units}) {{ {' '.join(runs)} }}")
    else:
        body += runs
    body.append("observe sojourn = now - t0;")
    lines.append("session {\n  " + "\n  ".join(body) + "\n}")
    horizon = rng.choice([30, 100, 200])
    lines.append(f"run {{ horizon {horizon}; warmup {rng.choice([0, 10])}; seed {k + 1}; }}")
    return "\n".join(lines) + "\n"


def _run(text: str, codegen: bool, from_scratch: bool, monkeypatch) -> object:
    monkeypatch.setattr(flows, "FROM_SCRATCH", from_scratch)
    compiled, diagnostics = compile_program(text, "drawn.sq")
    assert compiled is not None, [d.message for d in diagnostics]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report, said = execute(compiled, codegen=codegen)
    return _whole(report, True), [(d.code, d.message) for d in said]


@pytest.mark.parametrize("k", range(60))
def test_incremental_rates_are_the_whole_recomputation(k, monkeypatch):
    text = program(k)
    whole = _run(text, True, True, monkeypatch)
    assert _run(text, True, False, monkeypatch) == whole, text
    assert _run(text, False, False, monkeypatch) == whole, text


def test_family_has_flows_that_share():
    """The family makes flows meet: most programs compile and run, with both shares."""
    shares = {program(k).split(";")[0] for k in range(60)}
    assert shares == {"share maxmin", "share bottleneck"}
