"""A seeded search over `serq-lsp` on the texts of tools_search.py (the repository's
programs, the spec's, and their mutants), through one server process over stdio.

For each text the search opens a document and checks, with LSP's own rules (lines end at
`\\n`, `\\r\\n` or `\\r`; columns count UTF-16 code units):
- every answer to hover, completion, signature help, definition, references, prepare
  rename and rename (at random positions: token starts, ends of lines, non-ASCII lines),
  document symbols, semantic tokens, folding ranges, formatting, range formatting, code
  actions and inlay hints is a result, never an error response, and every range or
  position it holds in the document lies inside it (a semantic token inside its line);
- the published diagnostics' ranges lie inside the document;
- semantic tokens, document symbols and folding ranges asked right after `didOpen`,
  which answer from the parse before the first analysis ends, equal those after it, and
  a hover asked then shows the kernel it shows after it;
- the formatting edits, applied, give `serq fmt`'s text;
- random edits sent as `didChange` ranges, the way an editor sends them (one a
  notification, or several in one; now and then the whole text), leave the server
  with the document a fresh `didOpen` of the final text gives: the same diagnostics and
  the same formatting answer;
- an edit and its inverse (an undo) give back the diagnostics, semantic tokens, symbols
  and folding ranges of before;
- text typed a character at a time (a `didChange` per keystroke, completion, hover,
  signature help or semantic tokens asked between them), or a whole other program
  pasted into the document, leaves it as a fresh `didOpen` of the text.

A document of 10,000 lines (`--large`): the first requests, asked before its first
analysis ends, are answered (tokens, symbols and folding as after it); once its
diagnostics are out, every request is answered within a second, before and while typing
in its middle.

By hand: `python tests/fuzz/lsp_search.py --seed 1 --mutants 2 --edits 5 --limit 40`,
`python tests/fuzz/lsp_search.py --large --seed 1`.
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import lsp_wire  # noqa: E402
import tools_search  # noqa: E402

_LINE = re.compile(r"\r\n|\r|\n")
TIMEOUT = 30.0


# ------------------------------------------------------------- LSP's text model


def lsp_lines(text: str) -> list[str]:
    """The lines of `text` as LSP cuts them, without their line breaks."""
    return _LINE.split(text)


def utf16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def position_of(text: str, offset: int) -> dict:
    """The LSP position of `offset` in `text`."""
    before = text[:offset]
    breaks = list(_LINE.finditer(before))
    line = len(breaks)
    start = breaks[-1].end() if breaks else 0
    if before.endswith("\r") and text[offset : offset + 1] == "\n":
        line -= 1  # inside a `\r\n`: the end of the line
        start = breaks[-2].end() if len(breaks) > 1 else 0
        return {"line": line, "character": utf16(text[start : offset - 1])}
    return {"line": line, "character": utf16(text[start:offset])}


def offset_of(text: str, position: dict) -> int:
    """The offset of an LSP `position` in `text` (clamped to its line, as LSP says)."""
    starts = [0, *(m.end() for m in _LINE.finditer(text))]
    line = position["line"]
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = len(text) if line + 1 >= len(starts) else starts[line + 1]
    content = _LINE.sub("", text[start:end])
    units, k = 0, 0
    while k < len(content) and units < position["character"]:
        units += utf16(content[k])
        k += 1
    return start + k


def inside(text: str, position: dict) -> bool:
    lines = lsp_lines(text)
    line = position["line"]
    return 0 <= line < len(lines) and 0 <= position["character"] <= utf16(lines[line])


def apply_edits(text: str, edits: list[dict]) -> str:
    """`text` with LSP `TextEdit`s applied (they do not overlap)."""
    spans = [
        (offset_of(text, e["range"]["start"]), offset_of(text, e["range"]["end"]), e["newText"])
        for e in edits
    ]
    for start, end, new in sorted(spans, key=lambda s: s[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text


# ------------------------------------------------------------- the server


class Server:
    """A serq-lsp process, spoken to frame by frame."""

    def __init__(self, stderr: Any = subprocess.DEVNULL) -> None:
        self.process, self.frames = lsp_wire.start(stderr)
        self.published: dict[str, dict] = {}
        self.answers: dict[int, dict] = {}
        self.next_id = 1
        params = {"processId": None, "rootUri": ROOT.as_uri(), "capabilities": {}}
        params["initializationOptions"] = {"debounce": 0.0}
        self.request("initialize", params)
        self.notify("initialized", {})

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8", "surrogatepass")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _pump(self, until, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the server did not answer")
            try:
                frame = self.frames.get(timeout=left)
            except queue.Empty:
                continue
            if "id" in frame and "method" not in frame:
                self.answers[frame["id"]] = frame
            elif "id" in frame:  # a request of the server's (progress, configuration...)
                self._send({"jsonrpc": "2.0", "id": frame["id"], "result": None})
            else:
                self._notified(frame["method"], frame.get("params"))

    def _notified(self, method: str, params: Any) -> None:
        """A notification of the server's: its diagnostics are kept, the latest a document."""
        if method == "textDocument/publishDiagnostics":
            self.published[params["uri"]] = params

    def request(self, method: str, params: Any) -> dict:
        msg_id = self.next_id
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        self._pump(lambda: msg_id in self.answers)
        return self.answers.pop(msg_id)

    def notify(self, method: str, params: Any) -> None:
        if method in ("textDocument/didOpen", "textDocument/didChange"):
            self.published.pop(params["textDocument"]["uri"], None)  # wait for the new ones
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics(self, uri: str, version: int) -> list[dict]:
        def arrived() -> bool:
            got = self.published.get(uri)
            return got is not None and got.get("version") == version  # not a close's clearing

        self._pump(arrived)
        return self.published[uri]["diagnostics"]

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.process.wait(5)
        except Exception:
            self.process.kill()
            self.process.wait()


# ------------------------------------------------------------- checks


def _ranges(value: Any, uri: str, path: str = "") -> list[tuple[str, dict]]:
    """Every (where, range or position) in an answer that points into the document `uri`."""
    found: list[tuple[str, dict]] = []
    if isinstance(value, dict):
        target = value.get("uri", value.get("targetUri"))
        if target is not None and target != uri:
            return found  # another file's ranges
        for key, v in value.items():
            if key in ("range", "selectionRange", "targetRange", "targetSelectionRange"):
                if isinstance(v, dict) and "start" in v:
                    found.append((f"{path}.{key}", v))
                    continue
            if key == "position" and isinstance(v, dict) and "line" in v:
                found.append((f"{path}.{key}", {"start": v, "end": v}))
                continue
            if key == "changes" and isinstance(v, dict):
                for u, edits in v.items():
                    if u == uri:
                        found += _ranges(edits, uri, f"{path}.changes")
                continue
            found += _ranges(v, uri, f"{path}.{key}")
    elif isinstance(value, list):
        for k, v in enumerate(value):
            found += _ranges(v, uri, f"{path}[{k}]")
    return found


def _outside(text: str, answer: Any, uri: str, what: str) -> list[str]:
    out = []
    for where, r in _ranges(answer, uri):
        if not (inside(text, r["start"]) and inside(text, r["end"])):
            out.append(f"lsp {what}: a range outside the document at {where}: {r}")
            break
    return out


def _tokens_outside(text: str, data: list[int]) -> list[str]:
    lines = lsp_lines(text)
    line = char = 0
    for k in range(0, len(data), 5):
        delta_line, delta_char, length = data[k], data[k + 1], data[k + 2]
        line += delta_line
        char = delta_char if delta_line else char + delta_char
        if line >= len(lines) or char + length > utf16(lines[line]):
            return [f"lsp semanticTokens: a token past its line: line {line}, {char}+{length}"]
    return []


def _positions(rng: random.Random, text: str, count: int) -> list[dict]:
    offsets = [m.start() for m in tools_search._tokens(text)]
    odd = [m.start() for m in re.finditer(r"[^\x00-\x7f]", text)]
    ends = [m.start() for m in _LINE.finditer(text)]
    pool = offsets or [0]
    picked = [rng.choice(pool) for _ in range(count)]
    if odd:
        picked += [rng.choice(odd) + rng.choice((0, 1, 2)) for _ in range(2)]
    if ends:
        picked.append(rng.choice(ends))
    picked.append(len(text))
    return [position_of(text, min(p, len(text))) for p in picked]


def _ask(server: Server, text: str, uri: str, method: str, params: dict) -> list[str]:
    return _ask_answered(text, uri, method, server.request(method, params))


def _ask_answered(text: str, uri: str, method: str, answer: dict) -> list[str]:
    if "error" in answer:
        return [f"lsp {method}: error {answer['error'].get('message', '')[:200]}"]
    return _outside(text, answer.get("result"), uri, method)


def _hovers(server: Server, doc: dict, positions: list[dict]) -> list[tuple[dict, dict]]:
    """The hover at each of `positions`, with the position."""
    asked = [{"textDocument": doc, "position": p} for p in positions]
    return [(at, server.request("textDocument/hover", at)) for at in asked]


def _kernel(answer: dict) -> str:
    """The kernel a hover answer shows (after "expands to:"), or ""."""
    value = ((answer.get("result") or {}).get("contents") or {}).get("value", "")
    return value.split("expands to:", 1)[1] if "expands to:" in value else ""


def _kernels_kept(server: Server, doc: dict, first: list[tuple[dict, dict]]) -> list[str]:
    """A hover asked right after `didOpen` shows the kernel the same hover shows once the
    analysis is in (it waits for the expander on such a form)."""
    out = []
    for at, early in first:
        late = server.request("textDocument/hover", at)
        if _kernel(late) and _kernel(early) != _kernel(late):
            where = f"{at['position']['line'] + 1}:{at['position']['character'] + 1}"
            out.append(f"lsp first hover at {where}: not the kernel shown after the analysis")
    return out


def _outline(server: Server, doc: dict) -> list[dict]:
    """The answers to semantic tokens, document symbols and folding ranges."""
    methods = ("semanticTokens/full", "documentSymbol", "foldingRange")
    params = {"textDocument": doc}
    return [server.request(f"textDocument/{m}", params).get("result") for m in methods]


def check_document(server: Server, item: tools_search.Text, edits: int, k: int) -> list[str]:
    """Open `item` as a document and check every answer on it, then edit it."""
    from serq.formatter import format_source

    rng = random.Random(item.seed ^ 0x15D)
    text = item.text
    folder = item.source.path.parent
    name = f"{tools_search.SCRATCH}{k}" + ("", " é", "%")[k % 3]  # a URI quoted or not
    uri = (folder / f"{name}.sq").as_uri()
    doc = {"uri": uri}
    out: list[str] = []
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "serq", "version": 1, "text": text}},
    )
    first_hovers = _hovers(server, doc, _positions(random.Random(item.seed ^ 0xE4), text, 3))
    early = _outline(server, doc)  # asked at once: answered from the parse
    diagnostics = server.diagnostics(uri, 1)
    out += _outside(text, diagnostics, uri, "diagnostics")
    if early != _outline(server, doc):
        out.append("lsp first requests: tokens, symbols or folding from the parse differ")
    out += _kernels_kept(server, doc, first_hovers)
    for position in _positions(rng, text, 4):
        at = {"textDocument": doc, "position": position}
        out += _ask(server, text, uri, "textDocument/hover", at)
        out += _ask(server, text, uri, "textDocument/completion", at)
        out += _ask(server, text, uri, "textDocument/signatureHelp", at)
        out += _ask(server, text, uri, "textDocument/definition", at)
        refs = {**at, "context": {"includeDeclaration": True}}
        out += _ask(server, text, uri, "textDocument/references", refs)
        prepared = server.request("textDocument/prepareRename", at)
        out += _ask_answered(text, uri, "textDocument/prepareRename", prepared)
        if prepared.get("result"):  # a rename where none is offered may be an error
            renamed = server.request("textDocument/rename", {**at, "newName": "renamed"})
            out += _ask_answered(text, uri, "textDocument/rename", renamed)
            out += _rename_keeps_meaning(item, text, uri, renamed.get("result"))
    whole = {"start": {"line": 0, "character": 0}, "end": position_of(text, len(text))}
    out += _ask(server, text, uri, "textDocument/documentSymbol", {"textDocument": doc})
    out += _ask(server, text, uri, "textDocument/foldingRange", {"textDocument": doc})
    out += _ask(server, text, uri, "textDocument/inlayHint", {"textDocument": doc, "range": whole})
    actions = {"textDocument": doc, "range": whole, "context": {"diagnostics": diagnostics}}
    out += _ask(server, text, uri, "textDocument/codeAction", actions)
    tokens = server.request("textDocument/semanticTokens/full", {"textDocument": doc})
    if "error" in tokens:
        out.append(f"lsp semanticTokens: error {tokens['error'].get('message', '')[:200]}")
    elif tokens.get("result"):
        out += _tokens_outside(text, tokens["result"]["data"])
    options = {"tabSize": 2, "insertSpaces": True}
    formatting = server.request(
        "textDocument/formatting", {"textDocument": doc, "options": options}
    )
    if "error" in formatting:
        out.append(f"lsp formatting: error {formatting['error'].get('message', '')[:200]}")
    else:
        out += _outside(text, formatting.get("result"), uri, "formatting")
        if not out:
            got = apply_edits(text, formatting.get("result") or [])
            want = format_source(text, str(item.source.path.parent / "x.sq")).text
            if text.startswith("\ufeff") and not want.startswith("\ufeff"):
                want = "\ufeff" + want  # the editor's formatting keeps it, as `serq fmt`
            if got != want:
                out.append("lsp formatting: the edits applied are not serq fmt's text")
    a, b = sorted(rng.randrange(len(text) + 1) for _ in range(2))
    some = {"start": position_of(text, a), "end": position_of(text, b)}
    ranged = {"textDocument": doc, "range": some, "options": options}
    out += _ask(server, text, uri, "textDocument/rangeFormatting", ranged)
    found, version = _undo(server, text, uri, rng, 1, _snapshot(server, uri, 1))
    out += found
    found, text, version = _typed(server, text, uri, rng, version)
    out += found
    out += _edit_and_compare(server, text, uri, rng, edits, version)[0]
    server.notify("textDocument/didClose", {"textDocument": doc})
    return out


def _rename_keeps_meaning(item: tools_search.Text, text: str, uri: str, edit: Any) -> list[str]:
    """A rename within the document leaves a program with the same diagnostics' codes, one
    that links if the original did."""
    if not edit or set(edit.get("changes") or {}) != {uri} or edit.get("documentChanges"):
        return []
    path = str(item.source.path)
    renamed = apply_edits(text, edit["changes"][uri])
    before, after = tools_search.ir_of(text, path), tools_search.ir_of(renamed, path)
    if before[1] != after[1]:
        return [f"lsp rename: the diagnostics' codes went from {before[1]} to {after[1]}"]
    if (before[0] is None) != (after[0] is None):
        return ["lsp rename: the program links on one side only"]
    return []


def _change_of(text: str, edited: str) -> dict:
    """The one LSP change that turns `text` into `edited`: the common prefix and suffix
    out (no position lies inside a `\r\n`: a change that cuts one takes all of it)."""
    start = 0
    while start < min(len(text), len(edited)) and text[start] == edited[start]:
        start += 1
    end_old, end_new = len(text), len(edited)
    while end_old > start and end_new > start and text[end_old - 1] == edited[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    if 0 < start < len(text) and text[start - 1 : start + 1] == "\r\n":
        start -= 1
    if 0 < end_old < len(text) and text[end_old - 1 : end_old + 1] == "\r\n":
        end_old, end_new = end_old + 1, end_new + 1
    return {
        "range": {"start": position_of(text, start), "end": position_of(text, end_old)},
        "text": edited[start:end_new],
    }


def _send(server: Server, uri: str, version: int, changes: list[dict]) -> None:
    server.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes},
    )


def _edit_and_compare(
    server: Server, text: str, uri: str, rng: random.Random, edits: int, version: int = 1
) -> tuple[list[str], str, int]:
    """Send `edits` random range changes, then compare with a fresh document of the text;
    what failed, the text and its version."""
    batch = rng.random() < 0.3  # the changes in one notification, each on the one before
    changes = []
    for _ in range(edits):
        edited = tools_search.random_edit(rng, text)
        whole = rng.random() < 0.1  # the whole text, as some editors send it
        changes.append({"text": edited} if whole else _change_of(text, edited))
        if not batch:
            version += 1
            _send(server, uri, version, changes)
            changes = []
        text = edited
    if changes:
        version += 1
        _send(server, uri, version, changes)
    if edits == 0:
        return [], text, version
    return _compare_fresh(server, text, uri, version), text, version


def _compare_fresh(server: Server, text: str, uri: str, version: int) -> list[str]:
    """The edited document at `version` has the diagnostics and the formatting of a fresh
    document of its `text`."""
    mine = server.diagnostics(uri, version)
    fresh_uri = uri.replace(".sq", "-fresh.sq")
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": fresh_uri, "languageId": "serq", "version": 1, "text": text}},
    )
    fresh = server.diagnostics(fresh_uri, 1)
    out = []
    # a message may name the file (a note's position in it): the fresh one's name is its own
    name, fresh_name = (Path(unquote(u.removeprefix("file://"))).name for u in (uri, fresh_uri))
    theirs = json.dumps(fresh, sort_keys=True, ensure_ascii=False)
    if json.dumps(mine, sort_keys=True, ensure_ascii=False) != theirs.replace(
        fresh_uri, uri
    ).replace(fresh_name, name):
        a = [(d["range"]["start"], d.get("code"), d["message"][:80]) for d in mine]
        b = [(d["range"]["start"], d.get("code"), d["message"][:80]) for d in fresh]
        diff = [x for x in a if x not in b][:2], [x for x in b if x not in a][:2]
        out.append(
            f"lsp didChange: the edited document's diagnostics differ from a fresh one's: {diff}"
        )
    options = {"tabSize": 2, "insertSpaces": True}
    a = server.request(
        "textDocument/formatting", {"textDocument": {"uri": uri}, "options": options}
    )
    b = server.request(
        "textDocument/formatting", {"textDocument": {"uri": fresh_uri}, "options": options}
    )
    if a.get("result") != b.get("result"):
        out.append("lsp didChange: the edited document is not the text the edits make")
    server.notify("textDocument/didClose", {"textDocument": {"uri": fresh_uri}})
    return out


def _snapshot(server: Server, uri: str, version: int) -> tuple:
    """What a document at `version` shows: its diagnostics, semantic tokens, symbols and
    folding ranges."""
    doc = {"textDocument": {"uri": uri}}
    return (
        server.diagnostics(uri, version),
        server.request("textDocument/semanticTokens/full", doc).get("result"),
        server.request("textDocument/documentSymbol", doc).get("result"),
        server.request("textDocument/foldingRange", doc).get("result"),
    )


def _undo(
    server: Server, text: str, uri: str, rng: random.Random, version: int, before: tuple
) -> tuple[list[str], int]:
    """An edit, then its inverse (an editor's undo): the document shows again what it
    showed before (`before`, a `_snapshot`)."""
    edited = tools_search.random_edit(rng, text)
    for old, new in ((text, edited), (edited, text)):
        version += 1
        _send(server, uri, version, [_change_of(old, new)])
    after = _snapshot(server, uri, version)
    names = ("diagnostics", "semantic tokens", "symbols", "folding ranges")
    return [
        f"lsp undo: the {name} differ from those before the edit"
        for name, x, y in zip(names, before, after, strict=True)
        if json.dumps(x, sort_keys=True) != json.dumps(y, sort_keys=True)
    ], version


_OTHERS: list[str] = []


# the most characters typed one keystroke at a time: a line of a long-line mutant is the
# whole program (12,458 characters at seed 42, 10 minutes of keystrokes)
TYPED_MAX = 200


def _typed(
    server: Server, text: str, uri: str, rng: random.Random, version: int
) -> tuple[list[str], str, int]:
    """A piece typed a character at a time at one place, a `didChange` for each keystroke,
    with completion, hover, signature help or semantic tokens asked between keystrokes;
    or a whole other program pasted at a line start or anywhere, as one change."""
    if not _OTHERS:
        _OTHERS.extend(s.text for s in tools_search.sources())
    out: list[str] = []
    at = rng.randrange(len(text) + 1)
    if 0 < at < len(text) and text[at - 1 : at + 1] == "\r\n":
        at -= 1
    if rng.random() < 0.3:  # a paste of another program
        if rng.random() < 0.6:
            at = text.rfind("\n", 0, at) + 1
        edited = text[:at] + rng.choice(_OTHERS) + text[at:]
        version += 1
        _send(server, uri, version, [_change_of(text, edited)])
        return _compare_fresh(server, edited, uri, version), edited, version
    lines = [x for x in lsp_lines(text) if x.strip()] or ["let typed = 1;"]
    piece = rng.choice((rng.choice(lines), *tools_search._ALPHABET))[:TYPED_MAX]
    doc = {"uri": uri}
    for char in piece:
        edited = text[:at] + char + text[at:]
        version += 1
        _send(server, uri, version, [_change_of(text, edited)])
        text, at = edited, at + 1
        if rng.random() < 0.4:
            where = {"textDocument": doc, "position": position_of(text, at)}
            method = rng.choice(("completion", "hover", "signatureHelp", "semanticTokens/full"))
            if method == "semanticTokens/full":
                answer = server.request("textDocument/semanticTokens/full", {"textDocument": doc})
                if "error" in answer:
                    out.append(f"lsp typing: semanticTokens: error {answer['error']}"[:300])
                elif answer.get("result"):
                    out += _tokens_outside(text, answer["result"]["data"])
            else:
                answer = server.request(f"textDocument/{method}", where)
                out += _ask_answered(text, uri, f"textDocument/{method} (typing)", answer)
    return out + _compare_fresh(server, text, uri, version), text, version


LARGE_LINES = 10_000
REQUEST_LIMIT = 1.0  # seconds any request on a large document may take


def check_large(server: Server, seed: int, lines: int = LARGE_LINES) -> list[str]:
    """A document of `lines` lines (bench/lsp.py's program): once its diagnostics are out,
    every request is answered within `REQUEST_LIMIT` seconds, before and while typing."""
    sys.path.insert(0, str(ROOT))
    from bench.lsp import program

    rng = random.Random(seed)
    text = program(lines)
    uri = (ROOT / "examples" / f"{tools_search.SCRATCH}large.sq").as_uri()
    doc = {"uri": uri}
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "serq", "version": 1, "text": text}},
    )
    out: list[str] = []
    form = position_of(text, text.index("prefill (prompt"))  # its hover waits for the kernel
    first = _hovers(server, doc, [_positions(rng, text, 1)[0], form])  # before the analysis
    for _, hover in first:
        if "error" in hover:
            message = hover["error"].get("message", "")[:200]
            out.append(f"lsp large first hover: error {message}")
    early = _outline(server, doc)
    server.diagnostics(uri, 1)
    if early != _outline(server, doc):
        out.append("lsp large first requests: tokens, symbols or folding from the parse differ")
    out += _kernels_kept(server, doc, first)

    def timed(method: str, params: dict) -> None:
        start = time.monotonic()
        answer = server.request(f"textDocument/{method}", params)
        took = time.monotonic() - start
        if "error" in answer:
            out.append(f"lsp large {method}: error {answer['error'].get('message', '')[:200]}")
        if took > REQUEST_LIMIT:
            out.append(f"lsp large {method}: {took:.2f} s")

    def everything(text: str, count: int) -> None:
        whole = {"start": {"line": 0, "character": 0}, "end": position_of(text, len(text))}
        options = {"tabSize": 2, "insertSpaces": True}
        for method in ("semanticTokens/full", "documentSymbol", "foldingRange", "codeLens"):
            timed(method, {"textDocument": doc})
        timed("formatting", {"textDocument": doc, "options": options})
        timed("inlayHint", {"textDocument": doc, "range": whole})
        context = {"diagnostics": []}
        timed("codeAction", {"textDocument": doc, "range": whole, "context": context})
        for position in _positions(rng, text, count):
            at = {"textDocument": doc, "position": position}
            for method in ("hover", "completion", "signatureHelp", "definition"):
                timed(method, at)
            timed("references", {**at, "context": {"includeDeclaration": True}})
            timed(
                "rangeFormatting",
                {
                    "textDocument": doc,
                    "options": options,
                    "range": {"start": position, "end": position},
                },
            )

    everything(text, 3)
    version, at = 1, rng.randrange(len(text))
    at = text.rfind("\n", 0, at) + 1
    for char in "let typed = max(1, 2);\n":  # typed in the middle, asked between keys
        edited = text[:at] + char + text[at:]
        version += 1
        _send(server, uri, version, [_change_of(text, edited)])
        text, at = edited, at + 1
        where = {"textDocument": doc, "position": position_of(text, at)}
        timed(rng.choice(("completion", "hover", "signatureHelp")), where)
        if rng.random() < 0.3:
            timed("semanticTokens/full", {"textDocument": doc})
    server.diagnostics(uri, version)
    everything(text, 2)
    server.notify("textDocument/didClose", {"textDocument": doc})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mutants", type=int, default=2)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--match", default="")
    parser.add_argument("--large", action="store_true", help="the 10,000-line document only")
    args = parser.parse_args(argv)
    if args.large:
        server = Server()
        try:
            found = check_large(server, args.seed)
        finally:
            server.close()
        print("\n".join([*found, f"large document, seed {args.seed}: {len(found)} failures"]))
        return 1 if found else 0
    items = [s for s in tools_search.sources() if args.match in s.name]
    if args.limit:
        items = items[: args.limit]
    server = Server()
    start, count, failures = time.monotonic(), 0, 0
    try:
        for k, item in enumerate(tools_search.texts(items, args.mutants, args.seed)):
            count += 1
            try:
                found = check_document(server, item, args.edits, k)
            except TimeoutError as error:
                found = [f"lsp: {error}"]
                server.process.kill()
                server = Server()
            for problem in found:
                failures += 1
                print(f"{item.label}: {problem}", flush=True)
    finally:
        server.close()
    took = time.monotonic() - start
    print(
        f"{len(items)} sources, {count} documents, seed {args.seed}: {failures} failures "
        f"in {took:.0f} s"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
