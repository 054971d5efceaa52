"""A sample of the paths family (tests/oracle/paths_family.py): random programs over what
the compiled event path writes inline (its stages, holds, loops, ends and arrivals), each
run on the compiled path and on the interpreter, which must agree to the last bit (the
same report, or the same error). `scripts/search_step.py --family paths --against
interpreter` runs larger ranges by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))

import differential  # noqa: E402
import paths_family  # noqa: E402

SAMPLE = range(0, 600, 5)  # 120 programs


@pytest.mark.parametrize("k", SAMPLE)
def test_compiled_path_equals_interpreter(k, tmp_path):
    path = tmp_path / f"g{k}.sq"
    path.write_text(paths_family.program(k), encoding="utf-8")
    verdict, detail = differential.paths(str(path))
    assert verdict in ("same", "serq-error"), f"program {k}: {verdict}: {detail}"


def test_family_exercises_inline_holds():
    """The sample holds pools inline often enough to test that code at all."""
    from serq.sim import api as sim_api
    from serq.sim.compiled_holds import inline_holds

    inline = 0
    for k in SAMPLE:
        compiled, _ = sim_api.compile_program(paths_family.program(k), f"g{k}")
        if compiled is not None:
            inline += len(inline_holds(compiled.program))
    assert inline >= 40
