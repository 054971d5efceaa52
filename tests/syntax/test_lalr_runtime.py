"""serq/syntax/lalr.py runs the tables Lark builds as Lark's own run time does.

Every program of the repository (examples, their libraries, the corpus, the benchmarks'
shapes) and seeded mutations of each (a span deleted, the text cut short, a character or
a word inserted) is lexed and parsed token by token by both, from each start symbol: the
same tokens (type, text, offsets, lines and columns), the same first error (the token
refused and the terminals expected, or the offset no token begins at and the terminals
allowed there) and, where the text parses, the same tree with the same positions on
every node (`container_*` included)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from serq.syntax import lalr
from serq.syntax.parser import START_SYMBOLS, build_lark, grammar, grammar_path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    {
        *ROOT.glob("examples/**/*.sq"),
        *ROOT.glob("tests/corpus/**/*.sq"),
        *ROOT.glob("bench/**/*.sq"),
        *ROOT.glob("lib/**/*.sq"),
    }
)
INSERTED = ["{", "}", ";", "(", ")", '"', "/*", "//", "1.2.3", "hold", "run", ".", "[", "~", "\n"]
META = lalr.Meta.__slots__[1:]  # every position a node has, `container_*` included


@pytest.fixture(scope="module")
def lark_parser():
    return build_lark(grammar_path().read_text(encoding="utf-8"))


def _mutations(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(4):
        if not text:
            break
        a = rng.randrange(len(text))
        b = min(len(text), a + rng.randint(1, 12))
        kind = rng.randrange(3)
        if kind == 0:
            out.append(text[:a] + text[b:])
        elif kind == 1:
            out.append(text[:a])
        else:
            out.append(text[:a] + rng.choice(INSERTED) + text[a:])
    return out


def _shape(node, token_type, tree_type):
    if node is None:
        return None
    if isinstance(node, token_type):
        return ("token", node.type, str(node), node.start_pos, node.line, node.column,
                node.end_line, node.end_column, node.end_pos)  # fmt: skip
    assert isinstance(node, tree_type), node
    meta = node.meta
    where = (meta.empty, *(getattr(meta, name, None) for name in META))
    return (node.data, where, tuple(_shape(c, token_type, tree_type) for c in node.children))


def _run(text, symbol, state, lexers, lex_state, kinds):
    """Lex and parse `text` token by token; the events and the tree (None on an error)."""
    token_type, tree_type, chars_error, token_error = kinds
    events = []
    while True:
        try:
            token = lexers[state.position].next_token(lex_state, state)
        except EOFError:
            break
        except chars_error as e:
            events.append(("characters", e.pos_in_stream, sorted(e.allowed)))
            return events, None
        events.append(_shape(token, token_type, tree_type))
        try:
            state.feed_token(token)
        except token_error as e:
            events.append(("refused", sorted(e.expected)))
            return events, None
    try:
        tree = state.feed_token(token_type("$END", "", len(text), 1, 1), True)
    except token_error as e:
        events.append(("end refused", sorted(e.expected)))
        return events, None
    return events, _shape(tree, token_type, tree_type)


def _ours(text, symbol):
    g = grammar()
    kinds = (lalr.Token, lalr.Tree, lalr.UnexpectedCharacters, lalr.UnexpectedToken)
    return _run(text, symbol, g.parser_state(symbol), g.lexer.lexers, lalr.LexerState(text), kinds)


def _larks(parser, text, symbol):
    from lark import Token, Tree
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    interactive = parser.parse_interactive(text, start=symbol)
    lexer = parser.parser.lexer
    lexers = getattr(lexer, "lexer", lexer).lexers
    kinds = (Token, Tree, UnexpectedCharacters, UnexpectedToken)
    state, lex_state = interactive.parser_state, interactive.lexer_thread.state
    return _run(text, symbol, state, lexers, lex_state, kinds)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_same_tokens_errors_and_trees_as_lark(path, lark_parser):
    text = path.read_text(encoding="utf-8")
    seed = sum(text.encode())
    for variant in [text, *_mutations(text, seed)]:
        for symbol in START_SYMBOLS:
            assert _ours(variant, symbol) == _larks(lark_parser, variant, symbol)


def test_the_programs_parse():
    """The comparison above is not only of errors: most of the programs parse whole."""
    parsed = sum(_ours(p.read_text(encoding="utf-8"), "program")[1] is not None for p in SOURCES)
    assert len(SOURCES) > 100 and parsed > len(SOURCES) * 0.8


def test_a_check_imports_no_lark(tmp_path):
    """With the tables in the cache, a process parses without importing Lark."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, SERQ_CACHE_DIR=str(tmp_path))
    code = (
        "import sys; from serq.syntax.parser import grammar; grammar(); "
        "print(sorted(m for m in sys.modules if m == 'lark' or m.startswith('lark.')))"
    )
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "'lark'" in first.stdout  # built, and stored
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "[]"
