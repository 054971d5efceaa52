"""Language-server latency on a 2 MB document: open, a one-character edit to its
`publishDiagnostics`, and a hover sent while that edit's check is pending; with `--first`,
the first request after opening a document (hover, completion, semantic tokens, document
symbols, folding, and a hover on a `prefill` form, which waits for the expander to show
its kernel), each on a fresh server, against the time of its first analysis.

Run by hand from the repository root:

    PYTHONPATH=. python bench/lsp_large.py [--megabytes 2] [--rounds 5] [--insert]
                                           [--target let|server]
    PYTHONPATH=. python bench/lsp_large.py --first [--lines 10000] [--rounds 3]

The goals (issue 17, item 7): the edit publishes within 500 ms and the hover answers
within 100 ms. The server is a real `serq-lsp` subprocess over stdio, debounce 0. The edit
is a digit of `let c3` near the top, read by nothing (`--target let`), or of an
expression in the server at the end, part of the deployment that every check of the
program reads (`--target server`).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from bench.lsp import program, start_server

ROOT = Path(__file__).resolve().parents[1]
# never written (the document lives in the editor only); next to examples/lib so that its
# `use "lib/vllm.sq";` resolves and the program links, as a user's would
FILE = ROOT / "examples" / "lsp_large.sq"


def large_program(megabytes: float) -> str:
    """A program of about `megabytes` MB (bench/lsp.py's program, with more constants)."""
    lines = 1000
    while True:
        text = program(lines)
        if len(text) >= megabytes * 1_000_000:
            return text
        lines = int(lines * megabytes * 1_000_000 / len(text)) + 10


# where the edited digit is: the line that begins with the first text, after the second
TARGETS = {"let": ("let c3 ", "= "), "server": ("  set hitmax", "- ")}


async def main(megabytes: float, rounds: int, insert: bool, target: str = "let") -> None:
    published: asyncio.Queue = asyncio.Queue()
    client = await start_server(published, 0.0)
    text = large_program(megabytes)
    uri = FILE.as_uri()
    doc = types.TextDocumentIdentifier(uri=uri)
    start = time.perf_counter()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="serq", version=1, text=text)
        )
    )
    await published.get()
    opened = time.perf_counter() - start
    lines = text.splitlines()
    begins, before = TARGETS[target]
    target = next(i for i, line in enumerate(lines) if line.startswith(begins))
    use = next(i for i, line in enumerate(lines) if "min(prompt, hit" in line)
    position = types.Position(line=use, character=lines[use].index("prompt"))
    changes, hovers = [], []
    answered = 0  # hovers that named `prompt`, as a fresh analysis does
    for n in range(rounds):
        digit = str(n % 10)
        at = lines[target].index(before) + len(before)
        # replace the digit, or with --insert put one in front of it and take it out again
        # (every later item moves by one character)
        width = 0 if insert and n % 2 == 0 else 1
        text_in = digit if not insert or n % 2 == 0 else ""
        edit = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=target, character=at),
                end=types.Position(line=target, character=at + width),
            ),
            text=text_in,
        )
        lines[target] = lines[target][:at] + text_in + lines[target][at + width :]
        start = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=n + 2),
                content_changes=[edit],
            )
        )
        hover_start = time.perf_counter()
        found = await client.text_document_hover_async(
            types.HoverParams(text_document=doc, position=position)
        )
        hovers.append(time.perf_counter() - hover_start)
        answered += found is not None and "prompt" in found.contents.value
        while True:
            done, params = await published.get()
            if params.version == n + 2:
                break
        changes.append(done - start)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    print(f"document: {len(text) / 1e6:.2f} MB, {len(lines)} lines; open {opened:.2f} s")
    print(f"hovers that answered `prompt`: {answered} of {rounds}")
    for name, values, goal in (
        ("one-character edit -> publish", changes, 500),
        ("hover while the check is pending", hovers, 100),
    ):
        ms = sorted(v * 1000 for v in values)
        print(
            f"{name:34s} median {statistics.median(ms):8.1f} ms  "
            f"min {ms[0]:8.1f}  max {ms[-1]:8.1f}  (goal {goal} ms)"
        )
        print(f"{'':34s} rounds: " + " ".join(f"{v * 1000:.0f}" for v in values))


FIRST = ("hover", "completion", "semanticTokens", "documentSymbol", "foldingRange", "hoverForm")


def _request(client: LanguageClient, kind: str, uri: str, position: types.Position):
    """The request `kind` (one of `FIRST`) at `position` of the document at `uri`."""
    doc = types.TextDocumentIdentifier(uri=uri)
    if kind in ("hover", "hoverForm"):
        return client.text_document_hover_async(types.HoverParams(doc, position))
    if kind == "completion":
        return client.text_document_completion_async(types.CompletionParams(doc, position))
    if kind == "semanticTokens":
        return client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(doc))
    if kind == "documentSymbol":
        return client.text_document_document_symbol_async(types.DocumentSymbolParams(doc))
    return client.text_document_folding_range_async(types.FoldingRangeParams(doc))


async def first_requests(lines: int, rounds: int) -> None:
    """Each request of `FIRST` sent right after `didOpen` of a `lines`-line document, on a
    fresh server each round: its latency, and when the open's diagnostics came."""
    text = program(lines)
    rows = text.splitlines()
    use = next(i for i, line in enumerate(rows) if "min(prompt, hit" in line)
    position = types.Position(line=use, character=rows[use].index("prompt"))
    form = next(i for i, line in enumerate(rows) if line.lstrip().startswith("prefill ("))
    on_form = types.Position(line=form, character=rows[form].index("prefill"))
    print(f"document: {len(rows)} lines, {len(text) / 1e6:.2f} MB; each figure a fresh server")
    for kind in FIRST:
        answers, analyses = [], []
        for _ in range(rounds):
            published: asyncio.Queue = asyncio.Queue()
            client = await start_server(published, 0.0)
            uri = FILE.as_uri()
            start = time.perf_counter()
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(
                        uri=uri, language_id="serq", version=1, text=text
                    )
                )
            )
            at = on_form if kind == "hoverForm" else position
            answer = await _request(client, kind, uri, at)
            answers.append(time.perf_counter() - start)
            assert answer is not None, kind
            done, _ = await published.get()
            analyses.append(done - start)
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()
        answer_ms = statistics.median(answers) * 1000
        analysis_ms = statistics.median(analyses) * 1000
        print(
            f"first {kind:15s} answered {answer_ms:7.0f} ms after didOpen; "
            f"the analysis published at {analysis_ms:7.0f} ms (medians of {rounds})"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--insert", action="store_true", help="insert and delete a character, not replace one"
    )
    parser.add_argument("--target", choices=sorted(TARGETS), default="let")
    parser.add_argument(
        "--first", action="store_true", help="time the first request after opening instead"
    )
    parser.add_argument("--lines", type=int, default=10_000, help="with --first: its size")
    args = parser.parse_args()
    if args.first:
        asyncio.run(first_requests(args.lines, args.rounds))
    else:
        asyncio.run(main(args.megabytes, args.rounds, args.insert, args.target))
