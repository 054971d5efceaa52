"""Every position serq-lsp reads and writes is in UTF-16 code units, so it announces UTF-16
whatever encodings the client offers (UTF-16 is the one every client must take).

A client that offered `positionEncodings: ["utf-8"]` (or utf-32) was told `utf-8`, and then
got UTF-16 columns: after an `é` or a `😀` every diagnostic, hover and rename stood a
character or two off, and its incremental changes, read by pygls in UTF-8, were applied
to other places than the server's own positions named.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
from test_lsp_robust import Wire  # noqa: E402

TEXT = 'stage s : fifo(1); // é😀\nlet x = "😀" + 1;\n'


def _session(encodings: list[str] | None) -> tuple[Wire, dict]:
    wire = Wire()
    capabilities = {} if encodings is None else {"general": {"positionEncodings": encodings}}
    params = {"processId": None, "rootUri": None, "capabilities": capabilities}
    params["initializationOptions"] = {"debounce": 0.0}
    wire.request(0, "initialize", params)
    answer = wire.answer(0)
    wire.notify("initialized", {})
    return wire, answer["result"]["capabilities"]


@pytest.mark.parametrize(
    "encodings", [None, ["utf-16"], ["utf-8"], ["utf-32"], ["utf-8", "utf-32", "utf-16"]]
)
def test_the_server_announces_the_encoding_it_counts_in(encodings):
    wire, capabilities = _session(encodings)
    try:
        assert capabilities.get("positionEncoding", "utf-16") == "utf-16"
        uri = "file:///nowhere/enc.sq"
        item = {"uri": uri, "languageId": "serq", "version": 1, "text": TEXT}
        wire.notify("textDocument/didOpen", {"textDocument": item})
        (string,) = [d for d in wire.diagnostics(uri) if "string" in d["message"]]
        # `"😀"` is columns 8 to 12 in UTF-16 (the emoji is two code units)
        assert string["range"]["start"] == {"line": 1, "character": 8}
        assert string["range"]["end"] == {"line": 1, "character": 12}
        # an edit just after the emoji of line 0, at UTF-16 column 25: `😀` -> `😀!`
        change = {
            "range": {"start": {"line": 0, "character": 25}, "end": {"line": 0, "character": 25}},
            "text": "!",
        }
        wire.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]},
        )
        wire.diagnostics(uri)
        options = {"tabSize": 2, "insertSpaces": True}
        wire.request(
            1, "textDocument/formatting", {"textDocument": {"uri": uri}, "options": options}
        )
        wire.answer(1)  # the document the server holds is the text the edit makes:
        wire.request(
            2,
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 6}},
        )
        wire.answer(2)
        wire.request(3, "textDocument/foldingRange", {"textDocument": {"uri": uri}})
        wire.answer(3)
        wire.request(4, "textDocument/semanticTokens/full", {"textDocument": {"uri": uri}})
        data = wire.answer(4)["result"]["data"]
        # the tokens of line 1: `let` at 0, `x` at 4, the string at 8 of length 4 (UTF-16)
        line, col, tokens = 0, 0, []
        for k in range(0, len(data), 5):
            dl, dc, length = data[k : k + 3]
            line, col = line + dl, (col + dc if dl == 0 else dc)
            tokens.append((line, col, length))
        assert (1, 8, 4) in tokens, tokens
        assert (0, 19, 7) in tokens, tokens  # the comment `// é😀!`: 7 code units
    finally:
        wire.process.kill()
        wire.process.wait()
