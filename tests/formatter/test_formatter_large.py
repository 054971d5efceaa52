"""A large file formats in time proportional to its size: a 10,000-line program took 96 s
(each item's nodes were looked for among every node of the file, and each parenthesis
test copied the text before and after the expression), where it takes a few now."""

from __future__ import annotations

import time

from bench.lsp import program
from serq.formatter import format_source


def _took(lines: int, rounds: int) -> float:
    """The least CPU time of this process over `rounds` formats of a program of `lines`
    lines: CPU time, not the wall clock, and the least, so that other work on the machine
    (a test run on every core) does not make the ratio."""
    text = program(lines)
    least = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        assert format_source(text, "large.sq").text == text  # bench's program is formatted
        least = min(least, time.process_time() - start)
    return least


def test_ten_times_the_lines_take_about_ten_times_as_long():
    small = _took(600, 5)  # first: the parser keeps the items it parsed, for both
    large = _took(6000, 2)
    assert large < 25 * small, (small, large)  # linear: about 10; it was above 50
