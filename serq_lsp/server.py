"""The serQ language server: `serq-lsp` over stdio, `serq-lsp --tcp` for debugging.

Features live one per module, each with a `register(server)`; this module builds the
server, registers them and starts it.
"""

from __future__ import annotations

import argparse
import logging
import sys

from serq import __version__
from serq_lsp import (
    code_actions,
    commands,
    completion,
    diagnostics,
    folding,
    formatting,
    framing,
    hover,
    navigation,
    results,
    semantic_tokens,
    signature,
    symbols,
)
from serq_lsp.state import SerqServer

FEATURES = (
    diagnostics,
    hover,
    navigation,
    symbols,
    semantic_tokens,
    completion,
    signature,
    folding,
    commands,
    results,
    formatting,
    code_actions,
)


def build_server() -> SerqServer:
    """A server with every feature registered."""
    server = SerqServer()
    for feature in FEATURES:
        feature.register(server)
    return server


server = build_server()


def main(argv: list[str] | None = None) -> None:
    """Start the server on stdio, or on a TCP port with `--tcp`."""
    parser = argparse.ArgumentParser(prog="serq-lsp", description="The serQ language server.")
    parser.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    parser.add_argument(
        "--host", default="127.0.0.1", help="the address --tcp listens on (default 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=2087, help="the port --tcp listens on (default 2087)"
    )
    parser.add_argument("--version", action="version", version=f"serq-lsp {__version__}")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.tcp:
        framing.serve_tcp(server, args.host, args.port)
    else:
        sys.exit(framing.serve_stdio(server))


if __name__ == "__main__":
    main()
