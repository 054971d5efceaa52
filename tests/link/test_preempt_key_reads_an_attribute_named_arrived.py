"""A preempt key may read a session attribute named `arrived` (or `demand`, `served`).

Those three are pyserq 0.1.4's context variables of a claim over a step stage's
iterations, and exist nowhere else; the one a preempt key reads is `position`. The link
check refused every one of the four beside an attribute of its name in a preempt key,
with a message about `position` ("the context variable a preempt key reads (where the
candidate's hold is now)"), so `set arrived = now;` (the spec's vLLM programs) and
`preempt by (-priority, -arrived) requeue tail;` (vLLM's priority policy, tests/sim/NOTES.md
§47) was not a program. The run reads the attribute: the victim is chosen by it, on both
paths.
"""

from __future__ import annotations

import pytest

import serq
from serq import api

# s0 sent at 0, s1 at 1; both decode 10 tokens on a pool of 12 in blocks of 4, so their
# growths do not fit together and one is preempted (`observe r` once an admission)
PROGRAM = """\
pool kv {{ cap 12; block 4; preempt by ({key}) requeue tail; }}
stage E : step {{ budget 8; cost 1; memory kv; }}
stage D : delay;
workload {{ arrive batch(2); }}
session {{
  run D (serial);
  set {name} = now;
  hold kv (4) {{ observe r = computed; run E decode (10) growing kv; }}
  observe t = now;
}}
run {{ horizon 100; warmup 0; seed 1; }}
"""


@pytest.mark.parametrize("name", ["arrived", "demand", "served"])
def test_a_claim_s_context_name_is_an_attribute_in_a_preempt_key(name):
    text = PROGRAM.format(key=f"-{name}", name=name)
    assert api.check_source(text, "p.sq") == []


def test_position_is_still_ambiguous_there():
    text = PROGRAM.format(key="-position", name="position")
    found = api.check_source(text, "p.sq")
    assert [d.code for d in found] == ["E-structure"]
    assert "where the candidate's hold is now" in found[0].message


@pytest.mark.parametrize(
    ("key", "preempted"),
    [
        ("arrived", 0),  # the smallest key loses: the one sent first
        ("-arrived", 1),
        ("1", 1),  # ties: the most recently admitted, as under `preempt lifo`
    ],
)
def test_the_victim_is_chosen_by_the_attribute(tmp_path, key, preempted):
    path = tmp_path / "p.sq"
    path.write_text(PROGRAM.format(key=key, name="arrived"))
    for codegen in (True, False):
        report = serq.run(serq.compile(str(path), codegen=codegen))
        admissions = list(report.observe("r").sessions)
        assert sorted(admissions) == sorted([0, 1, preempted, preempted]), (codegen, admissions)
