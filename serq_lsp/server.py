"""The serQ language server: `serq-lsp` over stdio, `serq-lsp --tcp` for debugging.

Features live one per module; this module builds the server and starts it.
"""

from __future__ import annotations

import argparse
import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from serq import __version__, api
from serq.diagnostics import LineIndex
from serq.syntax import ItemCache
from serq_lsp.convert import lsp_diagnostic


class SerqServer(LanguageServer):
    """A language server that keeps one item cache for every document it parses."""

    def __init__(self) -> None:
        super().__init__("serq-lsp", __version__)
        self.items = ItemCache()

    def publish(self, uri: str) -> None:
        """Check the document at `uri` and push its diagnostics."""
        document = self.workspace.get_text_document(uri)
        text = document.source
        path = document.path or uri
        diagnostics = api.check_source(text, path, self.items)
        lines = LineIndex(text)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                version=document.version,
                diagnostics=[lsp_diagnostic(d, lines, uri) for d in diagnostics],
            )
        )


server = SerqServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: SerqServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: SerqServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: SerqServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: SerqServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def main(argv: list[str] | None = None) -> None:
    """Start the server on stdio, or on a TCP port with `--tcp`."""
    parser = argparse.ArgumentParser(prog="serq-lsp", description="The serQ language server.")
    parser.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2087)
    parser.add_argument("--version", action="version", version=f"serq-lsp {__version__}")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()


if __name__ == "__main__":
    main()
