"""Every serQ program in docs/ checks (` ```serq ` blocks, see blocks.py), and every
tutorial example runs and measures something."""

from __future__ import annotations

import json
import math

import pytest

from serq import api, cli
from tests.docs.blocks import DOCS, ROOT, programs, reported

PROGRAMS = programs(sorted(DOCS.glob("*.md")))
TUTORIAL = sorted((ROOT / "examples" / "tutorial").glob("*.sq"))


def test_the_docs_have_programs() -> None:
    pages = {b.path.name for b in PROGRAMS}
    assert {"tutorial.md", "language.md"} <= pages


@pytest.mark.parametrize("block", PROGRAMS, ids=lambda b: b.id)
def test_docs_program_checks(block) -> None:
    # A program's `use` paths are relative to the page it stands in.
    path = str(block.path.parent / f"{block.path.stem}-line{block.line}.sq")
    if block.expected is None:
        found = [(d.code, d.message) for d in api.check_source(block.text, path)]
        assert found == [], f"{block.id}: {found}"
    else:
        found = reported(block, path)
        assert block.expected in found, f"{block.id}: {found}"


def test_the_tutorial_shows_each_step_as_it_is() -> None:
    """Each tutorial example is on the page whole, as a `serq` block, so the page's
    programs are the files that run."""
    assert len(TUTORIAL) >= 7
    shown = {b.text for b in PROGRAMS if b.path.name == "tutorial.md"}
    text = (DOCS / "tutorial.md").read_text(encoding="utf-8")
    for path in TUTORIAL:
        assert f"examples/tutorial/{path.name}" in text, path.name
        assert path.read_text(encoding="utf-8") in shown, (
            f"{path.name} differs from docs/tutorial.md: python scripts/tutorial_outputs.py"
        )


@pytest.mark.parametrize("path", TUTORIAL, ids=lambda p: p.name)
def test_tutorial_example_runs(path, capsys) -> None:
    status = cli.main(["run", str(path), "--horizon", "60", "--warmup", "0", "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err == ""
    report = json.loads(captured.out)
    assert report["arrivals"] > 0 and report["observes"]
    for name, o in report["observes"].items():
        assert o["count"] > 0, name
        assert o["mean"] is not None and math.isfinite(o["mean"]) and o["mean"] >= 0, name


@pytest.mark.parametrize("block", [b for b in PROGRAMS if b.expected is None], ids=lambda b: b.id)
def test_docs_program_runs(block) -> None:
    """A clean program of the docs also runs (30 time units, no warm-up) without failing."""
    from serq.sim import api as sim_api

    path = str(block.path.parent / f"{block.path.stem}-line{block.line}.sq")
    arrivals = 5 if "arrivals" in block.text else None  # a count a short run can reach
    compiled, diagnostics = sim_api.compile_program(
        block.text, path, horizon=30, warmup=0, arrivals=arrivals
    )
    assert compiled is not None, [d.message for d in diagnostics]
    report, ran = sim_api.execute(compiled)
    assert report is not None and ran == [], [d.message for d in ran]
    assert report.arrivals > 0


def test_every_tutorial_command_has_its_output() -> None:
    """scripts/tutorial_outputs.py can refresh every `serq run` the tutorial shows: each
    is a ```sh block followed by the ```text block of its output."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "tutorial_outputs", ROOT / "scripts" / "tutorial_outputs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (DOCS / "tutorial.md").read_text(encoding="utf-8")
    commands = [line for line in text.splitlines() if line.startswith("serq run ")]
    paired = [m.group(2) for m in module._PAIR.finditer(text)]
    assert commands and paired == commands
    for path in TUTORIAL:
        assert any(f"examples/tutorial/{path.name}" in c for c in commands), path.name
