"""docs/editors.md: every snippet starts `serq-lsp`, the command the package installs, and
that command answers LSP on stdio as the snippets expect. The VS Code settings and
commands it lists are the extension's."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
MANIFEST = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC, re.M | re.S)


def test_the_package_installs_serq_lsp():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["scripts"]["serq-lsp"] == "serq_lsp.server:main"


def test_the_neovim_snippets_start_serq_lsp_for_sq_files():
    """One snippet per API generation: 0.7 (`vim.lsp.start_client` in a FileType autocmd,
    the one tests/editors/test_neovim.py runs), 0.10 (`vim.lsp.start`), 0.11
    (`vim.lsp.config`); each uses only what its version has."""
    snippets = {re.search(r"\(Neovim ([\d.]+) and later\)", b).group(1): b for b in _blocks("lua")}
    assert set(snippets) == {"0.7", "0.10", "0.11"}
    for lua in snippets.values():
        assert re.search(r"cmd = \{ 'serq-lsp' \}", lua), lua
    old = snippets["0.7"]
    assert "vim.lsp.start_client(" in old and "pattern = 'serq'" in old
    assert "setfiletype serq" in old and "pattern = '*.sq'" in old
    for newer in ("vim.lsp.start(", "vim.lsp.config", "vim.filetype.add", "vim.fs."):
        assert newer not in old, newer  # none of these is in Neovim 0.7
    assert "vim.lsp.start(" in snippets["0.10"] and "vim.lsp.config" not in snippets["0.10"]
    assert "vim.filetype.add({ extension = { sq = 'serq' } })" in snippets["0.10"]
    assert "filetypes = { 'serq' }" in snippets["0.11"]
    assert "vim.lsp.enable('serq')" in snippets["0.11"]


def test_the_emacs_snippet_starts_serq_lsp_with_eglot():
    (elisp,) = _blocks("elisp")
    assert '(serq-mode . ("serq-lsp"))' in elisp
    assert "eglot-server-programs" in elisp and "eglot-ensure" in elisp
    assert "auto-mode-alist '(\"\\\\.sq\\\\'\" . serq-mode)" in elisp
    assert elisp.count("(") == elisp.count(")") + elisp.count("?(") - elisp.count("?)")


def test_the_helix_snippet_starts_serq_lsp_for_sq_files():
    (snippet,) = _blocks("toml")
    config = tomllib.loads(snippet)
    assert config["language-server"]["serq-lsp"]["command"] == "serq-lsp"
    (language,) = config["language"]
    assert language["file-types"] == ["sq"]
    assert language["language-servers"] == ["serq-lsp"]
    assert language["comment-tokens"] == "//"


def test_the_vscode_snippet_and_table_are_the_extensions_settings():
    (snippet,) = _blocks("json")
    settings = json.loads(snippet)
    properties = MANIFEST["contributes"]["configuration"]["properties"]
    assert settings["serq.server.path"] == properties["serq.server.path"]["default"] == "serq-lsp"
    for key, value in settings.items():
        assert properties[key]["default"] == value, key
    table = set(re.findall(r"^\| `(serq\.[\w.]+)` \|", DOC, re.M))
    assert table == set(properties)


def test_the_vscode_commands_are_the_extensions():
    listed = set(re.findall(r"\(`(serq\.\w+)`\)", DOC))
    assert listed == {c["command"] for c in MANIFEST["contributes"]["commands"]}


@pytest.mark.skipif(shutil.which("serq-lsp") is None, reason="serq-lsp is not installed")
def test_serq_lsp_answers_initialize_on_stdio():
    """What every snippet relies on: `serq-lsp` with no arguments speaks LSP on stdio."""

    def message(payload: dict) -> bytes:
        body = json.dumps({"jsonrpc": "2.0", **payload}).encode()
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)

    requests = [
        message({"id": 1, "method": "initialize", "params": {"capabilities": {}}}),
        message({"method": "initialized", "params": {}}),
        message({"id": 2, "method": "shutdown"}),
        message({"method": "exit"}),
    ]
    done = subprocess.run(
        [shutil.which("serq-lsp")], input=b"".join(requests), capture_output=True, timeout=60
    )
    answers, rest = [], done.stdout
    while header := re.match(rb"Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n", rest):
        length = int(header.group(1))
        answers.append(json.loads(rest[header.end() : header.end() + length]))
        rest = rest[header.end() + length :]
    (initialized,) = [a for a in answers if a.get("id") == 1]
    capabilities = initialized["result"]["capabilities"]
    assert capabilities["textDocumentSync"]
    assert "serq.showKernel" in capabilities["executeCommandProvider"]["commands"]
