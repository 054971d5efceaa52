"""What the generated code leaves out when the program cannot need it.

A session's attribute `serial` is set only when something in the program reads it, and
the settle looks for pending stages only when the program has a ps stage or a flow (only
they are ever pending). Each program here reads `serial` somewhere else (a `set`, a
`turn` block, a hold's units, a cache's eviction keys, a `choose` key, a branch), or has
no ps stage, and must give the same report on the generated code as on the interpreter.
"""

from __future__ import annotations

import pytest

from tests.sim.both_paths import generated_source, report_json

BASE = """
pool p {{ cap 3; evict by ({evict}); }}
stage s : {kind};
workload {{
  arrive poisson(1.5);
  turn {{ set n = {turn}; }}
}}
session {{
  set t0 = now;
  turn;
  set x = {set};
  choose j in 1 by ({choose});
  branch ({branch}) {{
    hold p (1 + {units}) {{ run s (~exp(0.5)); }} cache (2);
  }} else {{
    run s (~exp(0.5));
  }}
  observe x = x + n;
  observe sojourn = now - t0;
}}
run {{ horizon 200; warmup 0; seed 3; }}
"""
READS = {
    "set": "serial * 2",
    "turn": "serial",
    "units": "(serial - 2 * floor(serial / 2))",
    "evict": "-serial",
    "choose": "serial",
    "branch": "(serial - 2 * floor(serial / 2))",
}


def _text(reading: str | None, kind: str) -> str:
    """The program with `serial` read only at `reading` (none when None)."""
    values = {"set": "1", "turn": "2", "units": "0", "evict": "0", "choose": "0", "branch": "1"}
    if reading is not None:
        values[reading] = READS[reading]
    return BASE.format(kind=kind, **values)


@pytest.mark.parametrize("kind", ["fifo(1)", "ps(2)", "delay"])
@pytest.mark.parametrize("reading", [None, *READS])
def test_both_paths_agree(reading: str | None, kind: str) -> None:
    text = _text(reading, kind)
    assert report_json(text, codegen=True) == report_json(text, codegen=False)
    assert ("float(serial)" in generated_source(text)) == (reading is not None)
    assert ("if pending:" in generated_source(text)) == (kind == "ps(2)")
