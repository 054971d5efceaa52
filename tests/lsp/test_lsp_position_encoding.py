"""serq-lsp counts positions in the encoding the client prefers (LSP 3.17's
`general.positionEncodings`): UTF-8, UTF-16 or UTF-32, UTF-16 when the client offers none.

Before, it announced UTF-16 whatever the client offered (and, before that, announced the
client's UTF-8 and counted in UTF-16). Each test here runs a session in each encoding over
text with `é` (two UTF-8 bytes), `中` (three) and `😀` / `𝔘` (four bytes, two UTF-16
units): the positions the server writes (diagnostics, hover, references, symbols,
semantic tokens, rename and formatting edits) and reads (requests, incremental changes)
are in the announced encoding's code units.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from serq.formatter import format_source

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
from test_lsp_robust import Wire  # noqa: E402

LINES = [
    "/* é中😀 */ let y = 2; // é中😀",
    '/* 😀中é */ let z = y + y; /* 𝔘 */ let w = "😀" + 1;',
    "stage s : fifo(1);",
]
TEXT = "\n".join(LINES) + "\n"
URI = "file:///nowhere/enc.sq"

# what the client offers -> what the server must announce and count in
OFFERS = [
    (None, "utf-16"),
    (["utf-16"], "utf-16"),
    (["utf-8"], "utf-8"),
    (["utf-32"], "utf-32"),
    (["utf-8", "utf-32", "utf-16"], "utf-8"),
    (["utf-32", "utf-8"], "utf-32"),
    (["utf-7", "utf-8"], "utf-8"),  # an unknown one is passed over
]


def units(text: str, encoding: str) -> int:
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text.encode("utf-8"))


def at(line: int, column: int, encoding: str) -> dict:
    """The LSP position of code-point `column` (0-based) of `LINES[line]`."""
    return {"line": line, "character": units(LINES[line][:column], encoding)}


def word(line: int, text: str, nth: int, encoding: str) -> dict:
    """The range of the `nth` (0-based) `text` of `LINES[line]`."""
    k = -1
    for _ in range(nth + 1):
        k = LINES[line].index(text, k + 1)
    return {"start": at(line, k, encoding), "end": at(line, k + len(text), encoding)}


def offset_of(text: str, position: dict, encoding: str) -> int:
    """The code-point offset in `text` of an LSP `position` counted in `encoding`."""
    lines = text.splitlines(keepends=True)
    start = sum(len(x) for x in lines[: position["line"]])
    k, count = 0, 0
    line = lines[position["line"]] if position["line"] < len(lines) else ""
    while count < position["character"]:
        count += units(line[k], encoding)
        k += 1
    assert count == position["character"], "a position inside a character"
    return start + k


def apply(text: str, edits: list[dict], encoding: str) -> str:
    spans = [
        (
            offset_of(text, e["range"]["start"], encoding),
            offset_of(text, e["range"]["end"], encoding),
        )
        for e in edits
    ]
    for (a, b), e in sorted(zip(spans, edits, strict=True), key=lambda p: p[0], reverse=True):
        text = text[:a] + e["newText"] + text[b:]
    return text


def _session(offer: list[str] | None) -> tuple[Wire, dict]:
    wire = Wire()
    capabilities = {} if offer is None else {"general": {"positionEncodings": offer}}
    params = {"processId": None, "rootUri": None, "capabilities": capabilities}
    params["initializationOptions"] = {"debounce": 0.0}
    wire.request(0, "initialize", params)
    answer = wire.answer(0)
    wire.notify("initialized", {})
    wire.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": URI, "languageId": "serq", "version": 1, "text": TEXT}},
    )
    return wire, answer["result"]["capabilities"]


@pytest.fixture(params=OFFERS, ids=lambda o: ",".join(o[0] or ["none"]))
def session(request):
    offer, encoding = request.param
    wire, capabilities = _session(offer)
    try:
        yield wire, capabilities, encoding
    finally:
        wire.process.kill()
        wire.process.wait()


def _ask(wire: Wire, msg_id: int, method: str, **params) -> object:
    wire.request(msg_id, method, {"textDocument": {"uri": URI}, **params})
    return wire.answer(msg_id)["result"]


def test_the_server_announces_and_writes_the_clients_encoding(session):
    wire, capabilities, enc = session
    assert capabilities.get("positionEncoding", "utf-16") == enc
    (string,) = [d for d in wire.diagnostics(URI) if "string" in d["message"]]
    assert string["range"] == word(1, '"😀"', 0, enc)

    hover = _ask(wire, 1, "textDocument/hover", position=word(1, "y", 1, enc)["start"])
    assert hover["range"] == word(1, "y", 1, enc)

    refs = _ask(
        wire,
        2,
        "textDocument/references",
        position=word(0, "y", 0, enc)["end"],
        context={"includeDeclaration": True},
    )
    expected = [word(0, "y", 0, enc), word(1, "y", 0, enc), word(1, "y", 1, enc)]
    assert sorted(r["range"]["start"]["character"] for r in refs) == sorted(
        r["start"]["character"] for r in expected
    )
    assert all(r["range"] in expected for r in refs)

    definition = _ask(wire, 3, "textDocument/definition", position=word(1, "y", 1, enc)["start"])
    definition = definition if isinstance(definition, list) else [definition]
    assert [d.get("range", d.get("targetSelectionRange")) for d in definition] == [
        word(0, "y", 0, enc)
    ]

    symbols = _ask(wire, 4, "textDocument/documentSymbol")
    by_name = {s["name"]: s for s in symbols}
    assert by_name["z"]["selectionRange"] == word(1, "z", 0, enc)

    rename = _ask(
        wire, 5, "textDocument/rename", position=word(1, "y", 0, enc)["start"], newName="yy"
    )
    renamed = apply(TEXT, rename["changes"][URI], enc)
    assert renamed == re.sub(r"\by\b", "yy", TEXT)

    data = _ask(wire, 6, "textDocument/semanticTokens/full")["data"]
    line = col = 0
    seen = []
    for k in range(0, len(data), 5):
        dl, dc, length = data[k : k + 3]
        line, col = line + dl, (col + dc if dl == 0 else dc)
        a = offset_of(TEXT, {"line": line, "character": col}, enc)
        b = offset_of(TEXT, {"line": line, "character": col + length}, enc)
        seen.append(TEXT[a:b])
    assert seen[:6] == ["/* é中😀 */", "let", "y", "2", "// é中😀", "/* 😀中é */"]
    assert "/* 𝔘 */" in seen and '"😀"' in seen


def test_the_server_reads_the_clients_encoding(session):
    wire, _, enc = session
    wire.diagnostics(URI)
    text = TEXT
    # the string `"😀"` of line 1 becomes `2`; then a `!` after the comment's emoji of line 0
    fix = {"range": word(1, '"😀"', 0, enc), "text": "2"}
    bang = {"range": {"start": word(0, "😀", 1, enc)["end"], "end": word(0, "😀", 1, enc)["end"]}}
    bang["text"] = "!"
    wire.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [fix, bang]},
    )
    text = text.replace('"😀"', "2").replace("// é中😀", "// é中😀!")
    assert wire.diagnostics(URI) == []  # the string went, nothing else broke

    edits = _ask(wire, 7, "textDocument/formatting", options={"tabSize": 2, "insertSpaces": True})
    assert apply(text, edits or [], enc) == format_source(text).text

    line1 = text.splitlines()[1]
    k = line1.index("w")
    hover = _ask(
        wire,
        8,
        "textDocument/hover",
        position={"line": 1, "character": units(line1[:k], enc)},
    )
    assert hover["range"]["start"]["character"] == units(line1[:k], enc)
    # a request inside a character lands on it: the server does not fail
    inside = units(LINES[0][: LINES[0].index("😀")], enc) + (1 if enc != "utf-32" else 0)
    _ask(wire, 9, "textDocument/hover", position={"line": 0, "character": inside})
