"""Every tree the grammar can produce has a builder method: no input meets a KeyError."""

from serq.syntax.build import Builder
from serq.syntax.parser import grammar


def test_every_rule_name_has_a_builder_method():
    builder = Builder("<test>")
    produced = set(grammar().node_names)
    assert {"turn", "hold", "hold_pool", "program"} <= produced
    # the start rules and list helpers are read by document.py, not the builder
    produced -= {
        "program",
        "chunk",
        "fn_head",
        "fn_main",
        "params",
        "exprs",
        "refs",
        "roles",
        "size",
        "mode",
        "growing",
        "call_from",
        "call_to",
        "target_index",
        "target_on",
        "else_block",
        "reuse",
        "cache",
        "lease",
        "at_admission",
        "serving_verb",
        "aggregate_fn",
        "policy",
        "maxmin",
        "bottleneck",
        "ref_part",
        "entry_ref",
        "ref_indexed",
        "ref_dotted",
        # read by the rule they are part of: a claim's, a preempt option's, a let's
        "claim_given",
        "requeue",
        "library_args",
    }
    missing = sorted(n for n in produced if n not in builder._rules)
    assert missing == []
