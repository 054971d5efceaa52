"""Text in: a byte-order mark is read, invalid UTF-8 is an error at its first bad byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from serq import api
from serq.syntax import parse, parse_whole
from serq.syntax.source_text import decode

ROOT = Path(__file__).resolve().parents[2]
MM1 = (ROOT / "examples" / "mm1.sq").read_bytes()


def _serq(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "serq.cli", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_bom_file_checks_and_runs(tmp_path):
    path = tmp_path / "bom.sq"
    path.write_bytes(b"\xef\xbb\xbf" + MM1)
    assert _serq("check", str(path)).returncode == 0
    ran = _serq("run", str(path), "--horizon", "50", "--warmup", "0", "--json")
    assert ran.returncode == 0 and json.loads(ran.stdout)


def test_bom_text_counts_as_the_first_column():
    text = "\ufefflet x = ;\n"
    for parsed in (parse(text, "b.sq"), parse_whole(text, "b.sq")):
        (d,) = parsed.diagnostics
        # `;` is the 10th character of the text, the BOM included: the LSP counts it
        assert (d.code, d.span.line, d.span.column, d.span.start) == ("E-parse", 1, 10, 9)


def test_decode_drops_the_bom_and_escapes_bad_bytes():
    assert decode(b"\xef\xbb\xbfab") == "ab"
    assert decode(b"a\xffb") == "a\udcffb"


def test_invalid_utf8_is_an_error_at_the_first_bad_byte(tmp_path):
    bad = MM1.replace(b"// M/M/1", b"// M/M/\xc3(", 1).replace(b"stage server", b"stage s\xff", 1)
    path = tmp_path / "bad.sq"
    path.write_bytes(bad)
    checked = _serq("check", "--json", str(path))
    assert checked.returncode == 1, checked.stderr
    (d,) = json.loads(checked.stdout)
    assert d["code"] == "E-utf8" and d["severity"] == "error"
    assert (d["span"]["start"]["line"], d["span"]["start"]["column"]) == (1, 8)
    assert "0xC3" in d["message"] and "1 more" in d["message"]
    shown = _serq("check", str(path))
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    assert "bad.sq:1:8" in shown.stderr and "\ufffd" in shown.stderr
    assert _serq("run", str(path)).returncode == 1


def test_invalid_utf8_in_a_used_library(tmp_path):
    (tmp_path / "lib.sq").write_bytes(b"def f(x) = x; // \xfe\n")
    main = tmp_path / "main.sq"
    main.write_bytes(b'use "lib.sq";\n' + MM1)
    diagnostics = api.check_source(api.read_source(str(main)), str(main))
    assert [(d.code, d.span.file.endswith("lib.sq"), d.span.column) for d in diagnostics] == [
        ("E-utf8", True, 18)
    ]


def test_a_path_with_a_nul_byte_is_a_diagnostic():
    """A `use` path or a file name with a NUL byte, which no system can open (Python
    raises ValueError, not OSError): E-use at the `use`, E-io for the file, and the
    language server's loader says why too (found by the fuzz harness at seed 10606)."""
    text = 'use "lib\x00.sq";\n' + MM1.decode()
    (d,) = api.check_source(text, "main.sq")
    assert (d.code, d.span.line, "embedded null byte" in d.message) == ("E-use", 1, True)
    read = api.read_source("main\x00.sq")
    assert (read.code, "embedded null byte" in read.message) == ("E-io", True)
    from serq_lsp.state import SerqServer

    assert "null byte" in SerqServer._load(_NoDocuments(), "lib\x00.sq")


class _NoDocuments:
    """What `SerqServer._load` reads of its server when no editor buffer is open."""

    class workspace:  # noqa: N801 - the attribute's name
        text_documents: dict = {}

    items = None


def test_control_characters_stay_parse_errors():
    (d,) = parse("let x = 1;\x00\n", "c.sq").diagnostics
    assert (d.code, d.span.line, d.span.column) == ("E-parse", 1, 11)


def test_control_characters_are_named_by_their_code_point():
    # the raw character in the message garbled the terminal (an ESC) or showed nothing (NUL)
    for char, name in (("\x00", "U+0000"), ("\x1b", "U+001B"), ("\x7f", "U+007F")):
        (d,) = parse(f"let x = 1;{char}\n", "c.sq").diagnostics
        assert (d.span.column, d.message) == (11, f"unexpected character {name}")
    (d,) = parse("let x = 1 @ 2;\n", "c.sq").diagnostics
    assert d.message == "unexpected character `@`"


def test_each_kind_of_bad_byte_is_said_what_it_is():
    cases = [
        (b"// caf\xc3\n", 1, 7, "the sequence byte 0xC3 begins is cut short or malformed"),
        (b"// \xe2\x82\n", 1, 4, "the sequence byte 0xE2 begins is cut short or malformed (and 1 more)"),
        (b"// \x82 x\n", 1, 4, "byte 0x82 continues no character"),
        (b"let x = 1;\n// \xff\n", 2, 4, "byte 0xFF is never part of UTF-8"),
        (b"// \xed\xa0\x80\n", 1, 4, "the sequence byte 0xED begins is cut short or malformed (and 2 more)"),
    ]  # fmt: skip
    for data, line, column, message in cases:
        (d,) = parse(decode(data), "u.sq").diagnostics
        assert (d.code, d.span.line, d.span.column) == ("E-utf8", line, column), data
        assert d.message == f"invalid UTF-8: {message}", data
