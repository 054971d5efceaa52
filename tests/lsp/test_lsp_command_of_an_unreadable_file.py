"""A command (`serq.run`, `serq.showIR`, `serq.showKernel`) of a document neither open nor
readable says why in the words every serq command uses ("no such file", "it is a
directory"), not the system's ("[Errno 2] No such file or directory: '/x.sq'")."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("command", ["serq.run", "serq.showIR", "serq.showKernel"])
def test_a_missing_file_and_a_directory(wire, tmp_path, command):
    wire.initialize()
    missing, folder = tmp_path / "missing.sq", tmp_path / "folder.sq"
    folder.mkdir()
    for k, (path, why) in enumerate([(missing, "no such file"), (folder, "it is a directory")]):
        wire.request(
            k, "workspace/executeCommand", {"command": command, "arguments": [path.as_uri()]}
        )
        error = wire.answer(k)["error"]
        assert error["code"] == -32602, error
        assert error["message"] == f"cannot read `{path.as_uri()}`: {why}", error
