"""The generated code of ps stages against the interpreter, over a family of programs.

The event loop writes a ps completion with its stage's capacity folded in when every ps
stage of the program has the same one (a constant, or one expression of `present`), and
reschedules the one ps stage of a program without walking the pending list. These
programs mix what selects those forms (one stage or several, equal or different
capacities, constants from the whole domain: fractions, 1e-3, inf; capacities that read
`present`) with open and closed workloads, tandems, branches and a `choose` over a
stage array, and each must give the same report (every field, every sample) and the
same diagnostics on both paths, with `straight.py`'s loop off.
"""

from __future__ import annotations

import itertools

import pytest

from serq.sim import api as sim_api
from serq.sim import straight

CAPACITIES = ("1", "0.5", "3", "1e-3", "inf", "min(present, 4)", "present * 0.5 + 0.25")


def _program(caps: tuple[str, ...], shape: str, load: float, seed: int) -> str:
    """A program of `len(caps)` ps stages (the capacities `caps`), in the given shape."""
    stages = "\n".join(f"stage p{i} : ps({cap});" for i, cap in enumerate(caps))
    if shape == "tandem":
        runs = "\n".join(f"  run p{i} (~exp(0.4));" for i in range(len(caps)))
    elif shape == "branch":  # p0 with probability 0.3, else p1, then the last stage
        runs = (
            "  branch with (0.3) {\n    run p0 (~exp(1));\n  } else {\n"
            "    run p1 (~exp(0.5));\n  }\n"
            f"  run p{len(caps) - 1} (~exp(0.3));"
        )
    else:  # every stage visited once, the last one twice, then `end;`
        runs = "\n".join(f"  run p{i} (~uniform(0, 1.5));" for i in range(len(caps)))
        runs += f"\n  run p{len(caps) - 1} (0);\n  end;"
    if shape == "closed":
        workload = "arrive closed(6);"
        runs = f"  loop {{\n  run p0 (~exp(2));\n{runs}\n  }}"
    else:
        workload = f"arrive poisson({load!r});\n  init {{ set t0 = now; }}"
    return f"""{stages}
workload {{
  {workload}
}}
session {{
  set t = now;
{runs}
  observe sojourn = now - t;
}}
run {{ horizon 300; warmup 20; seed {seed}; }}
"""


def _choose_program(cap: str, n: int, seed: int) -> str:
    """A `choose` over an array of `n` ps stages of capacity `cap`."""
    return f"""stage s[{n}] : ps({cap});
workload {{ arrive poisson(1.7); }}
session {{
  set t = now;
  choose j in {n} by (queue(s[j]));
  run s[j] (~exp(1));
  observe sojourn = now - t;
}}
run {{ horizon 300; warmup 20; seed {seed}; }}
"""


def _run_both(text: str) -> None:
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    said = []
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled, codegen=codegen)
        rendered = [(d.code, d.span, d.message, tuple(d.notes)) for d in ran]
        said.append((None if report is None else report.json(), rendered))
    assert said[0] == said[1]


@pytest.fixture(autouse=True)
def _no_straight(monkeypatch):
    monkeypatch.setattr(straight, "ENABLED", False)


# every capacity alone, and pairs and triples taken along the products (every
# capacity in each place, equal and different neighbours)
COMBINATIONS = [
    *((cap,) for cap in CAPACITIES),
    *itertools.islice(itertools.product(CAPACITIES, repeat=2), 0, None, 4),
    *itertools.islice(itertools.product(CAPACITIES, repeat=3), 0, None, 23),
]
CASES = [
    (caps, shape)
    for caps in COMBINATIONS
    for shape in ("tandem", "branch", "mixed", "closed")
    if not (shape == "branch" and len(caps) == 1)
]


@pytest.mark.parametrize(("caps", "shape"), CASES)
def test_ps_family_same_on_both_paths(caps: tuple[str, ...], shape: str) -> None:
    for seed, load in ((1, 0.4), (5, 0.9)):
        _run_both(_program(caps, shape, load, seed))


@pytest.mark.parametrize("cap", CAPACITIES)
@pytest.mark.parametrize("n", (2, 4))
def test_ps_array_choose_same_on_both_paths(cap: str, n: int) -> None:
    _run_both(_choose_program(cap, n, seed=3))
