"""The tables of `serq.syntax.lalr`, read from the parser Lark built.

Lark builds the LALR automaton, the contextual lexers and the tree-building callbacks
from `grammar/serq.lark`; `read` turns what it built into the plain tables the run time
runs (states, rules, lexers' patterns), checking that each piece is of the kind the run
time reproduces: a callback chain other than Lark's `PropagatePositions`,
`ChildFilterLALR` and `ExpandSingleChild` around its tree class, or a lexer callback
other than the keyword retyping of an `UnlessCallback`, is refused (`TableError`)
rather than run differently. Only building imports Lark: a process that finds the
tables in the cache (`serq.syntax.grammar_cache`) does not.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from serq.syntax.lalr import REDUCE, SHIFT, ContextualLexer, ParseTable, Rule, StateLexer


class TableError(Exception):
    """Lark built something the run time does not reproduce."""


def read(lark: Any) -> tuple[ParseTable, ContextualLexer]:
    """The parse table and the contextual lexer of the Lark parser `lark` (LALR, a
    contextual lexer, positions propagated, no transformer)."""
    from lark.parsers.lalr_analysis import Shift

    frontend = lark.parser
    inner = frontend.parser.parser
    table = inner.parse_table
    rules: dict[int, Rule] = {}
    for rule, callback in inner.callbacks.items():
        rules[id(rule)] = _rule(rule, callback)
    states: dict[int, dict[str, tuple[int, Any]]] = {}
    for state, actions in table.states.items():
        row = {}
        for symbol, (action, arg) in actions.items():
            if action is Shift:
                row[symbol] = (SHIFT, arg)
            else:
                row[symbol] = (REDUCE, rules[id(arg)])
        states[state] = row
    parse_table = ParseTable(states, dict(table.start_states), dict(table.end_states))
    contextual = getattr(frontend.lexer, "lexer", frontend.lexer)  # under the post-lexer
    made: dict[int, StateLexer] = {}

    def lexer_of(basic: Any) -> StateLexer:
        if id(basic) not in made:
            made[id(basic)] = _lexer(basic)
        return made[id(basic)]

    lexers = {state: lexer_of(basic) for state, basic in contextual.lexers.items()}
    return parse_table, ContextualLexer(lexers, lexer_of(contextual.root_lexer))


def _rule(rule: Any, callback: Any) -> Rule:
    """The `Rule` that builds what Lark's `callback` for `rule` builds."""
    from lark.parse_tree_builder import (
        ChildFilterLALR,
        ChildFilterLALR_NoPlaceholders,
        ExpandSingleChild,
        PropagatePositions,
    )
    from lark.tree import Tree

    if not isinstance(callback, PropagatePositions) or callback.node_filter is not None:
        raise TableError(f"{rule}: positions are not propagated")
    f = callback.node_builder
    include = None
    nones = 0
    if isinstance(f, ChildFilterLALR):
        include = tuple((i, bool(splice), n) for i, splice, n in f.to_include)
        nones = f.append_none
        f = f.node_builder
    elif isinstance(f, ChildFilterLALR_NoPlaceholders):
        include = tuple((i, bool(splice), 0) for i, splice in f.to_include)
        f = f.node_builder
    expand1 = isinstance(f, ExpandSingleChild)
    if expand1:
        f = f.node_builder
    if not (isinstance(f, partial) and f.func is Tree and len(f.args) == 1 and not f.keywords):
        raise TableError(f"{rule}: a callback that does not build a Tree: {f!r}")
    # plain strings: Lark's names are its `Token`s, which would make the pickled parser
    # (`serq.syntax.grammar_cache`) import Lark, and with it `regex`, to load
    return Rule(str(rule.origin.name), len(rule.expansion), str(f.args[0]), include, nones, expand1)


def _lexer(basic: Any) -> StateLexer:
    """The `StateLexer` that lexes as Lark's `basic` lexer does."""
    from lark.lexer import UnlessCallback

    scanner = basic.scanner  # built, with the keyword callbacks, on first use
    keywords: dict[str, dict[str, str]] = {}
    for terminal, callback in basic.callback.items():
        if not isinstance(callback, UnlessCallback):
            raise TableError(f"lexer callback of {terminal} is not a keyword's: {callback!r}")
        words = {}
        for strtok in callback.scanner.terminals:
            pattern = strtok.pattern
            if pattern.type != "str" or pattern.flags:
                raise TableError(f"keyword {strtok.name} is not a plain string")
            words.setdefault(pattern.value, strtok.name)  # the first alternative wins
        keywords[terminal] = words
    if basic.use_bytes:
        raise TableError("a lexer of bytes")
    return StateLexer(
        tuple(m.pattern for m in scanner._mres),  # each compiled with the same flags
        scanner.g_regex_flags,
        frozenset(basic.ignore_types),
        frozenset(basic.newline_types),
        keywords,
        frozenset(scanner.allowed_types),
    )
