"""`serq fmt` on a source holding NUL, U+0001 or U+0002, the characters the layout used as
its own marks: a NUL in a comment (a valid program) raised a ValueError, as did a binary
file; a U+0002 in a trailing comment moved the comment's end into the code (`let x = 1;
b // a`, a program that no longer parses); a U+0001 at the start of a line left as written
was dropped. Each is now written back as it was."""

from __future__ import annotations

import pytest

from serq.formatter import format_source
from serq.formatter.command import fmt
from serq.syntax import parse

RUN = "run {\n  horizon 10;\n}\n"


@pytest.mark.parametrize("mark", ["\x00", "\x01", "\x02"])
@pytest.mark.parametrize(
    "template",
    [
        "let x = 1; // a{m}b\nlet y = 2; // c\n\n" + RUN,
        "// a{m}b\nlet x = 1;\n\n" + RUN,
        "/* a{m}b */\nlet x = 1; /* c{m} */\n\n" + RUN,
        'use "a{m}b"; // c\nlet y = 1; // d\n',
    ],
)
def test_a_mark_character_in_a_comment_or_string_is_kept(mark, template):
    text = template.replace("{m}", mark)
    formatted = format_source(text, "c.sq")
    assert formatted.text == text
    assert [d.code for d in formatted.diagnostics] == [d.code for d in parse(text).diagnostics]


@pytest.mark.parametrize(
    "text",
    [
        "\x00\x01\x02 binary",
        "\x01 let x = ;\nlet y = 1; // c\n",
        "let x = \x00;\nlet y = 1; // c\n",
        "let x = \x02 ;\n",
    ],
)
def test_a_mark_character_in_broken_text_is_kept_and_reported(text):
    formatted = format_source(text, "b.sq")
    assert formatted.diagnostics  # the text's own: U+0000 is named, not a stand-in
    assert [d.message for d in formatted.diagnostics] == [
        d.message for d in parse(text.replace("\r", "\n")).diagnostics
    ]
    for mark in "\x00\x01\x02":
        assert formatted.text.count(mark) == text.count(mark)
    assert format_source(formatted.text, "b.sq").text == formatted.text


def test_a_lone_cr_after_a_comment_with_a_nul_is_a_line_end():
    formatted = format_source("let a = 1; // \x00\rlet b = 2;\n", "r.sq")
    assert formatted.ok and formatted.text == "let a = 1; // \x00\nlet b = 2;\n"


def test_fmt_of_a_binary_file_reports_and_does_not_raise(tmp_path, capsys):
    path = tmp_path / "bin.sq"
    path.write_bytes(b"\x00\x01\x02\xff\xfe binary")
    assert fmt([str(path)]) == 1
    err = capsys.readouterr().err
    assert "unexpected character U+0000" in err and "left as written" in err
    assert "Traceback" not in err
    assert path.read_bytes().startswith(b"\x00\x01\x02\xff\xfe binary")
