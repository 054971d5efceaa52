"""A sample of the differential mutation search (tests/oracle/mutants.py) in CI: valid
programs of the repository and the spec with one to three constants replaced by 0, -1,
-0, 0.5, 1e-9, 1e6, inf, -inf, NaN or a near value, each run on serq's three paths (the
compiled event path, the interpreter and stepping every iteration) and in pyserq (0.1.2,
or 0.1.4 for a `fn main` program). `python tests/oracle/mutants.py --count N --seed S`
runs larger ranges; tests/sim/NOTES.md §22 has the round that made it.

A mutant passes when serq's paths agree to the last bit, nothing raises or reports
E-internal, serq answers within its time limit, and serq agrees with the reference: the
same whole report for a deterministic program, or a run on both sides for one that
draws. Where the reference runs and serq stops, serq's diagnostic must be one of the
documented rules (docs/domains-and-stalls.md: a value out of its domain, a run that can
never move again, a livelock at one instant); the mutants that differ for a reason the
notes give are listed with it.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutants  # noqa: E402

SEED = 6
SAMPLE = range(76)
mutants.REFERENCE_LIMIT = 8.0  # the reference hangs on some refused constants (poisson(-1))
# serq's own stops where the reference runs on: a value out of its domain (E-constant at
# link, E-run when computed), and a run that stops moving (docs/domains-and-stalls.md)
DOCUMENTED = re.compile(
    r"must be|is NaN|is -?inf \(with|not below the horizon|the run stalls at"
    r"|can never move again|can make no progress|a livelock at one instant"
    r"|index \S+ is out of range"
)
# verdicts a sample mutant has, by index, for a reason tests/sim/NOTES.md §22 gives
# (none in this range; at seed 6, mutant 87, p_panic.sq at cost 0.5, would be
# ("differ", ".mean_live: serq 0.7625 | reference 0.7375"): class F of the notes)
KNOWN: dict[int, tuple[str, str]] = {}
CLEAN = ("same", "ran-both", "both-error", "reference-error")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    if not (Path(mutants.differential.PYSERQ_014) / "pyserq").is_dir():
        pytest.skip("pyserq 0.1.4 not found (set PYSERQ_014_PATH)")
    scratch = tmp_path_factory.mktemp("mutants")
    return dict(mutants.draw(SAMPLE.stop, SEED, scratch, {}))


@pytest.mark.parametrize("i", SAMPLE)
def test_mutant_agrees_with_the_reference(i, sample):
    pytest.importorskip("pyserq")
    mutant = sample.get(i)
    if mutant is None:
        pytest.skip("the program's unmutated run fails in serq")
    verdict, detail = mutants.run_mutant(i, mutant)
    where = f"{mutant.source.name} {mutant.applied}: {verdict}: {detail}"
    if verdict == "timeout":  # neither side finished within its limit: nothing to compare
        # (a mutation that makes the program huge, `batch(1e6)`, on a machine busy enough
        # that the reference's wall-clock limit passes too; serq alone past its CPU limit
        # still fails below)
        pytest.skip(f"both sides ran past their limits: {where}")
    if i in KNOWN:
        assert verdict == KNOWN[i][0] and KNOWN[i][1] in detail, where
    elif verdict == "differ":  # only where the program itself differs (NOTES §22)
        unmutated = mutants.judge(mutant.source, str(mutant.source.path), mutant.base)
        assert unmutated[0] == "differ", where
    elif verdict in ("serq-error", "reference-timeout"):  # serq stopped, by a rule of its own
        assert DOCUMENTED.search(detail), where
    else:
        assert verdict in CLEAN, where


def test_the_mutations_cover_the_domain(tmp_path):
    """The mutations write every value of the domain, whole expressions and settings, and
    the programs come from every folder and the spec."""
    found = mutants.sources(tmp_path)
    folders = {s.name.split("/")[0] for s in found}
    assert {"examples", "tests", "bench", "spec"} <= folders, folders
    assert any(s.main for s in found) and any(s.random for s in found)
    applied = []
    for k in range(400):
        source = found[k % len(found)]
        text = source.path.read_text(encoding="utf-8")
        settings = {"horizon": 10.0, "warmup": 0.0}
        applied += mutants.mutate(random.Random(k), source, text, settings).applied
    text = "\n".join(applied)
    for value in mutants.DOMAIN:
        assert f"-> {value}" in text, value
    for needle in ("horizon: ", "warmup: ", ") / 2", "2 * (", ") + 1"):
        assert needle in text, needle
