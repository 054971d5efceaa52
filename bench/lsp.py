"""Language-server latency on a 1,000-line program: a one-line `didChange` to its
`publishDiagnostics`, and hover and definition requests.

Run by hand from the repository root:

    PYTHONPATH=. python bench/lsp.py [--debounce SECONDS] [--rounds N]

The server is a real `serq-lsp` subprocess over stdio. The figures are medians over the
rounds (default 20), with the debounce given (default 0: the check's own cost).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "bench" / "lsp_bench.sq"  # never written: the document lives in the editor only


def program(lines: int = 1000) -> str:
    """A program of `lines` lines: constants, defs, then the vLLM chat example."""
    tail = (ROOT / "examples" / "vllm_chat.sq").read_text().splitlines()
    head: list[str] = []
    k = 0
    while len(head) + len(tail) < lines:
        head.append(f"let c{k} = {k} * 2 + 1;")
        if k % 5 == 4:
            head.append(f"def f{k}(a, b) = a * b + c{k};")
        k += 1
    return "\n".join(head[: lines - len(tail)] + tail) + "\n"


async def start_server(published: asyncio.Queue, debounce: float) -> LanguageClient:
    """A `serq-lsp` subprocess, initialized with `debounce`, whose publishes go to
    `published` as (time, params)."""
    client = LanguageClient("bench", "1")

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait((time.perf_counter(), params))

    await client.start_io(sys.executable, "-m", "serq_lsp.server")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(), initialization_options={"debounce": debounce}
        )
    )
    client.initialized(types.InitializedParams())
    return client


async def main(debounce: float, rounds: int) -> None:
    published: asyncio.Queue = asyncio.Queue()
    client = await start_server(published, debounce)
    text = program()
    uri = FILE.as_uri()
    doc = types.TextDocumentIdentifier(uri=uri)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="serq", version=1, text=text)
        )
    )
    await published.get()
    lines = text.splitlines()
    target = next(i for i, line in enumerate(lines) if line.startswith("let c3 "))
    changes, hovers, definitions = [], [], []
    use = next(i for i, line in enumerate(lines) if "min(prompt, hit" in line)
    column = lines[use].index("prompt")
    for n in range(rounds):
        edit = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=target, character=0),
                end=types.Position(line=target, character=len(lines[target])),
            ),
            text=f"let c3 = {n} + 7;",
        )
        lines[target] = f"let c3 = {n} + 7;"
        start = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=n + 2),
                content_changes=[edit],
            )
        )
        while True:
            at, params = await published.get()
            if params.version == n + 2:
                break
        changes.append(at - start)
        position = types.Position(line=use, character=column)
        start = time.perf_counter()
        await client.text_document_hover_async(
            types.HoverParams(text_document=doc, position=position)
        )
        hovers.append(time.perf_counter() - start)
        start = time.perf_counter()
        await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc, position=position)
        )
        definitions.append(time.perf_counter() - start)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    print(
        f"program: {len(text.splitlines())} lines; debounce {debounce * 1000:g} ms; {rounds} rounds"
    )
    for name, values, goal in (
        ("didChange -> publishDiagnostics", changes, 50),
        ("hover", hovers, 20),
        ("definition", definitions, 20),
    ):
        ms = sorted(v * 1000 for v in values)
        print(
            f"{name:34s} median {statistics.median(ms):6.1f} ms  "
            f"min {ms[0]:6.1f}  max {ms[-1]:6.1f}  (goal {goal} ms)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--debounce", type=float, default=0.0)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.debounce, args.rounds))
