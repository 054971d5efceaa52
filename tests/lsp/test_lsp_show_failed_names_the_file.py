"""Show IR and Show kernel of a program with errors: "**No IR**", each error with its line,
and the file's name when the error lies in a `use`d library.

The answer read "**No the IR**: the program has errors." and listed an error of the
library as "`E-unknown-name` line 3: ...", the line of a file it did not name (the
program's line 3 is something else).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

LIBRARY = "// serving\ndef serve_on(w) {\n  run srv (cost(srv, w));\n}\n"
PROGRAM = """use "lib.sq";
fn main() {
  stage server : fifo(1);
  workload { arrive poisson(0.5); }
  server { serve_on(1); observe x = y; }
}
"""


def _command(wire: Wire, msg_id: int, command: str, uri: str) -> str:
    wire.request(msg_id, "workspace/executeCommand", {"command": command, "arguments": [uri]})
    answer = wire.answer(msg_id)
    assert "result" in answer, answer
    return answer["result"]


def test_show_ir_names_the_library(wire: Wire, tmp_path):
    wire.initialize()
    (tmp_path / "lib.sq").write_text(LIBRARY)
    main = tmp_path / "main.sq"
    main.write_text(PROGRAM)
    wire.open(main.as_uri(), PROGRAM)
    wire.diagnostics(main.as_uri())
    shown = _command(wire, 1, "serq.showIR", main.as_uri())
    assert shown.startswith("**No IR**: the program has errors.\n\n"), shown
    assert "- `E-unknown-name` `lib.sq` line 3: unknown stage `srv`" in shown, shown
    assert "- `E-unknown-name` line 5: unknown name `y`" in shown, shown
    broken = PROGRAM.replace("observe x = y;", "observe x = ;")
    main.write_text(broken)
    wire.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": main.as_uri(), "version": 2}, "contentChanges": [{"text": broken}]},
    )
    shown = _command(wire, 2, "serq.showKernel", main.as_uri())
    assert shown.startswith("**No kernel**: the program has errors.\n\n- `E-parse` line 5: "), shown
