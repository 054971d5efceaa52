"""Link errors of claims, preempt keys and program arguments, each at its position."""

from __future__ import annotations

import pytest

from serq import api

BASE = """fn main() {{
  pool kv {{ cap 64; {preempt} admit via engine; }}
  stage engine : step {{ budget 8; cost 1; memory kv; }}
  stage d : delay;
  workload {{ arrive batch(3); turn {{ set p = 10; set o = 5; }} hidden o; }}
  server {{ hold kv (cost(kv, p)) {{ prefill (p) growing kv; }} observe fin = now; }}
  {claim}
}}
"""


def _errors(preempt: str = "preempt lifo;", claim: str = "") -> list[tuple[str, str, int]]:
    text = BASE.format(preempt=preempt, claim=claim)
    return [(d.code, d.message, d.span.line) for d in api.check_source(text, "v.sq")]


@pytest.mark.parametrize(
    ("claim", "code", "words"),
    [
        ("claim c: every iteration of t (now > 0);", "E-unknown-name", "unknown stage `t`"),
        ("claim c: every iteration of d (now > 0);", "E-wrong-kind", "not a step stage"),
        ("claim c: every iteration of engine (p > 0);", "E-structure", "session attribute"),
        ("claim c: at end (p > 0);", "E-structure", "reads the run, not a session"),
        ("claim c: every iteration of engine (total(fin) > 0);", "E-structure", "`at end`"),
        ("claim c: at end (used(kv) > 0);", "E-structure", "deployment's state"),
        (
            "claim c: every iteration of engine (budget_left(engine) > 0);",
            "E-structure",
            "may not read",
        ),
        ("claim c: at end (tokens > 0);", "E-moment", "`tokens`"),
        ("claim c: every iteration of engine (admission > 0);", "E-moment", "`admission`"),
        ("claim c: at end (~det(1) > 0);", "E-structure", "may not draw"),
        ("claim c given (now > 1): at end (now > 0);", "E-moment", "may not read `now`"),
        ("claim c: at end (total(nosuch) > 0);", "E-unknown-name", "unknown observation"),
        ("claim c: at end (now > 0); claim c: at end (now > 1);", "E-structure", "declared twice"),
    ],
)
def test_claim_errors(claim, code, words):
    found = _errors(claim=claim)
    assert any(c == code and words in m and line == 7 for c, m, line in found), found


def test_what_claims_may_read_links():
    claims = (
        "claim a: every iteration of engine (tokens + demand + served + arrived + used(kv) "
        "+ queued(kv) + decoders + kv_prefill + attention >= -inf);"
        " claim b given (o > 2 && p >= 0.5): at end (prefix_total(fin) + largest(fin) "
        "+ count(fin) + total(fin) + now < inf);"  # a hidden attribute in `given`
    )
    assert _errors(claim=claims) == []


@pytest.mark.parametrize(
    ("preempt", "code", "words"),
    [
        ("preempt by (o);", "E-hidden", "hidden"),
        ("preempt by (~det(1));", "E-structure", "may not draw"),
        ("preempt by (computed);", "E-structure", "`position`"),
        ("preempt by (remaining);", "E-moment", "`remaining`"),
        ("preempt by (budget_left(engine));", "E-structure", "budget_left"),
    ],
)
def test_preempt_key_errors(preempt, code, words):
    found = _errors(preempt=preempt)
    assert any(c == code and words in m and line == 2 for c, m, line in found), found


def test_preempt_keys_read_their_context():
    keys = (
        "preempt by (position, -admission, decoding, p, 0.5 * serial) requeue tail; reserve held;"
    )
    assert _errors(preempt=keys) == []


def test_an_attribute_named_like_a_claim_context_variable_is_a_program():
    text = BASE.format(preempt="preempt lifo;", claim="").replace(
        "observe fin = now;", "set arrived = now; set served = 1; observe fin = now - arrived;"
    )
    assert api.check_source(text, "v.sq") == []


def test_args_number_only_as_a_let_s_value():
    found = api.check_source('use "std/args";\nlet x = 1 + args.number("x", 2);\n', "a.sq")
    assert [(d.code, d.span.line) for d in found] == [("E-parse", 2)]
    found = api.check_source('let x = args.number("x", 2);\n', "a.sq")
    assert [(d.code, d.span.line, d.span.column) for d in found] == [("E-use", 1, 21)]


def test_position_is_ambiguous_beside_an_attribute_of_that_name():
    # `preempt by (position)` reads where the candidate's hold is now; with an attribute
    # named `position` it could mean either, so it is refused there (pyserq 0.1.4 refuses
    # it too), and the attribute alone is still a program
    text = BASE.format(preempt="preempt by (-position, p);", claim="").replace(
        "set o = 5;", "set o = 5; set position = 2;"
    )
    found = [(d.code, d.span.line, d.span.column) for d in api.check_source(text, "v.sq")]
    assert found == [("E-structure", 2, 34)]  # at `position`
    message = api.check_source(text, "v.sq")[0].message
    assert "both a session attribute and the context variable" in message
    plain = text.replace("preempt by (-position, p);", "preempt by (-p);")
    assert api.check_source(plain, "v.sq") == []
