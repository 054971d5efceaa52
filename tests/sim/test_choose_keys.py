"""`choose` keys on the generated code: one key compared alone, counts compared as ints.

The generated code compares a single key as it is, not as a 1-tuple, and reads the
counts of a key made only of counts and numbers under `+`, `-`, `*` and negation
(`queue`, `busy`, `holders`, `queued`), multiplied by numbers only, as ints
(`compiled._counted`). Both must order
the candidates as the interpreter's float tuples do, ties (the first of the least)
included. These programs draw such keys over stage and pool arrays, with negations,
fractions, 0, inf (a count of 0 times inf is NaN, which never wins), several keys, and
keys that read an attribute or divide (left as floats), and run each on the generated
code and on the interpreter: the reports must be identical.
"""

from __future__ import annotations

import random

import pytest

from tests.sim.both_paths import generated_source, report_json

COUNTS = ("queue(s[j])", "busy(s[j])", "holders(p[j])", "queued(p[j])")
NUMBERS = ("0", "0.5", "2", "inf", "3")


def _key(rng: random.Random, depth: int = 0) -> str:
    """A random key of counts and numbers (now and then one that is not only that)."""
    roll = rng.random()
    if depth > 2 or roll < 0.35:
        return rng.choice(COUNTS)
    if roll < 0.45:
        return rng.choice(NUMBERS)
    if roll < 0.55:
        return f"-{_key(rng, depth + 1)}"
    if roll < 0.6:
        return rng.choice(("u", f"{_key(rng, depth + 1)} / 2", f"min({_key(rng, depth + 1)}, 1)"))
    op = rng.choice(("+", "-", "*"))
    return f"({_key(rng, depth + 1)} {op} {_key(rng, depth + 1)})"


def program(seed: int) -> str:
    """Sessions choose one of `n` replicas (a pool member held around a stage member)
    by one to three random keys."""
    rng = random.Random(seed)
    n = rng.choice((2, 3, 4, 9))  # 9: past the unrolled candidates, a loop
    keys = ", ".join(_key(rng) for _ in range(rng.choice((1, 1, 2, 3))))
    kind = rng.choice(("fifo(1)", "ps(1)", "fifo(2)"))
    return f"""
pool p[{n}] {{ cap {rng.choice(("1", "2", "3"))}; }}
stage s[{n}] : {kind};
workload {{ arrive poisson({rng.choice(("1", "2.5", "6"))}); }}
session {{
  set t0 = now;
  set u = ~uniform(0, 2);
  choose j in {n} by ({keys});
  hold p[j] (1) {{ run s[j] (~exp(1)); }}
  observe sojourn = now - t0;
  observe picked = j;
}}
run {{ horizon 200; warmup 5; seed {seed}; }}
"""


@pytest.mark.parametrize("seed", range(50))
def test_generated_code_and_interpreter_agree(seed: int) -> None:
    text = program(seed)
    assert report_json(text, codegen=True) == report_json(text, codegen=False), text


def test_counts_are_compared_as_ints_and_a_key_alone() -> None:
    text = """
stage s[3] : fifo(1);
workload { arrive poisson(2.5); }
session {
  set t0 = now;
  choose j in 3 by (queue(s[j]) - 0.5 * busy(s[j]));
  run s[j] (~exp(1));
  observe picked = j;
}
run { horizon 300; warmup 0; seed 4; }
"""
    lines = generated_source(text).splitlines()
    keys = [line.strip() for line in lines if line.strip().startswith(("key2 =", "key3 ="))]
    assert len(keys) == 2 and all(".present) - (0.5 * (" in key for key in keys), keys
    assert all("float(" not in key and "," not in key for key in keys), keys
    assert report_json(text, codegen=True) == report_json(text, codegen=False)


def test_a_key_that_divides_stays_float() -> None:
    text = """
stage s[3] : fifo(1);
workload { arrive poisson(2.5); }
session {
  choose j in 3 by (queue(s[j]) / 2);
  run s[j] (~exp(1));
  observe picked = j;
}
run { horizon 300; warmup 0; seed 4; }
"""
    assert "float(_m" in generated_source(text)
    assert report_json(text, codegen=True) == report_json(text, codegen=False)


def test_a_product_of_counts_stays_float() -> None:
    """As ints a product of counts could pass 2**53 and stay exact where the floats the
    interpreter compares round: a key with one is read as floats."""
    text = """
stage s[3] : fifo(1);
workload { arrive poisson(2.5); }
session {
  choose j in 3 by (queue(s[j]) * busy(s[j]) + 2 * queue(s[j]));
  run s[j] (~exp(1));
  observe picked = j;
}
run { horizon 300; warmup 0; seed 4; }
"""
    keys = [line for line in generated_source(text).splitlines() if "key" in line and "=" in line]
    assert keys and all("float(_m" in line for line in keys if "_m" in line), keys
    assert report_json(text, codegen=True) == report_json(text, codegen=False)
