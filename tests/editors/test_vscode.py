"""The VS Code extension (`editors/vscode/`): its npm tests, and its grammar against Lark's.

`npm test` type-checks the client against `@types/vscode`, packages the `.vsix`
and runs the extension's own tests (grammar, tokenization, package contents).
The other cases check the TextMate grammar against the parser itself: every
keyword of `serq.lark` is a keyword of the TextMate grammar, the names of
`serq.vocabulary` are the ones it highlights, and on every example and corpus
file each word is highlighted as a keyword exactly where Lark reads a keyword.

The cases that run Node skip, saying so, only when `node` or `npm` is missing;
`scripts/test.sh` installs both in CI.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from serq import vocabulary
from serq.syntax.lalr import LexerState, Token, UnexpectedToken
from serq.syntax.parser import START_SYMBOLS, grammar

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "editors" / "vscode"
TM_GRAMMAR = EXTENSION / "syntaxes" / "serq.tmLanguage.json"
SOURCES = sorted(
    [*ROOT.glob("examples/**/*.sq"), *ROOT.glob("tests/corpus/valid*/**/*.sq")],
    key=lambda p: p.relative_to(ROOT).as_posix(),
)
# the keywords no example writes (`given`, `head`), and lets named as the options that
# read them (examples/vocabulary/sarathi_claims.sq's `budget budget;`)
EXTRA = """let budget = 8; let cap = 2; let seed = 1; let horizon = 10;
pool kv { cap  cap; block 16; preempt by (admission) requeue head; }
stage engine : step {
  budget budget;
  chunk budget;
  cost 0.001;
  memory kv;
}
workload { arrive poisson(1); }
session { hold kv (1) { run engine prefill (1); } }
claim small given (budget > 1): every iteration of engine (tokens <= budget);
run { horizon horizon; seed seed; }
"""
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

needs_node = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are not installed (scripts/test.sh installs them)",
)


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """The extension's npm dependencies, installed from its lock file if they are missing."""
    modules = EXTENSION / "node_modules"
    if not (modules / ".package-lock.json").is_file():
        _npm("ci", "--no-audit", "--no-fund", "--loglevel=error", timeout=600)
    return modules


def _npm(*args: str, timeout: float) -> str:
    done = subprocess.run(
        ["npm", *args],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        pytest.fail(f"npm {' '.join(args)} failed:\n{done.stdout[-6000:]}\n{done.stderr[-6000:]}")
    return done.stdout


@needs_node
def test_npm_test_passes(node_modules):
    """tsc --noEmit, the .vsix build and the extension's node tests all pass."""
    out = _npm("test", "--silent", timeout=600)
    assert re.search(r"^# fail 0$", out, re.M), out[-3000:]


def _tm_words(repository_key: str) -> dict[str, str]:
    """The words of the TextMate grammar's `\\b(?:a|b)\\b` patterns under one key, with scopes."""
    rules = json.loads(TM_GRAMMAR.read_text(encoding="utf-8"))["repository"][repository_key]
    found: dict[str, str] = {}
    for rule in rules["patterns"]:
        match = re.search(r"\\b\(\?:([\w|]+)\)\\b", rule["match"])
        assert match, rule
        for word in match.group(1).split("|"):
            found[word] = rule["name"]
    return found


def _lark_keywords() -> set[str]:
    return set(grammar().keywords)  # the words the grammar's string terminals spell


def test_every_lark_keyword_is_a_textmate_keyword():
    missing = _lark_keywords() - set(_tm_words("keywords"))
    assert not missing, (
        f"serq.lark has keywords the TextMate grammar lacks: {sorted(missing)}; "
        "run `npm run generate` in editors/vscode"
    )


def test_textmate_keywords_are_lark_keywords():
    extra = set(_tm_words("keywords")) - _lark_keywords()
    assert not extra, (
        f"the TextMate grammar highlights words that are not keywords: {sorted(extra)}"
    )


def test_textmate_names_are_the_vocabulary():
    """The built-in names it highlights are serq.vocabulary's (else: `npm run generate`)."""
    tm = _tm_words("builtins")
    assert {w for w, s in tm.items() if s.startswith("variable.language.context")} == set(
        vocabulary.CONTEXT_VARS
    )
    assert {w for w, s in tm.items() if s.startswith("support.variable.attribute")} == set(
        vocabulary.BUILTIN_ATTRS | vocabulary.TRACE_ATTRS
    )
    assert {w for w, s in tm.items() if s.startswith("support.function.observable")} == set(
        vocabulary.OBSERVABLES
    )
    # min and max are also Lark keywords (aggregates), highlighted as such
    assert {w for w, s in tm.items() if s.startswith("support.function.math")} == set(
        vocabulary.MATH_FUNCS
    ) - _lark_keywords()
    assert {w for w, s in tm.items() if s.startswith("support.function.aggregate.claim")} == set(
        vocabulary.CLAIM_AGGREGATES
    )
    draws = json.loads(TM_GRAMMAR.read_text(encoding="utf-8"))["repository"]["draws"]
    listed = re.search(r"\\b\(\?:([\w|]+)\)\\b", draws["patterns"][0]["match"]).group(1)
    assert set(listed.split("|")) == set(vocabulary.DISTRIBUTIONS)


def _lark_words(text: str) -> list[tuple[int, int, str, bool]]:
    """Each word Lark lexes in `text`: (line, column, word, is_keyword).

    The contextual lexer reads a word as a keyword wherever the parser's state
    lists that keyword; when the parser then refuses it, the driver takes it as
    the name it spells (`serq.syntax.parser`, `_as_name`). So does this loop."""
    g = grammar()
    state = g.parser_state("program")
    lex = LexerState(text)
    words = []
    while True:
        try:
            token = g.lexer.lexers[state.position].next_token(lex, state)
        except EOFError:
            break
        try:
            state.feed_token(token)
        except UnexpectedToken:
            token = Token.new_borrow_pos("NAME", token.value, token)
            state.feed_token(token)
        if WORD.fullmatch(token.value):
            words.append((token.line, token.column, token.value, token.type != "NAME"))
    state.feed_token(Token("$END", "", len(text)), True)
    return words


@needs_node
def test_textmate_keywords_agree_with_lark_on_every_example(node_modules, tmp_path):
    assert "program" in START_SYMBOLS and len(SOURCES) > 40
    extra = tmp_path / "extra.sq"
    extra.write_text(EXTRA, encoding="utf-8")
    sources = [*SOURCES, extra]
    dump = subprocess.run(
        ["node", "test/dump-scopes.js", *map(str, sources)],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    scopes = json.loads(dump.stdout)
    keyword_scopes = set(scopes["keywordScopes"])
    disagreements = []
    for path in sources:
        at = {
            (line, column): scope
            for line, start, end, scope in scopes["files"][str(path)]
            for column in range(start, end)
        }
        for line, column, word, is_keyword in _lark_words(path.read_text(encoding="utf-8")):
            scope = at.get((line, column))
            if (scope in keyword_scopes) != is_keyword:
                kind = "keyword" if is_keyword else "name"
                where = f"{path.name if path == extra else path.relative_to(ROOT)}:{line}:{column}"
                disagreements.append(f"{where}: Lark reads `{word}` as a {kind}, TextMate: {scope}")
    assert not disagreements, "\n".join(disagreements)


def test_the_horizon_setting_takes_what_serq_run_takes():
    """`serq.run.horizon` is passed as `serq run --horizon`, which refuses 0 (not a
    positive number, a usage error): the setting said `minimum: 0`, so the settings
    editor took 0 and the Run then failed with argparse's usage line."""
    from serq.cli import _number

    package = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    horizon = package["contributes"]["configuration"]["properties"]["serq.run.horizon"]
    assert "minimum" not in horizon and horizon["exclusiveMinimum"] == 0
    with pytest.raises(Exception, match="not a positive number"):
        _number("0")
    assert _number("1e-300") == 1e-300
