"""What the grammar accepts at the cursor, from the parser itself.

`expected_at(text, offset)` cuts the document with the item scanner (as the parser does),
lexes the current item from its start up to the word under the cursor with the same
contextual lexer, feeds the tokens to a parser of `grammar/serq.lark` (`serq.syntax.lalr`),
and asks which terminals the parser would shift next. A terminal counts only if feeding it
succeeds on a copy of the parser (LALR merges lookaheads, so the table alone overstates).
It returns None when the prefix does not lex or parse: the caller then falls back on the AST.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from serq.syntax.lalr import (
    LexerState,
    ParseConf,
    ParserState,
    Token,
    UnexpectedCharacters,
    UnexpectedInput,
    UnexpectedToken,
)
from serq.syntax.parser import Grammar, grammar
from serq.syntax.scanner import FN_CLOSE, FN_HEAD, Chunk, scan
from serq.syntax.source_text import in_name, is_name, lines_ended

log = logging.getLogger("serq_lsp")

_CLOSED_BLOCK_COMMENT = re.compile(r"/\*[\s\S]*?\*/")


@dataclass(frozen=True, slots=True)
class Expected:
    """What may be written at the cursor: keywords (spelled), a name, an expression."""

    keywords: tuple[str, ...] = ()
    name: bool = False
    expression: bool = False

    @property
    def nothing(self) -> bool:
        """No word at all may stand here (only punctuation, or the cursor is in a comment)."""
        return not (self.keywords or self.name or self.expression)


NOTHING = Expected()


def expected_at(text: str, offset: int, chunks: Sequence[Chunk] | None = None) -> Expected | None:
    """What the grammar accepts at code-point `offset` of `text` (the word there excluded),
    or None when the current item does not lex or parse up to there. `chunks` are the
    scanner's items of `text` when the caller has them (the parse's); else it scans."""
    text = lines_ended(text)  # a lone `\r` ends a `//` comment, as for the parser
    word_start = offset
    while word_start > 0 and in_name(text[word_start - 1]):
        word_start -= 1
    prefix, symbol, top_level = _context(text, word_start, scan(text) if chunks is None else chunks)
    g = grammar()
    try:
        keywords, name, expression = _accepted(g, _feed(g, prefix, symbol))
    except _InComment:
        return NOTHING
    except (UnexpectedInput, EOFError):
        return None
    except Exception:  # a bug here must not cost completion: the AST still answers
        log.exception("the expected set at %d failed", offset)
        return None
    if top_level and "let" in keywords:
        keywords.append("fn")  # `fn main() {` is cut off by the scanner, never a chunk's item
    return Expected(tuple(keywords), name, expression)


# ----------------------------------------------------------------- context


def _context(text: str, at: int, chunks: Sequence[Chunk]) -> tuple[str, str, bool]:
    """The text to feed, up to `at`, the start symbol, and whether it stands at the file's top
    level (outside `fn main`). The text is the current item from its start; between items it
    is the gap since the last one, blanks and comments only, so that a comment is seen."""
    current: Chunk | None = None
    inside_main = False
    for chunk in chunks:
        if chunk.start >= at:
            break
        current = chunk
        if chunk.kind == FN_HEAD:
            inside_main = True
        elif chunk.kind == FN_CLOSE:
            inside_main = False
    if current is None:
        return text[:at], "chunk", True
    if current.kind == FN_CLOSE or (current.kind == FN_HEAD and at >= current.end):
        return text[current.end : at], "chunk", not inside_main
    prefix = text[current.start : at]
    if current.kind == FN_HEAD or (not inside_main and _FN.match(prefix)):
        return prefix, "fn_head", True  # `fn main() {` being written
    return prefix, "chunk", not inside_main


_FN = re.compile(r"fn\b")


# ----------------------------------------------------------------- parsing


class _InComment(Exception):
    """The cursor is inside a comment or a string."""


def _feed(g: Grammar, prefix: str, symbol: str) -> ParserState:
    """A parser state that has read all of `prefix` as the start of `symbol`."""
    # build no trees: values stay plain lists, copies stay cheap
    state = ParserState(ParseConf(g.table, {}, symbol))
    lex_state = LexerState(prefix)
    lexers = g.lexer.lexers
    last_end = 0
    while True:
        try:
            token = lexers[state.position].next_token(lex_state, state)
        except EOFError:
            break
        except UnexpectedCharacters as error:
            if prefix.startswith(("/*", '"'), error.pos_in_stream):
                raise _InComment from None  # an open comment or string runs to the cursor
            raise
        if token.value == "/" and prefix.startswith("/*", token.start_pos):
            raise _InComment  # an open comment read as `/`, `*` where an operator fits
        try:
            state = _fed(state, token)
        except UnexpectedToken:
            if token.type == "NAME" or not is_name(token.value):
                raise
            # a keyword the lookaheads listed but the reductions refuse: the name it spells
            state = _fed(state, Token.new_borrow_pos("NAME", token.value, token))
        last_end = token.end_pos
    tail = _CLOSED_BLOCK_COMMENT.sub(" ", prefix[last_end:])
    if "//" in tail[tail.rfind("\n") + 1 :]:
        raise _InComment
    return state


def _fed(state: ParserState, token: Token) -> ParserState:
    """A copy of `state` that has read `token`; `state` itself is left as it was."""
    trial = state.copy()
    trial.feed_token(token)
    return trial


def _accepted(g: Grammar, state: ParserState) -> tuple[list[str], bool, bool]:
    """The keywords `state` would shift next (spelled, sorted), and whether a NAME and a
    NUMBER (an expression) would be shifted."""
    spelling = _spellings(g)
    keywords: list[str] = []
    name = expression = False
    for terminal in g.states[state.position]:
        wanted = terminal in spelling or terminal in ("NAME", "NUMBER")
        if not wanted or not _shifts(state, terminal):
            continue
        if terminal == "NAME":
            name = True
        elif terminal == "NUMBER":
            expression = True
        else:
            keywords.append(spelling[terminal])
    return sorted(keywords), name, expression


def _shifts(state: ParserState, terminal: str) -> bool:
    trial = state.copy()
    try:
        trial.feed_token(Token(terminal, ""))
    except UnexpectedToken:
        return False
    return True


@lru_cache(maxsize=1)
def _spellings(g: Grammar) -> dict[str, str]:
    """Keyword terminal -> its word (`FIFO` -> `fifo`), for the grammar `g`."""
    return {terminal: word for word, terminal in g.keywords.items()}
