"""`serq fmt` on input the search (tests/fuzz/tools_search.py) found it mishandling: a file
with no item at all, and comments inside the `fn main() {` head."""

from __future__ import annotations

import pytest

from serq.formatter import format_source
from serq.formatter.command import fmt


@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n", "\r\n", "\ufeff"])
def test_a_file_without_items_formats_to_nothing(text):
    formatted = format_source(text, "empty.sq")
    assert formatted.ok and formatted.text == ""


@pytest.mark.parametrize("text", ["// only a comment\n", "/* a */\n"])
def test_a_file_of_comments_alone_keeps_them(text):
    assert format_source(text, "c.sq").text == text


def test_fmt_of_an_empty_file_exits_0(tmp_path, capsys):
    path = tmp_path / "empty.sq"
    path.write_text("")
    assert fmt([str(path)], check=True) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("head", "comment"),
    [
        ("fn main() /* c */ {", "/* c */"),
        ("fn main(/* d */) {", "/* d */"),
        ("fn /* e */ main() {", "/* e */"),
        ("fn main() // f\n{", "// f"),
    ],
)
def test_a_comment_in_the_fn_main_head_is_kept(head, comment):
    text = f"{head}\n  stage s : delay;\n}}\n"
    formatted = format_source(text, "main.sq")
    assert formatted.ok
    assert formatted.text == f"fn main() {{ {comment}\n  stage s : delay;\n}}\n"
    assert format_source(formatted.text, "main.sq").text == formatted.text


def test_a_block_comment_of_several_lines_is_not_put_after_a_line_comment():
    """Both end up trailing one line; the `/* */` one after the `//` one would be inside
    it, and its second line would be code."""
    text = "session {\n  run s (1 // one\n  ); /* two\nthree */\n}\nstage s : delay;\n"
    formatted = format_source(text, "c.sq")
    assert formatted.ok
    assert "  run s (1); /* two\nthree */ // one\n" in formatted.text
    again = format_source(formatted.text, "c.sq")
    assert again.ok and again.text == formatted.text
