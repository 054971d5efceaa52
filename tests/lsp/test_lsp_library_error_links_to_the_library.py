"""An error found in a `use`d library shows on the program's `use`, its place in the
message; its related information now links to that place in the library (UTF-16 columns,
the library's open buffer read as the check reads it), so an editor can jump there (§66)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIBRARY = "// ünïcode 😀\ndef bad(x) = /* 😀 */ x + nope;\n"
PROGRAM = """use "lib_with_error.sq";
stage s : fifo(1);
workload { arrive poisson(0.5); }
session { run s (bad(1)); end; }
run { horizon 10; }
"""


async def test_the_error_links_to_the_library(docs, tmp_path):
    library, program = tmp_path / "lib_with_error.sq", tmp_path / "prog.sq"
    library.write_text("def bad(x) = x;\n", encoding="utf-8")  # the buffer is what counts
    program.write_text(PROGRAM, encoding="utf-8")
    await docs.open(uri_of(library), LIBRARY)
    (shown,) = await docs.open(uri_of(program), PROGRAM)
    assert shown.code == "E-unknown-name" and "lib_with_error.sq:2:" in shown.message
    assert shown.range.start == types.Position(0, 0)
    (there,) = shown.related_information
    assert there.location.uri == uri_of(library)
    start = position_of(LIBRARY, "nope")
    assert there.location.range == types.Range(
        start, types.Position(start.line, start.character + 4)
    )
    docs.close(uri_of(program))
    docs.close(uri_of(library))
