"""A run's results in the editor: after `serq.run`, inlay hints at each observe, gauge, stage
and pool with the report's figures, their rows on hover, cleared at the next edit of the
item they are in (and only of that item)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.conftest import EXAMPLES, ROOT, SERVER, Docs, position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRAM = """\
let lambda = 0.5;
pool slots { cap 3; }
stage server[2] : fifo(1);
workload { arrive poisson(lambda); }
session {
  set arrived = now;
  choose i in 2 by (queue(server[i]));
  hold slots (1) { run server[i] (~exp(1)); }
  observe sojourn = now - arrived;
}
gauge busy_slots = used(slots);
run { horizon 2000; warmup 100; seed 3; }
"""
REFRESHES: list[object] = []


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": str(ROOT)}),
    scope="module",
)
async def client(lsp_client: LanguageClient):
    @lsp_client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def refresh(params):
        REFRESHES.append(params)

    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            inlay_hint=types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
        )
    )
    params = types.InitializeParams(
        capabilities=capabilities, initialization_options={"debounce": 0.0}
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "fam.sq"
    path.write_text(PROGRAM)
    out = subprocess.run(
        [sys.executable, "-m", "serq.cli", "run", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    return path, json.loads(out)


async def hints(client, uri):
    everything = types.Range(types.Position(0, 0), types.Position(10_000, 0))
    found = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=uri), range=everything)
    )
    return {(h.position.line, h.position.character): h for h in found or []}


def after(text: str, needle: str) -> tuple[int, int]:
    p = position_of(text, needle, delta=len(needle))
    return (p.line, p.character)


async def test_hints_after_a_run_show_the_reports_figures(client, report):
    path, expected = report
    uri = uri_of(path)
    docs = Docs(client)
    assert await docs.open(uri, PROGRAM) == []
    assert await hints(client, uri) == {}  # nothing before a run
    markdown = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="serq.run", arguments=[uri])
    )
    assert markdown.startswith("# Run report")
    found = await hints(client, uri)
    sojourn = expected["observes"]["sojourn"]
    observe = found[after(PROGRAM, "observe sojourn = now - arrived;")]
    assert observe.label == f"{sojourn['mean']:.4g} ± {sojourn['ci']:.4g} (n={sojourn['count']})"
    assert "| count | mean | ci |" in observe.tooltip.value
    gauge = found[after(PROGRAM, "gauge busy_slots = used(slots);")]
    assert gauge.label.startswith(f"{expected['gauges']['busy_slots']['mean']:.4g} ± ")
    rho = [s["utilization"] for s in expected["stages"] if s["name"] == "server"]
    stage = found[after(PROGRAM, "stage server")]
    assert stage.label == "ρ " + " · ".join(f"{u:.4g}" for u in rho)
    rows = [line for line in stage.tooltip.value.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows] == ["| index", "| 0", "| 1"]  # each member
    (slots,) = [p for p in expected["pools"] if p["name"] == "slots"]
    assert found[after(PROGRAM, "pool slots")].label == f"used {slots['mean_used']:.4g}"
    assert len(found) == 4
    assert REFRESHES  # the client was asked to fetch the hints

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(PROGRAM, "sojourn", delta=2),
        )
    )
    assert "**last run**" in hover.contents.value and "| count |" in hover.contents.value

    # lines above move: the hints follow their items
    moved = "let spare = 1;\n" + PROGRAM
    await docs.replace(uri, moved)
    found = await hints(client, uri)
    assert after(moved, "observe sojourn = now - arrived;") in found
    assert len(found) == 4

    # an edit of the session drops its hint, and only its
    edited = moved.replace("now - arrived;", "now - arrived + 0;")
    await docs.replace(uri, edited)
    found = await hints(client, uri)
    assert len(found) == 3
    assert after(edited, "stage server") in found
    assert all("±" not in h.label or "[" in h.label for h in found.values())  # the gauge's stays
    # and undoing it does not bring the cleared hint back
    await docs.replace(uri, moved)
    assert len(await hints(client, uri)) == 3


async def test_a_statistic_observed_in_a_library_shows_at_the_call():
    """`ttft` is observed inside lib/vllm.sq's `vllm_request`: its row shows at the end of
    the line that calls it (the report here is a made-up one, the anchors its reading)."""
    from serq_lsp.analysis import analyze
    from serq_lsp.results import anchors_of, hints, hover_rows

    path = EXAMPLES / "vllm.sq"
    text = path.read_text()
    analysis = analyze(text, str(path))
    row = {"count": 12, "mean": 0.25, "ci": 0.0125, "cv2": 1.5, "p99": 2.0}
    report = {"observes": {"ttft": row, "response": {**row, "mean": 3.5}}}
    anchors = list(anchors_of(analysis, report))
    found = {(h.position.line, h.position.character): h.label for h in hints(analysis, anchors)}
    call = position_of(text, "vllm_request(o, 0);", delta=len("vllm_request(o, 0);"))
    assert found[(call.line, call.character)] == "ttft 0.25 ± 0.0125 (n=12)"
    observe = position_of(text, "observe response = now - arrived;", delta=33)
    assert found[(observe.line, observe.character)] == "3.5 ± 0.0125 (n=12)"
    rows = hover_rows(analysis, anchors, text.index("vllm_request(o") + 2)
    assert rows is not None and "`ttft`" in rows and "| 12 | 0.25 | 0.0125 | 1.5 | 2 |" in rows


LIBRARY = "def service() = 1;\n"
USING = """\
use "rates.sq";
let lambda = 0.5;
stage server : fifo(1);
workload { arrive poisson(lambda); }
session {
  set arrived = now;
  run server (~exp(service()));
  observe sojourn = now - arrived;
}
run { horizon 500; seed 3; }
"""


async def test_hints_are_marked_stale_once_the_program_changes_elsewhere(client, tmp_path):
    """An edit of a `let` the figures read (another item than the hint's), or of a `use`d
    library, leaves the hints marked stale (label and rows), not shown as the program's;
    an undo back to the program that ran makes them current again."""
    (tmp_path / "rates.sq").write_text(LIBRARY)
    path = tmp_path / "using.sq"
    path.write_text(USING)
    uri, library = uri_of(path), uri_of(tmp_path / "rates.sq")
    docs = Docs(client)
    assert await docs.open(uri, USING) == []
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="serq.run", arguments=[uri])
    )
    observe = "observe sojourn = now - arrived;"
    current = (await hints(client, uri))[after(USING, observe)]
    assert "stale" not in current.label and "stale" not in current.tooltip.value

    async def shown(text: str) -> tuple[str, str, str]:
        await docs.replace(uri, text)
        hint = (await hints(client, uri))[after(text, observe)]
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=position_of(text, "sojourn", delta=2),
            )
        )
        return hint.label, hint.tooltip.value, hover.contents.value

    # a blank line and a comment between items: still the program that ran
    moved = "// rates\n\n" + USING
    label, rows, hover = await shown(moved)
    assert label == current.label and "stale" not in rows + hover
    # the `let` the arrivals read
    label, rows, hover = await shown(moved.replace("0.5", "0.9"))
    assert label == current.label + " (stale)"
    assert "changed since this run" in rows and "changed since this run" in hover
    # undone: current again
    label, rows, hover = await shown(moved)
    assert label == current.label and "stale" not in rows + hover
    # the library, edited in its editor
    await docs.open(library, LIBRARY)
    await docs.replace(library, "def service() = 2;\n")
    await docs.published(uri)
    for _ in range(100):  # its user is checked again after the library
        found = await hints(client, uri)
        if found[after(moved, observe)].label.endswith("(stale)"):
            break
        await asyncio.sleep(0.05)
    assert [h.label.endswith(" (stale)") for h in found.values()] == [True, True]
