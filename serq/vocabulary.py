"""The names the language supplies: context variables, built-in attributes, functions."""

from __future__ import annotations

# Each context variable exists at one place (spec §2, Expressions); `now` everywhere.
CONTEXT_VARS = frozenset(
    {
        "now",
        "size",
        "age",
        "last",
        "waiting",
        "present",
        "residents",
        "decoders",
        "kv_decode",
        "kv_prefill",
        "tokens",
        "prefilled",
        "attention",
        "decoding",
        "admission",
        "remaining",
        "waited",
    }
)

# Context variables of pyserq 0.1.4's vocabulary: read in a claim over a step stage's
# iterations (`demand`, the tokens the residents would take with no budget; `served`, the
# tokens served so far; `arrived`, the sessions arrived so far) and in a pool's preempt
# keys (`position`, where the candidate victim's hold is now). Unlike `CONTEXT_VARS` they
# are not reserved: the spec does not name them, and `set arrived = now;` is a program of
# the spec's, so a session attribute of that name wins, and is refused where only the
# context variable may be read.
CLAIM_CONTEXT = frozenset({"demand", "served", "arrived", "position"})

# The aggregates of a run's observations a claim `at end` reads: `total(obs)` ...
CLAIM_AGGREGATES = frozenset({"total", "count", "largest", "prefix_total"})

# Attributes every session has; the trace ones exist with a trace.
BUILTIN_ATTRS = frozenset({"serial", "turn_no", "cached", "computed"})
TRACE_ATTRS = frozenset({"new", "out", "think", "more", "forced"})

# Functions of numbers, and observables of the deployment's state (live state).
MATH_FUNCS = frozenset({"min", "max", "abs", "floor", "ceil", "sqrt", "exp", "ln", "pow"})
OBSERVABLES = frozenset(
    {
        "queue",
        "busy",
        "work",
        "used",
        "free",
        "cachedin",
        "holders",
        "queued",
        "budget_left",
        "blocksize",
        "price",
        "est_lambda",
        "est_rho",
        "est_wait",
    }
)
DISTRIBUTIONS = frozenset({"exp", "det", "uniform", "erlang", "h2", "bernoulli"})

# The seeds a run accepts, on the command line (`--seed`) and in the `run` block: the
# 64-bit unsigned range, as pyserq 0.1.2 takes (its `compile(seed=)` refuses -1 and 2**64).
SEED_MIN = 0
SEED_MAX = 2**64 - 1

# The `arrivals` a run may ask for, in the `run` block and on the command line (`--arrivals`).
ARRIVALS_MAX = 10**12

# The largest family a program may declare (`pool kv[N]`), and so the most candidates a
# `choose` picks among.
MAX_MEMBERS = 1_000_000
