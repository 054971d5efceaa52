"""The parser's run time: Lark's LALR tables and contextual lexers, run without Lark.

Lark builds the parser once (`serq.syntax.tables` reads what it built into the plain
tables this module runs, and `serq.syntax.grammar_cache` keeps them between processes);
parsing a text needs only the tables, so a process that checks a file never imports
Lark, which took about a third of the start-up of `serq check`.

What runs here does what Lark's own run time does with the options the grammar is built
with (`parser="lalr"`, `lexer="contextual"`, `propagate_positions`,
`maybe_placeholders`, no transformer), under the names and attributes the error-recovering
driver (`serq.syntax.parser`) and the editor's completion (`serq_lsp.expected`) use:

- `Token`, a `str` with its type and position, `Tree` and its `Meta`;
- `StateLexer`, one parser state's lexer: its terminals as one alternation (split where
  `re` has too many groups), tried at a position, blanks and comments skipped, and a
  word that its keywords spell given the keyword's type;
- `ParserState`, the LALR automaton's stacks: a token is shifted after the reductions
  it implies, each reduction building its node by a call of its `Rule`;
- `UnexpectedToken` and `UnexpectedCharacters`, what the two raise.

tests/syntax/test_lalr_runtime.py parses every program of the repository and mutations
of them with both this module and Lark and asserts the same trees, positions and errors.
"""

from __future__ import annotations

from typing import Any

SHIFT = 0
REDUCE = 1


class Token(str):
    """A token of the text: its terminal's name (`type`), its text (`value`) and where it
    stands (offsets and 1-based lines and columns; `end_column` is the column after it)."""

    __slots__ = (
        "type",
        "start_pos",
        "value",
        "line",
        "column",
        "end_line",
        "end_column",
        "end_pos",
    )

    type: str
    value: Any
    start_pos: int | None
    line: int | None
    column: int | None
    end_line: int | None
    end_column: int | None
    end_pos: int | None

    def __new__(
        cls,
        type: str,  # noqa: A002 - the attribute's name, as Lark's Token has it
        value: Any,
        start_pos: int | None = None,
        line: int | None = None,
        column: int | None = None,
        end_line: int | None = None,
        end_column: int | None = None,
        end_pos: int | None = None,
    ) -> Token:
        inst = str.__new__(cls, value)
        inst.type = type
        inst.start_pos = start_pos
        inst.value = value
        inst.line = line
        inst.column = column
        inst.end_line = end_line
        inst.end_column = end_column
        inst.end_pos = end_pos
        return inst

    @classmethod
    def new_borrow_pos(cls, type_: str, value: Any, borrow_t: Token) -> Token:
        """A token of another type and text at the position of `borrow_t`."""
        return cls(
            type_,
            value,
            borrow_t.start_pos,
            borrow_t.line,
            borrow_t.column,
            borrow_t.end_line,
            borrow_t.end_column,
            borrow_t.end_pos,
        )

    def __reduce__(self):
        return (self.__class__, (self.type, self.value, self.start_pos, self.line, self.column))

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Token) and self.type != other.type:
            return False
        return str.__eq__(self, other)

    __hash__ = str.__hash__


class Meta:
    """Where a node stands in the text (`empty` until a child gave it a position); the
    `container_*` attributes also cover the tokens its rule filtered out. A position is
    given whole: a meta that is not empty has every attribute."""

    __slots__ = (
        "empty",
        "line",
        "column",
        "start_pos",
        "end_line",
        "end_column",
        "end_pos",
        "container_line",
        "container_column",
        "container_start_pos",
        "container_end_line",
        "container_end_column",
        "container_end_pos",
    )

    def __init__(self) -> None:
        self.empty = True


class Tree:
    """A node of the parse tree: the rule (or alias) it was built by, its children."""

    __slots__ = ("data", "children", "_meta")

    def __init__(self, data: str, children: list, meta: Meta | None = None) -> None:
        self.data = data
        self.children = children
        self._meta = meta

    @property
    def meta(self) -> Meta:
        if self._meta is None:
            self._meta = Meta()
        return self._meta

    def __repr__(self) -> str:
        return f"Tree({self.data!r}, {self.children!r})"

    def __eq__(self, other: object) -> bool:
        try:
            return self.data == other.data and self.children == other.children  # type: ignore[attr-defined]
        except AttributeError:
            return False

    def __ne__(self, other: object) -> bool:
        return not (self == other)

    def __hash__(self) -> int:
        return hash((self.data, tuple(self.children)))


# ---------------------------------------------------------------------- errors


class UnexpectedInput(Exception):
    """The text is not what the grammar accepts here."""

    pos_in_stream: int | None = None


class UnexpectedCharacters(UnexpectedInput):
    """No token of the state's lexer begins at `pos_in_stream`."""

    def __init__(self, text: str, pos: int, line: int, column: int, allowed: set[str]) -> None:
        self.pos_in_stream = pos
        self.line = line
        self.column = column
        self.allowed = allowed
        char = text[pos : pos + 1]
        super().__init__(f"no terminal matches {char!r} at line {line} col {column}")


class UnexpectedToken(UnexpectedInput):
    """The parser's state has no action for `token`; `expected`: the terminals it has."""

    def __init__(self, token: Token, expected: set[str], state: Any = None) -> None:
        self.token = token
        self.expected = expected
        self.state = state
        self.pos_in_stream = token.start_pos
        super().__init__(f"unexpected token {token!r}, expected one of {sorted(expected)}")


# ---------------------------------------------------------------------- lexing


class LineCounter:
    """The offset, line and column the lexer has reached."""

    __slots__ = ("char_pos", "line", "column", "line_start_pos", "newline_char")

    def __init__(self, newline_char: str = "\n") -> None:
        self.newline_char = newline_char
        self.char_pos = 0
        self.line = 1
        self.column = 1
        self.line_start_pos = 0

    def feed(self, token: str, test_newline: bool = True) -> None:
        """Move past `token` (which holds no line end when not `test_newline`)."""
        if test_newline:
            newlines = token.count(self.newline_char)
            if newlines:
                self.line += newlines
                self.line_start_pos = self.char_pos + token.rindex(self.newline_char) + 1
        self.char_pos += len(token)
        self.column = self.char_pos - self.line_start_pos + 1


class LexerState:
    """The text being lexed and how far the lexer is in it."""

    __slots__ = ("text", "line_ctr", "last_token")

    def __init__(self, text: str, line_ctr: LineCounter | None = None) -> None:
        self.text = text
        self.line_ctr = LineCounter() if line_ctr is None else line_ctr
        self.last_token: Token | None = None


class StateLexer:
    """The lexer of one parser state (or the root lexer, of every terminal): `patterns`
    are its alternations, tried in order, each `(?P<TERMINAL>...)|...` with `flags`;
    `ignore` the terminals skipped (blanks, comments), `newline` those that may hold a
    line end, `keywords` per terminal the words that are a keyword's terminal instead
    (a NAME that spells `hold` is HOLD where HOLD is accepted)."""

    __slots__ = ("patterns", "flags", "ignore", "newline", "keywords", "allowed", "_compiled")

    def __init__(
        self,
        patterns: tuple[str, ...],
        flags: int,
        ignore: frozenset[str],
        newline: frozenset[str],
        keywords: dict[str, dict[str, str]],
        allowed: frozenset[str],
    ) -> None:
        self.patterns = patterns
        self.flags = flags
        self.ignore = ignore
        self.newline = newline
        self.keywords = keywords
        self.allowed = allowed  # the terminals it can read, for an error
        self._compiled: list[Any] | None = None

    def __getstate__(self) -> tuple:
        return (self.patterns, self.flags, self.ignore, self.newline, self.keywords, self.allowed)

    def __setstate__(self, state: tuple) -> None:
        self.patterns, self.flags, self.ignore, self.newline, self.keywords, self.allowed = state
        self._compiled = None

    def _matchers(self) -> list[Any]:
        compiled = self._compiled
        if compiled is None:
            from serq.syntax.regex_code import RE  # kept between processes

            compiled = self._compiled = [RE.compile(p, self.flags).match for p in self.patterns]
        return compiled

    def next_token(self, lex_state: LexerState, parser_state: Any = None) -> Token:
        """The next token from where `lex_state` is, past blanks and comments.

        Raises `UnexpectedCharacters` where none begins, `EOFError` at the end."""
        line_ctr = lex_state.line_ctr
        text = lex_state.text
        end = len(text)
        matchers = self._compiled or self._matchers()
        ignore = self.ignore
        while line_ctr.char_pos < end:
            pos = line_ctr.char_pos
            for match in matchers:
                m = match(text, pos, end)
                if m:
                    break
            else:
                allowed = set(self.allowed - ignore) or {"<END-OF-FILE>"}
                raise UnexpectedCharacters(text, pos, line_ctr.line, line_ctr.column, allowed)
            value = m.group(0)
            type_ = m.lastgroup
            if type_ in ignore:
                line_ctr.feed(value, type_ in self.newline)
                continue
            t = Token(type_, value, pos, line_ctr.line, line_ctr.column)
            line_ctr.feed(value, type_ in self.newline)
            t.end_line = line_ctr.line
            t.end_column = line_ctr.column
            t.end_pos = line_ctr.char_pos
            words = self.keywords.get(type_)
            if words is not None:
                keyword = words.get(value)
                if keyword is not None:
                    t.type = keyword
            lex_state.last_token = t
            return t
        raise EOFError(self)


class ContextualLexer:
    """Each parser state's lexer (`lexers`, by state) and the lexer of every terminal."""

    __slots__ = ("lexers", "root_lexer")

    def __init__(self, lexers: dict[int, StateLexer], root_lexer: StateLexer) -> None:
        self.lexers = lexers
        self.root_lexer = root_lexer


# ---------------------------------------------------------------------- parsing


class Rule:
    """A grammar rule as the parser reduces it: the nonterminal it makes (`origin`), the
    symbols it pops (`size`), and how its node is built (a call of it)."""

    __slots__ = ("origin", "size", "name", "include", "nones", "expand1")

    def __init__(
        self,
        origin: str,
        size: int,
        name: str,
        include: tuple[tuple[int, bool, int], ...] | None,
        nones: int,
        expand1: bool,
    ) -> None:
        self.origin = origin
        self.size = size
        self.name = name  # the node's `data`: the alias, else the rule's name
        # the children kept: (index, spliced in (an `_rule`), placeholders before it);
        # None keeps every child as it is
        self.include = include
        self.nones = nones  # placeholders after the last child kept
        self.expand1 = expand1  # a `?rule`: one child kept is the node itself

    def __repr__(self) -> str:
        return f"Rule({self.origin!r} -> {self.name!r}, {self.size})"

    def __call__(self, children: list) -> Any:
        """The node of a reduction of `children`, positioned from them (as Lark's
        `ChildFilterLALR`, `ExpandSingleChild` and `PropagatePositions` make it)."""
        include = self.include
        if include is None:
            filtered = children
        else:
            filtered = []
            for i, splice, nones in include:
                if nones:
                    filtered += [None] * nones
                if splice:
                    if filtered:
                        filtered += children[i].children
                    else:  # a left recursion: its list goes on as the node's
                        filtered = children[i].children
                else:
                    filtered.append(children[i])
            if self.nones:
                filtered += [None] * self.nones
        if self.expand1 and len(filtered) == 1:
            node = filtered[0]
            if type(node) is Tree:
                _position(node.meta, children)
            return node
        node = Tree(self.name, filtered, Meta())
        _position(node._meta, children)
        return node


def _position(meta: Meta, children: list) -> None:
    """Give `meta` the span of `children` where it has none yet (it is the meta of a child
    a `?rule` passed up), and the span of its container (every child, the tokens filtered
    out too), as Lark's `PropagatePositions` does: a positioned node's container, or a
    token, gives the first and the last child's place."""
    first = _edge(children)
    if first is None:
        return
    last = _edge(reversed(children))
    if type(first) is Meta:
        line, column, start = (
            first.container_line,
            first.container_column,
            first.container_start_pos,
        )
    else:
        line, column, start = first.line, first.column, first.start_pos
    if type(last) is Meta:
        end_line, end_column, end = (
            last.container_end_line,
            last.container_end_column,
            last.container_end_pos,
        )
    else:
        end_line, end_column, end = last.end_line, last.end_column, last.end_pos
    if meta.empty:
        meta.line = line
        meta.column = column
        meta.start_pos = start
        meta.end_line = end_line
        meta.end_column = end_column
        meta.end_pos = end
        meta.empty = False
    meta.container_line = line
    meta.container_column = column
    meta.container_start_pos = start
    meta.container_end_line = end_line
    meta.container_end_column = end_column
    meta.container_end_pos = end


def _edge(children: Any) -> Meta | Token | None:
    """The place of the first child of `children` that has one: a positioned node's
    meta, or a token."""
    for c in children:
        kind = type(c)
        if kind is Tree:
            m = c._meta
            if m is not None and not m.empty:
                return m
        elif kind is Token:
            return c
    return None


class _Build:
    """The callbacks of a parse that builds its tree: each rule builds its own node."""

    __slots__ = ()

    def __getitem__(self, rule: Rule) -> Rule:
        return rule

    def __bool__(self) -> bool:
        return True


BUILD = _Build()


class ParseConf:
    """The tables one start symbol's parse runs on: `states` (state -> symbol ->
    (SHIFT, state) or (REDUCE, rule)), the reductions' `callbacks` (rule -> the node it
    builds; none: every value is the list of its children)."""

    __slots__ = ("parse_table", "callbacks", "start", "start_state", "end_state", "states")

    def __init__(self, parse_table: ParseTable, callbacks: Any, start: str) -> None:
        self.parse_table = parse_table
        self.start_state = parse_table.start_states[start]
        self.end_state = parse_table.end_states[start]
        self.states = parse_table.states
        self.callbacks = callbacks
        self.start = start


class ParseTable:
    """The LALR automaton: `states` as `ParseConf` has them, and the first and last
    state of each start symbol."""

    __slots__ = ("states", "start_states", "end_states")

    def __init__(
        self,
        states: dict[int, dict[str, tuple[int, Any]]],
        start_states: dict[str, int],
        end_states: dict[str, int],
    ) -> None:
        self.states = states
        self.start_states = start_states
        self.end_states = end_states


class ParserState:
    """A parse in progress: the automaton's states and the values beside them."""

    __slots__ = ("parse_conf", "state_stack", "value_stack")

    def __init__(
        self,
        parse_conf: ParseConf,
        state_stack: list[int] | None = None,
        value_stack: list | None = None,
    ) -> None:
        self.parse_conf = parse_conf
        self.state_stack = state_stack or [parse_conf.start_state]
        self.value_stack = value_stack or []

    @property
    def position(self) -> int:
        return self.state_stack[-1]

    def copy(self) -> ParserState:
        """A copy whose stacks are its own (the values themselves shared)."""
        return ParserState(self.parse_conf, list(self.state_stack), list(self.value_stack))

    def feed_token(self, token: Token, is_end: bool = False) -> Any:
        """Shift `token` after the reductions it implies; at the end (`is_end`, the
        token `$END`), reduce to the start symbol and return its value."""
        state_stack = self.state_stack
        value_stack = self.value_stack
        states = self.parse_conf.states
        end_state = self.parse_conf.end_state
        callbacks = self.parse_conf.callbacks
        while True:
            state = state_stack[-1]
            try:
                action, arg = states[state][token.type]
            except KeyError:
                expected = {s for s in states[state] if s.isupper()}
                raise UnexpectedToken(token, expected, state=self) from None
            if action is SHIFT:
                state_stack.append(arg)
                value_stack.append(token)
                return None
            size = arg.size
            if size:
                s = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                s = []
            value = callbacks[arg](s) if callbacks else s
            _, new_state = states[state_stack[-1]][arg.origin]
            state_stack.append(new_state)
            value_stack.append(value)
            if is_end and state_stack[-1] == end_state:
                return value_stack[-1]
