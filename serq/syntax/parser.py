"""The error-recovering driver around the LALR parser Lark builds.

Lark builds the parser's tables from `grammar/serq.lark`, which `serq.syntax.lalr` runs;
this module decides what happens when the parse cannot go on. It feeds tokens from the
contextual lexer one at a time, and on an unexpected token or character it:

1. reports one `E-parse` diagnostic at the offending token, saying in words
   what was expected (`serq.syntax.expected`);
2. pops the parser's stack back to the innermost list that accepts `ERROR`
   (statements, items, pool or step options, workload clauses, queue members,
   run settings);
3. skips the text up to the next `;` or the end of a `{ … }` group at that
   level (nothing, if the offending token can begin the list's next element
   or close the list), and feeds one `ERROR` token that covers what was lost.

At the end of the text it closes what is open (`}`, `;`, `)`), so a
half-typed item still yields its complete parts. Every recovery consumes text
or shrinks the stack, and a second failure at the same token skips it, so the
loop always ends.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from serq.diagnostics import Diagnostic, Edit, Fix, Label, LineIndex, codes
from serq.diagnostics.suggest import did_you_mean
from serq.syntax.expected import Words
from serq.syntax.lalr import (
    BUILD,
    LexerState,
    LineCounter,
    ParseConf,
    ParserState,
    Token,
    Tree,
    UnexpectedCharacters,
    UnexpectedToken,
)
from serq.syntax.source_text import NamePattern, in_name, is_name

GRAMMAR_NAME = "serq.lark"
START_SYMBOLS = ("program", "chunk", "fn_head")
_CLOSERS = ("RBRACE", "SEMICOLON", "RPAR", "RSQB")
_MAX_EOF_REPAIRS = 500


def grammar_path() -> Path:
    """Where `serq.lark` is: the repository's `grammar/`, or the copy installed in the package."""
    source_tree = Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR_NAME
    if source_tree.is_file():
        return source_tree
    return Path(__file__).resolve().parent / GRAMMAR_NAME


@lru_cache(maxsize=1)
def grammar() -> Grammar:
    """The project's one grammar, loaded once per process: from the pickle in the user
    cache dir when one is there for this grammar (`serq.syntax.grammar_cache`), else built
    (and pickled there for the next process)."""
    from serq.syntax import grammar_cache

    source = grammar_path().read_text(encoding="utf-8")
    path = grammar_cache.path_for(source)
    loaded = grammar_cache.load(path, Grammar)
    if loaded is None:
        loaded = Grammar(source)
        grammar_cache.store(path, loaded)
    return loaded


def build_lark(source: str) -> Any:
    """Lark's LALR parser of the grammar text `source`, with the options the tables of
    `serq.syntax.lalr` are read from (`serq.syntax.tables`)."""
    _import_lark_without_extras()
    from lark import Lark

    options = dict(
        parser="lalr",
        lexer="contextual",
        start=list(START_SYMBOLS),
        propagate_positions=True,
        maybe_placeholders=True,
    )
    # Every state's lexer also knows NAME and BAD_NUMBER: `capacity` is then a
    # name everywhere (not `cap` + `acity` where no name fits), and a
    # malformed number is one token wherever it stands.
    options["postlex"] = _AlwaysAccept()
    try:
        return Lark(source, cache=True, **options)
    except OSError:  # no writable temp dir for Lark's cache: build the tables here
        return Lark(source, **options)


def _import_lark_without_extras() -> None:
    """Import Lark with its two optional extras hidden: it imports `regex` (to build
    grammars with Unicode categories, which serQ's has none of) and `interegular` (to warn
    of colliding terminals while it builds), about 12 ms, which change nothing in the
    tables. Nothing changes for a process that imported Lark before, and the extras import
    as usual afterwards."""
    if "lark" in sys.modules:
        return
    hidden = [name for name in ("regex", "interegular") if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # `import` raises ImportError
    try:
        import lark  # noqa: F401
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


class Grammar:
    """The parser for serQ (the tables of `serq.syntax.lalr`) with what recovery needs
    to know about them."""

    def __init__(self, source: str) -> None:
        from serq.syntax import tables

        lark = build_lark(source)
        self.table, self.lexer = tables.read(lark)
        self.states = self.table.states
        spellings = {t.name: t.pattern.value for t in lark.terminals if t.pattern.type == "str"}
        self.words = Words(spellings, self._list_members())
        self.keywords = {v: n for n, v in spellings.items() if is_name(v)}
        # the keywords that begin a statement and no item (`observe`, `set`; not `run`)
        items = self._first_words(
            lark.rules, spellings, lambda rule: rule == "item" or rule.endswith("_item")
        )
        self.statement_words = (
            self._first_words(lark.rules, spellings, lambda rule: rule == "stmt") - items
        )
        # what the parse trees' nodes are called (an alias, else the rule's name) but the
        # rules that are inlined (`_rule`, `?rule` without an alias)
        self.node_names = frozenset(
            str(rule.alias or rule.origin.name)
            for rule in lark.rules
            if not str(rule.alias or rule.origin.name).startswith("_")
            and not (rule.options.expand1 and not rule.alias)
        )

    def parser_state(self, symbol: str) -> ParserState:
        """A parse of `symbol` from its start, building its tree."""
        return ParserState(ParseConf(self.table, BUILD, symbol))

    @staticmethod
    def _first_words(lark_rules: Any, spellings: dict[str, str], chosen) -> frozenset[str]:
        """The keywords that can begin a rule `chosen` picks, through the rules it begins with."""
        rules: dict[str, list] = {}
        for rule in lark_rules:
            rules.setdefault(rule.origin.name, []).append(rule.expansion)
        words: set[str] = set()
        todo = [name for name in rules if chosen(name)]
        seen = set(todo)
        while todo:
            for expansion in rules.get(todo.pop(), []):
                if not expansion:
                    continue
                first = expansion[0]
                if first.is_term:
                    spelled = spellings.get(first.name)
                    if spelled is not None and is_name(spelled):
                        words.add(spelled)
                elif first.name not in seen:
                    seen.add(first.name)
                    todo.append(first.name)
        return frozenset(words)

    def _list_members(self) -> dict[str, set[str]]:
        """For each list marker terminal, the terminals that begin an element of its list."""
        members: dict[str, set[str]] = {}
        for actions in self.states.values():
            if "ERROR" not in actions:
                continue
            for marker in ("SET", "LET", "CAP", "BUDGET", "ARRIVE", "HORIZON", "NIC"):
                if marker in actions:
                    members.setdefault(marker, set()).update(
                        n for n in actions if n not in ("RBRACE", "$END", "ERROR")
                    )
        return members


class _NoTrees(dict):
    """Parser callbacks that build nothing, for probe states."""

    def __missing__(self, key):
        return _nothing


def _nothing(children):
    return None


class _AlwaysAccept:
    """A no-op post-lexer whose only job is to have Lark add terminals to every state's lexer."""

    always_accept = ("NAME", "BAD_NUMBER")

    def process(self, stream):
        return stream


@dataclass(slots=True)
class RawParse:
    """What the driver returns: the parse tree (None if nothing could be built) and
    diagnostics."""

    tree: Tree | None
    diagnostics: list[Diagnostic]


class _Eof(Exception):
    """The end of the text being parsed; `found` is the token just past it, if any."""

    def __init__(self, found: Token | None) -> None:
        self.found = found


def parse_range(
    text: str,
    file: str,
    start: int,
    end: int,
    line: int,
    column: int,
    symbol: str,
    lines: LineIndex,
) -> RawParse:
    """Parse `text[start:end]`, which begins at `line`:`column`, as `symbol`; never raises."""
    return _Driver(grammar(), text, file, start, end, line, column, symbol, lines).run()


class _Driver:
    def __init__(
        self,
        g: Grammar,
        text: str,
        file: str,
        start: int,
        end: int,
        line: int,
        column: int,
        symbol: str,
        lines: LineIndex,
    ) -> None:
        self.g = g
        self.text = text
        self.file = file
        self.end = end
        self.lines = lines
        self.diagnostics: list[Diagnostic] = []
        self.state = g.parser_state(symbol)
        self.lex_state = LexerState(text)
        self._seek(start, line, column)
        self.last_error = -1  # offset of the last token we recovered at
        self.suppress = False  # an error was reported and no token has been read since
        self.previous: Token | None = None  # the last token the parser accepted
        self._probe_conf: ParseConf | None = None

    # ------------------------------------------------------------- lexing

    def _seek(self, offset: int, line: int | None = None, column: int | None = None) -> None:
        if line is None or column is None:
            line, column = self.lines.position(offset)
        counter = LineCounter("\n")
        counter.char_pos = offset
        counter.line = line
        counter.column = column
        counter.line_start_pos = offset - column + 1
        self.lex_state.line_ctr = counter

    def _next_token(self) -> Token:
        """The next token in the parser's current context.

        Raises `_Eof` past the end and `UnexpectedCharacters` where no token begins."""
        pos = self.lex_state.line_ctr.char_pos
        if pos >= self.end:
            raise _Eof(self._peek_root(pos) if pos < len(self.text) else None)
        lexers = self.g.lexer.lexers
        try:
            token = lexers[self.state.position].next_token(self.lex_state, self.state)
        except EOFError:
            raise _Eof(None) from None
        except UnexpectedCharacters as e:
            if e.pos_in_stream >= self.end:
                raise _Eof(self._peek_root(e.pos_in_stream)) from None
            if self.text.startswith("/*", e.pos_in_stream):
                raise  # an unterminated comment, not a `/`
            # a token that is valid elsewhere (a keyword out of place, a stray `}`)
            token = self.g.lexer.root_lexer.next_token(self.lex_state, self.state)
        if token.start_pos >= self.end:
            raise _Eof(token)
        return token

    def _peek_root(self, offset: int) -> Token | None:
        saved = self.lex_state.line_ctr
        try:
            self._seek(offset)
            return self.g.lexer.root_lexer.next_token(self.lex_state, self.state)
        except (UnexpectedCharacters, EOFError):
            return None
        finally:
            self.lex_state.line_ctr = saved

    # ------------------------------------------------------------ driving

    def run(self) -> RawParse:
        while True:
            try:
                token = self._next_token()
            except _Eof as eof:
                return RawParse(self._finish(eof.found), self.diagnostics)
            except UnexpectedCharacters as e:
                self._bad_character(e)
                continue
            try:
                self.state.feed_token(token)
            except UnexpectedToken as e:
                token = self._as_name(token)
                if token is None:
                    self._recover(e.token, self._really_expected(e.expected))
                    continue
                self.state.feed_token(token)
            else:
                self.suppress = False
                self.previous = token

    def _finish(self, found: Token | None) -> Tree | None:
        """Feed the end of input, closing whatever is still open."""
        reported = False
        at = self._eof_offset() if found is not None else len(self.text)
        for _ in range(_MAX_EOF_REPAIRS):
            try:
                return self.state.feed_token(self._synthetic("$END", at), True)
            except UnexpectedToken as e:
                expected = self._really_expected(e.expected)
                if not reported and not self.suppress:
                    self._report_at(found, at, expected)
                reported = True
                closer = next((c for c in _CLOSERS if c in expected), None)
                if closer is not None:
                    self._feed(self._synthetic(closer, at))
                elif not self._pop_and_feed_error(at, at):
                    return None
        return None

    def _eof_offset(self) -> int:
        end = self.end
        while end > 0 and self.text[end - 1] in " \t\r\n\f":
            end -= 1
        return end

    def _feed(self, token: Token) -> None:
        try:
            self.state.feed_token(token)
        except UnexpectedToken:
            self._pop_and_feed_error(token.start_pos, token.start_pos)

    # ----------------------------------------------------------- recovery

    def _bad_character(self, e: UnexpectedCharacters) -> None:
        """Report a character no token begins with, and step over it (a string: the line)."""
        pos = e.pos_in_stream
        char = self.text[pos]
        if char == '"':
            message, stop = "unterminated string", self._line_end(pos)
        elif self.text.startswith("/*", pos):
            message, stop = "unterminated comment", self.end
        else:
            message, stop = f"unexpected character {_shown(char)}", pos + 1
        if not self.suppress:
            span = self.lines.span(self.file, pos, pos + 1)
            self.diagnostics.append(Diagnostic.error(codes.PARSE, span, message))
        self.suppress = True
        self._seek(stop)

    def _line_end(self, pos: int) -> int:
        nl = self.text.find("\n", pos, self.end)
        return self.end if nl < 0 else nl

    def _recover(self, token: Token, expected: set[str]) -> None:
        keyword = self.g.keywords.get(token.value) if token.type == "NAME" else None
        if keyword is not None:  # a keyword out of place, read as a name: judge it as the keyword
            token = Token.new_borrow_pos(keyword, token.value, token)
        if token.start_pos == self.last_error:
            # recovered here already and still stuck: the token itself must go
            self._skip_and_resync(token.start_pos, token.end_pos)
            return
        self.last_error = token.start_pos
        if not self.suppress:
            self._report_at(token, token.start_pos, expected)
        self.suppress = True
        if self._resumes_at(token):
            self._seek(token.start_pos, token.line, token.column)
            self._pop_and_feed_error(self._partial_start(token.start_pos), token.start_pos)
            return
        # Not a name, the token is refused after an ERROR at its start as well (the probe
        # above): skip it too, or it would come back at once for an empty ERROR before it
        at_least = token.start_pos if token.type == "NAME" else token.end_pos
        self._skip_and_resync(token.start_pos, at_least)

    def _probe(self) -> ParserState:
        """A copy of the parser's state that builds nothing: for asking what it would accept.

        The tree callbacks extend child lists in place, so a probe must not run them on
        values it shares with the real parse."""
        state = self.state
        conf = self._probe_conf
        if conf is None:
            conf = ParseConf(state.parse_conf.parse_table, _NoTrees(), state.parse_conf.start)
            self._probe_conf = conf
        return ParserState(conf, list(state.state_stack), [None] * len(state.value_stack))

    def _as_name(self, token: Token) -> Token | None:
        """A keyword the parser refused, as the NAME it also spells, if a NAME fits here.

        The contextual lexer reads a word as a keyword when the parser's state
        has that keyword among its lookaheads; LALR merges lookaheads, so a
        state can list a keyword that the reductions then refuse (`decode`
        after an entry's `}` in a queue, where an entry named `decode` is
        meant). Such a word is the name it spells."""
        if token.type == "NAME" or not is_name(token.value):
            return None
        name = Token.new_borrow_pos("NAME", token.value, token)
        if not self._accepts(self._probe(), name):
            return None
        return name

    def _really_expected(self, candidates: set[str]) -> set[str]:
        """The terminals that the parser would shift here, after the reductions each implies.

        LALR merges lookaheads, so the failing state lists terminals that
        reductions would then refuse; trying each on a copy keeps the true ones."""
        kept = set()
        for name in candidates:
            if name in ("ERROR", "$END"):
                if name == "$END":
                    kept.add(name)
                continue
            try:
                self._probe().feed_token(self._synthetic(name, 0))
            except UnexpectedToken:
                continue
            kept.add(name)
        return kept or set(candidates)

    def _report_at(self, token: Token | None, at: int, expected: set[str]) -> None:
        words = self.g.words
        message = f"expected {words.expected(expected)}, found {words.found(token)}"
        if token is not None and token.type == "BAD_NUMBER":
            message = f"malformed number `{token.value}`"
        if token is not None and token.end_pos is not None:
            span = self.lines.span(self.file, token.start_pos, token.end_pos)
        else:
            span = self.lines.span(self.file, at, at)
        extra = {}
        if token is not None and is_name(str(token.value)) and token.type != "ERROR":
            # a misspelled keyword: `stage s : fifoo;`, `hlod`, `evict lur;`
            spelled = [w for w, n in self.g.keywords.items() if n in expected]
            extra = did_you_mean(
                str(token.value),
                spelled,
                self.lines.span(self.file, token.start_pos, token.end_pos),
            )
        previous = self.previous
        if (
            "SEMICOLON" in expected
            and previous is not None
            and (token is None or token.start_pos >= self.end or token.line > previous.end_line)
            and self._semicolon_takes(token, previous.end_pos)
        ):
            # the classic: a `;` forgotten at the end of a line
            after = self.lines.span(self.file, previous.end_pos, previous.end_pos)
            extra = dict(
                labels=(Label(after, "`;` may be missing here"),),
                fix=Fix("insert `;`", (Edit(after, ";"),)),
            )
        pull = expected == {"PULL"} and token is not None
        word = _word_before(self.text, token.start_pos) if pull else None
        if word is not None and self.text[word[0] : word[1]] in self.g.statement_words:
            # `observe x = 1;` among the items, read as the start of `NAME pull NAME`: most
            # often a `}` above that closed the block the statement was in
            spelled = self.text[word[0] : word[1]]
            message = (
                f"`{spelled}` begins a statement, which belongs in a block, not among the items"
            )
            extra = {"help": "a `}` above may close its block too early"}
            span = self.lines.span(self.file, *word)
        if token is not None and token.value == "[" and not extra:
            extra = _indexed_family(self.text, token.start_pos)
        self.diagnostics.append(Diagnostic.error(codes.PARSE, span, message, **extra))

    def _semicolon_takes(self, token: Token | None, at: int) -> bool:
        """Whether a `;` inserted at `at` lets the parser go on with `token`: after a block
        (`hold m (1) { ... }`) a `;` is accepted, but a top-level item pasted into the body
        is no more accepted after it than before; at the end of the text (or of the item
        parsed) the `;` must let it end there, not leave a `}` missing."""
        probe = self._probe()
        try:
            probe.feed_token(self._synthetic("SEMICOLON", at))
            if token is None or token.start_pos >= self.end:  # the end of what is parsed
                probe.feed_token(self._synthetic("$END", self.end), True)
                return True
        except UnexpectedToken:
            return False
        return self._accepts(probe, token)

    def _resumes_at(self, token: Token) -> bool:
        """Whether `token` is accepted once the broken element is replaced by ERROR.

        A name resumes only at the start of a line: in the middle of one it is
        more likely the rest of the broken element than a new one."""
        if token.type == "NAME" and not self._starts_line(token):
            return False
        probe = self._probe()
        if not _pop_to_error_state(self.g.states, probe):
            return False
        try:
            probe.feed_token(self._synthetic("ERROR", token.start_pos))
        except UnexpectedToken:
            return False
        return self._accepts(probe, token)

    def _starts_line(self, token: Token) -> bool:
        line_start = self.text.rfind("\n", 0, token.start_pos) + 1
        return not self.text[line_start : token.start_pos].strip()

    @staticmethod
    def _accepts(state: ParserState, token: Token) -> bool:
        """Whether `state` (a probe, which this call uses up) shifts `token`."""
        try:
            state.feed_token(token)
        except UnexpectedToken:
            return False
        return True

    def _skip_and_resync(self, begin: int, at_least: int) -> None:
        """Skip from `begin` to the next synchronising point, then stand an ERROR for it."""
        stop = _sync_point(self.text, begin, self.end)
        stop = max(stop, min(at_least, self.end))
        self._seek(stop)
        self._pop_and_feed_error(self._partial_start(begin), stop)

    def _partial_start(self, begin: int) -> int:
        """Where the element being discarded began: its first token on the stack, or `begin`."""
        start = begin
        stack = self.state.state_stack
        values = self.state.value_stack
        depth = _error_depth(self.g.states, stack)
        if depth is None:
            return start
        for value in values[depth:]:
            pos = _start_of(value)
            if pos is not None:
                return min(pos, start)
        return start

    def _pop_and_feed_error(self, start: int, stop: int) -> bool:
        """Pop to the innermost list and feed one ERROR covering `start`..`stop`."""
        if not _pop_to_error_state(self.g.states, self.state):
            return False
        token = self._synthetic("ERROR", start, max(start, stop))
        try:
            self.state.feed_token(token)
        except UnexpectedToken:
            return False
        return True

    def _synthetic(self, kind: str, start: int, stop: int | None = None) -> Token:
        stop = start if stop is None else stop
        line, column = self.lines.position(start)
        end_line, end_column = self.lines.position(stop)
        return Token(kind, self.text[start:stop], start, line, column, end_line, end_column, stop)


def _error_depth(states, stack: list[int]) -> int | None:
    """The height of the stack above which the innermost list's element lies."""
    for depth in range(len(stack) - 1, -1, -1):
        if "ERROR" in states[stack[depth]]:
            return depth
    return None


def _pop_to_error_state(states, parser_state) -> bool:
    depth = _error_depth(states, parser_state.state_stack)
    if depth is None:
        return False
    del parser_state.state_stack[depth + 1 :]
    del parser_state.value_stack[depth:]
    return True


def _start_of(value) -> int | None:
    if isinstance(value, Token):
        return value.start_pos
    if isinstance(value, Tree):
        meta = value.meta
        if not meta.empty:
            return meta.start_pos
        for child in value.children:
            pos = _start_of(child)
            if pos is not None:
                return pos
    return None


_SKIP = re.compile(r'//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|"[^"\n]*"?|[{}()\[\];]')
_FOLLOW_GROUP = re.compile(r"(?:\s|//[^\n]*|/\*[\s\S]*?\*/)*(else\b|cache\b|lease\b|;)")
# `admit via engine[...]` or `memory kv[...]`: the option names a family whole
_FAMILY_OPTION = NamePattern(
    lambda start, part: rf"\b(admit\s+via|memory)\s+({start}{part}*)\s*\Z"
)


def _indexed_family(text: str, at: int) -> dict:
    """The help of an index after the name in `admit via S` or `memory P` (at `at`): those
    options name a family whole, and pair its members with the declaration's."""
    found = _FAMILY_OPTION.of(text).search(text, max(0, at - 200), at)
    if found is None:
        return {}
    option, name = " ".join(found.group(1).split()), found.group(2)
    owner, other = ("pool", "stage") if option == "admit via" else ("stage", "pool")
    return {
        "help": (
            f"`{option}` names a {other} or a {other} family whole: write `{option} {name};`, "
            f"and member k of a {owner} family goes with member k of `{name}` (or with its "
            "only member)"
        )
    }


def _word_before(text: str, at: int) -> tuple[int, int] | None:
    """The offsets of the word that ends, but for white space, at offset `at` of `text`;
    None when a word does not end there. It reads back from `at` only as far as that word
    (a search from the start of the text would cost the whole text at every error)."""
    end = at
    while end > 0 and text[end - 1].isspace():
        end -= 1
    begin = end
    while begin > 0 and in_name(text[begin - 1]):
        begin -= 1
    if begin == end or not is_name(text[begin:end]):
        return None
    return begin, end


def _sync_point(text: str, begin: int, end: int) -> int:
    """The offset where parsing resumes after an error at `begin`.

    Past the next `;` at this level, before a `}` that closes an enclosing
    block, or past a `{ … }` group opened here (and its `else`, `cache` or
    `lease` tail)."""
    depth = 0
    pos = begin
    while True:
        m = _SKIP.search(text, pos, end)
        if m is None:
            return end
        tok = m.group()
        pos = m.end()
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]"):
            depth = max(0, depth - 1)
        elif tok == "}":
            if depth == 0:
                return m.start()
            depth -= 1
            if depth == 0:
                follow = _FOLLOW_GROUP.match(text, pos, end)
                if follow is None:
                    return pos
                if follow.group(1) == ";":
                    return follow.end()
                pos = follow.start(1)
        elif tok == ";" and depth == 0:
            return pos


def _shown(char: str) -> str:
    """`char` as a message names it: in backticks when it prints, else by its code point
    (a NUL or an escape written raw would garble the terminal that shows the message; a
    backquote is named, as backticks cannot quote it)."""
    if char == "`":  # in backticks it would read as an empty code span
        return "U+0060 (a backquote)"
    if char.isprintable() and not char.isspace():
        return f"`{char}`"
    return f"U+{ord(char):04X}"
