"""The commands that parse with the server's item cache (Show IR, Show Kernel) wait for
the item lock, which the checker thread holds while it analyses: the cache is one
structure, not made for two threads changing it at once."""

from __future__ import annotations

import threading
import time

import pytest

from serq_lsp import commands
from serq_lsp.commands import SHOW_IR, SHOW_KERNEL
from serq_lsp.server import build_server
from tests.lsp.conftest import EXAMPLES


@pytest.mark.parametrize("command", [SHOW_IR, SHOW_KERNEL])
def test_a_command_parses_only_while_it_holds_the_item_lock(command, monkeypatch):
    server = build_server()
    path = EXAMPLES / "mm1.sq"
    function = server.protocol.fm.commands[command]
    # the document as the workspace would give it (no client here to open it)
    monkeypatch.setattr(commands, "_document", lambda ls, uri: (path.read_text(), str(path)))
    held_while_parsing = []

    done = threading.Event()
    answer = []

    def call():
        answer.append(function(path.as_uri()))  # pygls passes the server itself
        done.set()

    with server.item_lock:
        worker = threading.Thread(target=call)
        worker.start()
        time.sleep(0.3)
        held_while_parsing.append(done.is_set())  # it must still wait here
    worker.join(10)
    assert held_while_parsing == [False]
    assert done.is_set() and answer[0].startswith("```")
