"""From a file's bytes to the text the parser reads: the byte-order mark and invalid UTF-8.

A file is UTF-8. `decode` never fails: a byte that is not part of a UTF-8
character becomes a lone surrogate (Python's `surrogateescape`), one character
in its place, so every offset after it is still right; the parser then reports
the first one as `E-utf8` at its line and column (`bad_bytes`). A leading
byte-order mark is dropped from a file's text; text that still carries one
(a document an editor sends) is read with the mark as the first character of
line 1, so that positions count it.

A line ends at `\n`, `\r\n` or a lone `\r`, as the language server protocol counts
lines and as an editor shows them; `lines_ended` writes each lone `\r` as `\n` (one
character for one, so offsets stay) before the text is scanned and parsed, so a comment
ends there too and every span's line and column agree with the line index.
"""

from __future__ import annotations

import re

BOM = "\ufeff"
# A name, as a regular expression: a letter of any script or `_`, then letters, digits
# and `_` (`\w`); grammar/serq.lark's NAME, which cannot import it, says the same
NAME_START = r"[^\W\d]"
NAME = NAME_START + r"\w*"
_BAD = re.compile("[\udc80-\udcff]")
_LONE_RETURN = re.compile("\r(?!\n)")


def decode(data: bytes) -> str:
    """The text of a file's `data`: UTF-8 without its byte-order mark, bad bytes escaped."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", "surrogateescape")


def lines_ended(text: str) -> str:
    """`text` with every lone `\r` (not followed by `\n`) written as `\n`: the same line
    breaks, at the same offsets, in the one form the scanner and the parser count."""
    if text.count("\r") == text.count("\r\n"):
        return text
    return _LONE_RETURN.sub("\n", text)


def text_start(text: str) -> int:
    """Where the program begins in `text`: past a byte-order mark, if it has one."""
    return 1 if text.startswith(BOM) else 0


def first_bad_byte(text: str) -> int | None:
    """The offset of the first invalid byte that `decode` escaped in `text`, or None."""
    m = _BAD.search(text)
    return None if m is None else m.start()


def is_bad_byte(char: str) -> bool:
    """Whether `char` stands for an invalid byte (a lone surrogate `decode` made)."""
    return "\udc80" <= char <= "\udcff"


def byte_value(char: str) -> int:
    """The byte that the escaped `char` stands for."""
    return ord(char) - 0xDC00
