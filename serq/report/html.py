"""The report for a notebook: the terminal report's tables as HTML (`Report._repr_html_`).

The tables are the ones `text.sections` builds for the terminal, so the two show the same
rows and the same numbers; each becomes an HTML `<table>`, and a note a paragraph.
"""

from __future__ import annotations

from html import escape

from rich.table import Table
from rich.text import Text

from serq.report.model import Report
from serq.report.text import header, sections


def report_html(report: Report) -> str:
    """`report` as HTML: the header lines, then each table and note."""
    parts = [f"<pre>{escape(header(report))}</pre>"]
    for section in sections(report):
        if isinstance(section, Table):
            parts.append(_table(section))
        else:
            parts.append(f"<p>{escape(Text.from_markup(section).plain)}</p>")
    return '<div class="serq-report">' + "".join(parts) + "</div>"


def _table(table: Table) -> str:
    head = "".join(f"<th>{escape(_plain(c.header))}</th>" for c in table.columns)
    columns = [[_plain(cell) for cell in column.cells] for column in table.columns]
    rows = zip(*columns, strict=True) if columns else []
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _plain(cell: object) -> str:
    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)
