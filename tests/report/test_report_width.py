"""The text report fits the terminal and keeps every value: at 80 and 40 columns, and piped
(no terminal), a table too wide is cut into groups of columns with the first column
repeated, and no cell is shortened with `…`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from serq.report.text import _table, fit

ROOT = Path(__file__).resolve().parents[2]
VLLM = ROOT / "examples" / "vllm.sq"


def _cells(text: str) -> list[str]:
    return [w for line in text.splitlines() for w in line.split() if not w.startswith("─")]


@pytest.fixture(scope="module")
def wide() -> str:
    """The step-stage table of examples/vllm.sq, printed where nothing limits it."""
    return _serq_run(200)


def _serq_run(columns: int) -> str:
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", "run", str(VLLM), "--horizon", "120"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout


def _step_values(text: str) -> list[str]:
    """The values on the `engine` lines of the step-stage tables, in order."""
    lines = text.splitlines()
    values = []
    for i, line in enumerate(lines):
        if line.startswith("step stage"):
            row = lines[i + 2].split()
            assert row[0] == "engine"
            values.extend(row[1:])
    return values


@pytest.mark.parametrize("columns", [80, 40])
def test_piped_report_keeps_every_column(wide, columns):
    narrow = _serq_run(columns)  # stdout is a pipe: no terminal, no colour
    assert "…" not in narrow
    assert "\x1b[" not in narrow
    assert all(len(line) <= columns for line in narrow.splitlines())
    # iterations, three fractions, three means; the inter-token latency and its percentiles
    assert len(_step_values(wide)) == 10
    assert _step_values(narrow) == _step_values(wide)
    assert set(_cells(wide)) <= set(_cells(narrow))


def test_a_column_wider_than_the_console_stacks_the_rows():
    table = _table("name", "a very long header", "another very long header")
    table.add_row("x", "123456789", "987654321")
    table.add_row("y", "1", "2")
    console = Console(width=24, no_color=True, record=True, file=open(os.devnull, "w"))
    parts = fit(table, console)
    assert not any(isinstance(p, Table) for p in parts) and len(parts) == 2
    for part in parts:
        console.print(part)
    text = console.export_text()
    for value in ("123456789", "987654321", "x", "y", "1", "2"):
        assert value in text.split()
    assert "…" not in text


def test_a_table_that_fits_is_left_whole():
    table = _table("name", "value")
    table.add_row("x", "1")
    console = Console(width=80, file=open(os.devnull, "w"))
    assert fit(table, console) == [table]
