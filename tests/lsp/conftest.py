"""The serq-lsp server as a real subprocess over stdio, driven by pytest-lsp."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

SERVER = [sys.executable, "-m", "serq_lsp.server"]


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": str(ROOT)}),
    scope="module",
)
async def client(lsp_client: LanguageClient):
    """A client with an initialized session; the server checks at once (no debounce)."""
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=ROOT.as_uri(),
        initialization_options={"debounce": 0.0},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


class Docs:
    """Open, edit and wait on documents of one client."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.versions: dict[str, int] = {}

    async def open(self, uri: str, text: str) -> list[types.Diagnostic]:
        self.versions[uri] = 1
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="serq", version=1, text=text
                )
            )
        )
        return await self.published(uri)

    async def replace(self, uri: str, text: str) -> list[types.Diagnostic]:
        self.versions[uri] += 1
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await self.published(uri)

    async def published(self, uri: str, timeout: float = 10.0) -> list[types.Diagnostic]:
        """The next diagnostics published for `uri` (those already received if any)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while uri not in self.client.diagnostics:
            if loop.time() > deadline:
                raise TimeoutError(f"no diagnostics for {uri}")
            await asyncio.sleep(0.01)
        return list(self.client.diagnostics[uri])

    async def format(self, uri: str) -> list[types.TextEdit] | None:
        """The server's edits formatting the whole of `uri` (two spaces an indent)."""
        return await self.client.text_document_formatting_async(
            types.DocumentFormattingParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                options=types.FormattingOptions(tab_size=2, insert_spaces=True),
            )
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )


@pytest.fixture
def docs(client: LanguageClient) -> Docs:
    return Docs(client)


def uri_of(path: Path) -> str:
    return path.resolve().as_uri()


def position_of(text: str, needle: str, nth: int = 0, delta: int = 0) -> types.Position:
    """The LSP position (UTF-16 columns) of the `nth` occurrence of `needle`, plus `delta`."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    at += delta
    line = text.count("\n", 0, at)
    start = text.rfind("\n", 0, at) + 1
    column = len(text[start:at].encode("utf-16-le")) // 2
    return types.Position(line=line, character=column)


@pytest.fixture
def wire():
    """serq-lsp over raw stdio (`test_lsp_robust.Wire`), killed after the test if it still
    runs."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_lsp_robust import Wire

    w = Wire()
    yield w
    if w.process.poll() is None:
        w.process.kill()
        w.process.wait()


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """`text` with LSP `edits` (non-overlapping) applied; its characters are one UTF-16
    code unit each (ASCII, a byte-order mark)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(p: types.Position) -> int:
        return offsets[min(p.line, len(lines))] + p.character

    for e in sorted(edits, key=lambda e: at(e.range.start), reverse=True):
        text = text[: at(e.range.start)] + e.new_text + text[at(e.range.end) :]
    return text
