"""Code lenses and commands: Show kernel, Show IR, and runs in a worker, cancelled or timed out."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.conftest import EXAMPLES, ROOT, SERVER, Docs, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

SLEEPER = str(Path(__file__).with_name("sleeper.py"))
PATH = EXAMPLES / "mm1.sq"
URI = uri_of(PATH)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": str(ROOT)}),
    scope="module",
)
async def runner(lsp_client: LanguageClient):
    """A client whose server runs programs with the sleeper (2 s) instead of `serq run`."""
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        initialization_options={
            "debounce": 0.0,
            "runCommand": [sys.executable, SLEEPER, "{file}", "2"],
        },
    )
    await lsp_client.initialize_session(params)
    await Docs(lsp_client).open(URI, PATH.read_text())
    yield
    await lsp_client.shutdown_session()


async def command(client, name, *args):
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=[URI, *args])
    )


async def test_code_lenses(runner):
    lenses = await runner.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    assert [lens.command.title for lens in lenses] == ["Run", "Show IR", "Show kernel"]


async def test_show_kernel_and_ir(runner):
    kernel = await command(runner, "serq.showKernel")
    assert kernel.startswith("```serq") and "stage server : fifo(1);" in kernel
    ir = await command(runner, "serq.showIR")
    assert ir.startswith("```json") and '"stages"' in ir


async def test_run_reports_markdown(runner):
    report = await command(runner, "serq.run")
    assert report.startswith("# Run report") and "**turns** 3" in report
    assert "## Stages" in report and "| server |" in report  # sections as tables


async def test_run_times_out(runner):
    with pytest.raises(Exception, match="longer than 0.5 s"):
        await command(runner, "serq.run", 0.5)


async def test_run_cancelled_by_command_and_server_goes_on(runner):
    run = asyncio.ensure_future(command(runner, "serq.run"))
    await asyncio.sleep(0.5)
    assert await command(runner, "serq.cancelRun") is True
    with pytest.raises(Exception, match="cancelled"):
        await asyncio.wait_for(run, 1.5)  # well before the sleeper's 2 s
    assert (await command(runner, "serq.showKernel")).startswith("```serq")
