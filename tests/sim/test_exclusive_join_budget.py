"""`serve exclusive prefill`: a request that only decodes, admitted while a decode batch is
planned, joins the batch within the budget the batch left (tests/sim/NOTES.md §73).

Under exclusive prefill a waiting request sees the full budget, since a prefill selected
runs alone. A request whose run is a decode selects no prefill and joins the decode batch
(§10's C); serq let it take its token from the full budget too, so the iteration scheduled
more tokens than its budget: with a budget of 1.5, session 0 decoding and session 1
admitted to decode, 2 tokens (serq's own claim `every iteration of E (tokens <= 1.5)`
failed at 0.01). Both references give the joiner the 0.5 left. Found by the joint family
(g2870 in both dialects: a decode engine of budget 1.5 whose request, its prompt cached,
prefills nothing and decodes).

Hand-worked (h_exclusive_join_budget.sq): session 0 decodes 10 tokens from 0, one per
iteration of 0.01; session 1 arrives at 0.001 and is admitted at the iteration of 0.01,
where session 0 took 1 token: it gets 0.5 a step, its 3 tokens in six iterations, done at
0.07; session 0 ends at 0.1.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from serq.sim.api import compile_program, execute

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "programs" / "reference" / "h_exclusive_join_budget.sq"
ORACLE = HERE.parents[1] / "tests" / "oracle"
CLAIM = "claim budgeted: every iteration of E (tokens <= 1.5);\n"


def _text(claim: bool = False) -> str:
    text = PROGRAM.read_text(encoding="utf-8")
    return text.replace("run {", CLAIM + "run {") if claim else text


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize("fast_forward", [True, False])
def test_a_decode_that_joins_takes_what_the_batch_left(codegen, fast_forward):
    compiled, diagnostics = compile_program(_text(claim=True), "t.sq")
    assert compiled is not None, diagnostics
    report, said = execute(
        compiled, codegen=codegen, fast_forward=fast_forward, check_invariants=True
    )
    assert report is not None, [d.message for d in said]
    done = report.observe("done")
    assert list(zip(done.sessions, done.samples, strict=True)) == [
        (1, pytest.approx(0.07)),
        (0, pytest.approx(0.1)),
    ]
    assert report.stages[0].iterations == 10
    (claim,) = report.claims
    assert (claim.result, claim.checked, claim.failures) == ("holds", 10, 0)


def test_the_joined_batch_is_the_references(same_as_reference):
    same_as_reference(_text(), "h.sq")


def _main_twin() -> str:
    """The program in `fn main`, its amounts in `cost(…)`, as 0.1.4 takes them."""
    body = _text(claim=True)
    body = re.sub(r"run \{[^}]*\}\s*$", "", body)
    body = body.replace("session {", "server {")
    body = body.replace("run gap (0.001 * serial);", "run gap (cost(gap, 0.001 * serial));")
    body = body.replace("hold reqs (1), kv (2) {", "hold reqs (cost(reqs, 1)), kv (cost(kv, 2)) {")
    body = body.replace(
        "run E decode (serial == 0 ? 10 : 3)", "run E decode (cost(E, serial == 0 ? 10 : 3))"
    )
    body = body.replace("  end;\n", "")
    return "fn main() {\n" + body + "}\n"


def test_the_fn_main_twin_is_0_1_4s(tmp_path):
    if str(ORACLE) not in sys.path:
        sys.path.insert(0, str(ORACLE))
    import differential  # noqa: PLC0415

    if not differential.have_014():
        pytest.skip(differential.missing_014())
    path = tmp_path / "h_main.sq"
    path.write_text(_main_twin())
    verdict, detail = differential.compare(str(path), 60, main=True, full=True, horizon=5.0, seed=1)
    assert verdict == "same", detail
    ours = differential.ours(str(path), full=True, horizon=5.0, seed=1)["ok"]
    assert ours["claims"][0]["result"] == "holds"


@pytest.mark.parametrize("dialect", ["items", "main"])
def test_the_joint_program_that_found_it(dialect, tmp_path):
    """joint_family g2870: the decode engine of budget 1.5 whose request, its prompt of
    2.5 cached whole (4 units), prefills -1.5 (no tokens) and decodes 1.5 beside a long
    decode: serq ended the turn one iteration early (0.570245 against 0.579045)."""
    if str(ORACLE) not in sys.path:
        sys.path.insert(0, str(ORACLE))
    import differential  # noqa: PLC0415
    import joint_family  # noqa: PLC0415

    pytest.importorskip("pyserq")
    main = dialect == "main"
    if main and not differential.have_014():
        pytest.skip(differential.missing_014())
    path = tmp_path / f"g2870_{dialect}.sq"
    path.write_text(joint_family.program(2870, dialect))
    settings = {"horizon": 30.0, "seed": 1} if main else {}
    verdict, detail = differential.compare(str(path), 60, main=main, full=True, **settings)
    assert verdict == "same", detail
