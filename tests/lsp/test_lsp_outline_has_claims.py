"""The outline lists a program's claims (and `share`), as it lists its gauges.

examples/vocabulary/sarathi_claims.sq states four claims; the editor's outline and its
workspace symbols showed none of them (the outline knew lets, defs, pools, stages,
queues and gauges): a user could not go to `stall_free` from the outline.
"""

from __future__ import annotations

from lsprotocol import types

from serq_lsp.analysis import analyze
from serq_lsp.symbols import outline

PROGRAM = """let budget = 64;
stage engine : step { budget budget; cost 0.01; }
workload { arrive poisson(1); session { run engine (1); } }
share maxmin;
claim chunked: every iteration of engine (tokens <= budget);
claim done: at end (1 > 0);
run { horizon 5; }
"""


def test_claims_and_share_are_in_the_outline():
    symbols = outline(analyze(PROGRAM, "/nowhere/p.sq"))
    named = [(s.name, s.kind) for s in symbols]
    assert ("chunked", types.SymbolKind.Boolean) in named
    assert ("done", types.SymbolKind.Boolean) in named
    assert ("share", types.SymbolKind.Namespace) in named
    claim = next(s for s in symbols if s.name == "chunked")
    assert claim.selection_range.start.line == 4 and claim.selection_range.start.character == 6
