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
from collections.abc import Callable

BOM = "\ufeff"
# A name, as a regular expression, as the reference reads one (Rust's `is_alphabetic`
# to begin, `is_alphanumeric` after): a character of Unicode's Alphabetic property or `_`,
# then those, numbers of any kind and `_`. Python's `\w` has no such property; it is the
# letters, the numbers (`²`, `½`, `①` among them, which may not begin a name) and `_`,
# without the Alphabetic marks and symbols of _MARKS (the vowel sign of `मान`, the
# circled `Ⓐ`: Unicode 14.0's Other_Alphabetic outside `\w`, as Perl's tables list it).
# grammar/serq.lark's NAME, which cannot import it, is the same text
# (tests/syntax/test_names_in_any_script.py holds them equal).
_MARKS = (
    r"\u0345\u05b0-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a\u064b-\u0657"
    r"\u0659-\u065f\u0670\u06d6-\u06dc\u06e1-\u06e4\u06e7\u06e8\u06ed\u0711\u0730-\u073f"
    r"\u07a6-\u07b0\u0816\u0817\u081b-\u0823\u0825-\u0827\u0829-\u082c\u08d4-\u08df"
    r"\u08e3-\u08e9\u08f0-\u0903\u093a\u093b\u093e-\u094c\u094e\u094f\u0955-\u0957\u0962"
    r"\u0963\u0981-\u0983\u09be-\u09c4\u09c7\u09c8\u09cb\u09cc\u09d7\u09e2\u09e3"
    r"\u0a01-\u0a03\u0a3e-\u0a42\u0a47\u0a48\u0a4b\u0a4c\u0a51\u0a70\u0a71\u0a75"
    r"\u0a81-\u0a83\u0abe-\u0ac5\u0ac7-\u0ac9\u0acb\u0acc\u0ae2\u0ae3\u0afa-\u0afc"
    r"\u0b01-\u0b03\u0b3e-\u0b44\u0b47\u0b48\u0b4b\u0b4c\u0b56\u0b57\u0b62\u0b63\u0b82"
    r"\u0bbe-\u0bc2\u0bc6-\u0bc8\u0bca-\u0bcc\u0bd7\u0c00-\u0c03\u0c3e-\u0c44\u0c46-\u0c48"
    r"\u0c4a-\u0c4c\u0c55\u0c56\u0c62\u0c63\u0c81-\u0c83\u0cbe-\u0cc4\u0cc6-\u0cc8"
    r"\u0cca-\u0ccc\u0cd5\u0cd6\u0ce2\u0ce3\u0d00-\u0d03\u0d3e-\u0d44\u0d46-\u0d48"
    r"\u0d4a-\u0d4c\u0d57\u0d62\u0d63\u0d81-\u0d83\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf\u0df2"
    r"\u0df3\u0e31\u0e34-\u0e3a\u0e4d\u0eb1\u0eb4-\u0eb9\u0ebb\u0ebc\u0ecd\u0f71-\u0f81"
    r"\u0f8d-\u0f97\u0f99-\u0fbc\u102b-\u1036\u1038\u103b-\u103e\u1056-\u1059\u105e-\u1060"
    r"\u1062-\u1064\u1067-\u106d\u1071-\u1074\u1082-\u108d\u108f\u109a-\u109d\u1712\u1713"
    r"\u1732\u1733\u1752\u1753\u1772\u1773\u17b6-\u17c8\u1885\u1886\u18a9\u1920-\u192b"
    r"\u1930-\u1938\u1a17-\u1a1b\u1a55-\u1a5e\u1a61-\u1a74\u1abf\u1ac0\u1acc-\u1ace"
    r"\u1b00-\u1b04\u1b35-\u1b43\u1b80-\u1b82\u1ba1-\u1ba9\u1bac\u1bad\u1be7-\u1bf1"
    r"\u1c24-\u1c36\u1de7-\u1df4\u24b6-\u24e9\u2de0-\u2dff\ua674-\ua67b\ua69e\ua69f\ua802"
    r"\ua80b\ua823-\ua827\ua880\ua881\ua8b4-\ua8c3\ua8c5\ua8ff\ua926-\ua92a\ua947-\ua952"
    r"\ua980-\ua983\ua9b4-\ua9bf\ua9e5\uaa29-\uaa36\uaa43\uaa4c\uaa4d\uaa7b-\uaa7d\uaab0"
    r"\uaab2-\uaab4\uaab7\uaab8\uaabe\uaaeb-\uaaef\uaaf5\uabe3-\uabea\ufb1e"
    r"\U00010376-\U0001037a\U00010a01-\U00010a03\U00010a05\U00010a06\U00010a0c-\U00010a0f"
    r"\U00010d24-\U00010d27\U00010eab\U00010eac\U00011000-\U00011002\U00011038-\U00011045"
    r"\U00011073\U00011074\U00011082\U000110b0-\U000110b8\U000110c2\U00011100-\U00011102"
    r"\U00011127-\U00011132\U00011145\U00011146\U00011180-\U00011182\U000111b3-\U000111bf"
    r"\U000111ce\U000111cf\U0001122c-\U00011234\U00011237\U0001123e\U000112df-\U000112e8"
    r"\U00011300-\U00011303\U0001133e-\U00011344\U00011347\U00011348\U0001134b\U0001134c"
    r"\U00011357\U00011362\U00011363\U00011435-\U00011441\U00011443-\U00011445"
    r"\U000114b0-\U000114c1\U000115af-\U000115b5\U000115b8-\U000115be\U000115dc\U000115dd"
    r"\U00011630-\U0001163e\U00011640\U000116ab-\U000116b5\U0001171d-\U0001172a"
    r"\U0001182c-\U00011838\U00011930-\U00011935\U00011937\U00011938\U0001193b\U0001193c"
    r"\U00011940\U00011942\U000119d1-\U000119d7\U000119da-\U000119df\U000119e4"
    r"\U00011a01-\U00011a0a\U00011a35-\U00011a39\U00011a3b-\U00011a3e\U00011a51-\U00011a5b"
    r"\U00011a8a-\U00011a97\U00011c2f-\U00011c36\U00011c38-\U00011c3e\U00011c92-\U00011ca7"
    r"\U00011ca9-\U00011cb6\U00011d31-\U00011d36\U00011d3a\U00011d3c\U00011d3d"
    r"\U00011d3f-\U00011d41\U00011d43\U00011d47\U00011d8a-\U00011d8e\U00011d90\U00011d91"
    r"\U00011d93-\U00011d96\U00011ef3-\U00011ef6\U00016f4f\U00016f51-\U00016f87"
    r"\U00016f8f-\U00016f92\U00016ff0\U00016ff1\U0001bc9e\U0001e000-\U0001e006"
    r"\U0001e008-\U0001e018\U0001e01b-\U0001e021\U0001e023\U0001e024\U0001e026-\U0001e02a"
    r"\U0001e947\U0001f130-\U0001f149\U0001f150-\U0001f169\U0001f170-\U0001f189"
)
_NUMBERS = (
    r"\u00b2\u00b3\u00b9\u00bc-\u00be\u09f4-\u09f9\u0b72-\u0b77\u0bf0-\u0bf2\u0c78-\u0c7e"
    r"\u0d58-\u0d5e\u0d70-\u0d78\u0f2a-\u0f33\u1369-\u137c\u17f0-\u17f9\u19da\u2070"
    r"\u2074-\u2079\u2080-\u2089\u2150-\u215f\u2189\u2460-\u249b\u24ea-\u24ff\u2776-\u2793"
    r"\u2cfd\u3192-\u3195\u3220-\u3229\u3248-\u324f\u3251-\u325f\u3280-\u3289\u32b1-\u32bf"
    r"\ua830-\ua835\U00010107-\U00010133\U00010175-\U00010178\U0001018a\U0001018b"
    r"\U000102e1-\U000102fb\U00010320-\U00010323\U00010858-\U0001085f\U00010879-\U0001087f"
    r"\U000108a7-\U000108af\U000108fb-\U000108ff\U00010916-\U0001091b\U000109bc\U000109bd"
    r"\U000109c0-\U000109cf\U000109d2-\U000109ff\U00010a40-\U00010a48\U00010a7d\U00010a7e"
    r"\U00010a9d-\U00010a9f\U00010aeb-\U00010aef\U00010b58-\U00010b5f\U00010b78-\U00010b7f"
    r"\U00010ba9-\U00010baf\U00010cfa-\U00010cff\U00010e60-\U00010e7e\U00010f1d-\U00010f26"
    r"\U00010f51-\U00010f54\U00010fc5-\U00010fcb\U00011052-\U00011065\U000111e1-\U000111f4"
    r"\U0001173a\U0001173b\U000118ea-\U000118f2\U00011c5a-\U00011c6c\U00011fc0-\U00011fd4"
    r"\U00016b5b-\U00016b61\U00016e80-\U00016e96\U0001d2e0-\U0001d2f3\U0001d360-\U0001d378"
    r"\U0001e8c7-\U0001e8cf\U0001ec71-\U0001ecab\U0001ecad-\U0001ecaf\U0001ecb1-\U0001ecb4"
    r"\U0001ed01-\U0001ed2d\U0001ed2f-\U0001ed3d\U0001f100-\U0001f10c"
)
NAME_START = r"(?:[^\W\d" + _NUMBERS + r"]|[" + _MARKS + r"])"
NAME_PART = r"[\w" + _MARKS + r"]"
NAME = NAME_START + NAME_PART + "*"
# A blank, as the reference reads one (Rust's `is_whitespace`, Unicode's White_Space): the
# ASCII five, a vertical tab, U+0085, the no-break and typographic spaces, U+2028 and
# U+2029 (a blank within a line: a line ends only at `\n`, `\r\n` or `\r`) and the
# ideographic space. U+200B and U+FEFF (inside a file) are no blanks. grammar/serq.lark's
# WS is the same class.
BLANK = r"[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
_BAD = re.compile("[\udc80-\udcff]")
_NAME_PART = None  # `re.compile(NAME_PART)`, made on the first non-ASCII character asked
_LONE_RETURN = re.compile("\r(?!\n)")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


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


def lines_with_ends(text: str) -> list[str]:
    """`text`'s lines, each with its line break, cut where serq, LSP and an editor cut
    them (`\n`, `\r\n`, `\r`): not at a form feed, U+0085 or U+2028, where
    `str.splitlines` cuts too."""
    return _LINE.findall(text)


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


def in_name(char: str) -> bool:
    """Whether `char` may stand in a name (after its first character): `NAME_PART`."""
    global _NAME_PART
    if char.isascii():
        return char.isalnum() or char == "_"
    if _NAME_PART is None:
        _NAME_PART = re.compile(NAME_PART)
    return _NAME_PART.fullmatch(char) is not None


class NamePattern:
    """A regular expression that reads names, compiled for ASCII text at once and for
    any other text when first asked: `pattern(start, part)` writes it from the classes of
    a name's first character and of the rest. The classes of names in every script
    (NAME_START, NAME_PART) are some 8 KB of ranges, and compiling a pattern with them
    takes milliseconds; on ASCII text they are `[A-Za-z_]` and `\\w`, which a `serq check`
    of an ASCII file compiles instead. `of(text)` is the pattern to apply to `text`."""

    __slots__ = ("_source", "_flags", "_ascii", "_full")

    def __init__(self, pattern: Callable[[str, str], str], flags: int = 0) -> None:
        self._source = pattern
        self._flags = flags
        self._ascii = re.compile(pattern(r"[A-Za-z_]", r"\w"), flags)
        self._full: re.Pattern[str] | None = None

    def of(self, text: str) -> re.Pattern[str]:
        """The pattern for `text`: the same matches as the full classes would give."""
        if text.isascii():
            return self._ascii
        full = self._full
        if full is None:
            full = self._full = re.compile(self._source(NAME_START, NAME_PART), self._flags)
        return full


_NAME_ALONE = NamePattern(lambda start, part: start + part + "*")


def is_name(text: str) -> bool:
    """Whether `text` is a name, as the grammar's NAME reads one (`x²`, `मान`; not `²x`)."""
    return _NAME_ALONE.of(text).fullmatch(text) is not None
