"""A program typed from its first character to its last into `serq-lsp`, the editor's
requests asked at every prefix (or every STRIDE-th): the state of a document in the middle
of being typed, which the other searches reach only at random places.

For each source (the spec's program texts, then the examples) one document is opened
empty and the text is sent a piece at a time as `didChange` ranges at its end. After each
piece, hover, completion, signature help, definition, references, prepare rename, rename,
formatting, semantic tokens, document symbols and folding ranges are asked at the end of
the text and at one random earlier place (rename only where prepare rename offers it), and
each must be a result, never an error response, with every range inside the document. At the end the diagnostics must be a
fresh `didOpen`'s, and the server's stderr must hold no traceback or logged exception.

By hand: `python tests/fuzz/prefix_search.py --seed 1 --stride 1 --match spec`.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lsp_search  # noqa: E402
import tools_search  # noqa: E402
from lsp_search import Server, position_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
_ASKED = (
    "hover",
    "completion",
    "signatureHelp",
    "definition",
    "references",
    "prepareRename",
    "rename",
)
_WHOLE = ("formatting", "semanticTokens/full", "documentSymbol", "foldingRange")


def _sources(match: str) -> list[tuple[str, str]]:
    out = [(s.name, s.text) for s in tools_search.spec_sources()]
    out += [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted(ROOT.glob("examples/*.sq"))]
    return [(name, text) for name, text in out if match in name]


def _params(method: str, uri: str, text: str, at: int) -> dict:
    doc = {"uri": uri}
    if method in _WHOLE:
        if method == "formatting":
            return {"textDocument": doc, "options": {"tabSize": 2, "insertSpaces": True}}
        return {"textDocument": doc}
    params: dict = {"textDocument": doc, "position": position_of(text, at)}
    if method == "references":
        params["context"] = {"includeDeclaration": True}
    if method == "rename":
        params["newName"] = "renamed_x"
    return params


def type_source(server: Server, name: str, text: str, stride: int, rng: random.Random) -> list[str]:
    """Type `text` into a new document `stride` characters at a time; the problems found."""
    uri = (Path(tempfile.gettempdir()) / f"typed_{abs(hash(name))}.sq").as_uri()
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "serq", "version": 1, "text": ""}},
    )
    out: list[str] = []
    version, typed = 1, ""
    for end in range(stride, len(text) + stride, stride):
        piece = text[len(typed) : end]
        if not piece:
            break
        version += 1
        change = {
            "range": {
                "start": position_of(typed, len(typed)),
                "end": position_of(typed, len(typed)),
            },
            "text": piece,
        }
        server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        )
        typed += piece
        for at in (len(typed), rng.randrange(len(typed) + 1)):
            renamable = False
            for method in _ASKED + (_WHOLE if at == len(typed) else ()):
                if method == "rename" and not renamable:
                    continue  # the server refuses (an error) what prepare rename refused
                answer = server.request(f"textDocument/{method}", _params(method, uri, typed, at))
                renamable = method == "prepareRename" and bool(answer.get("result"))
                where = f"{name} at {len(typed)} ({method} at {at})"
                if "error" in answer:
                    out.append(f"{where}: error {answer['error']}"[:400])
                    continue
                for problem in lsp_search._outside(typed, answer.get("result"), uri, method):
                    out.append(f"{where}: {problem}"[:400])
    got = server.diagnostics(uri, version)
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    fresh_uri = uri.replace("typed_", "fresh_")
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": fresh_uri, "languageId": "serq", "version": 1, "text": typed}},
    )
    fresh = server.diagnostics(fresh_uri, 1)
    server.notify("textDocument/didClose", {"textDocument": {"uri": fresh_uri}})
    if _shape(got) != _shape(fresh):
        out.append(f"{name}: typed diagnostics {_shape(got)} != fresh {_shape(fresh)}"[:600])
    return out


def _shape(diagnostics: list[dict]) -> list[tuple]:
    return sorted(
        (d.get("code"), d["message"], d["range"]["start"]["line"], d["range"]["start"]["character"])
        for d in diagnostics
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stride", type=int, default=1, help="characters per change")
    parser.add_argument("--match", default="", help="only the sources whose name has this")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as log:
        server = Server(stderr=log)
        failures: list[str] = []
        sources = _sources(args.match)
        try:
            for name, text in sources:
                found = type_source(server, name, text, args.stride, rng)
                failures += found
                print(f"{name}: {len(text)} characters, {len(found)} failures", flush=True)
        finally:
            server.close()
        log.seek(0)
        logged = log.read()
    for line in logged.splitlines():
        if "Traceback" in line or "Error" in line or "Exception" in line:
            failures.append(f"server stderr: {line}"[:400])
    for failure in failures[:50]:
        print(failure)
    took = time.monotonic() - started
    print(
        f"{len(sources)} sources, stride {args.stride}, seed {args.seed}: {len(failures)} failures in {took:.0f} s"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
