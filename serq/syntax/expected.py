"""What the parser expected, in words: `expected `;` or an operator`, not a token dump."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from serq.syntax.lalr import Token

# Terminals that can begin an expression; when NUMBER and `~` are both among
# those expected, the parser was after an expression.
_EXPRESSION_START = {"NAME", "NUMBER", "LPAR", "MINUS", "BANG", "TILDE", "MAX", "MIN", "SUM"}
_EXPRESSION_START.add("ARGS_NUMBER")  # `args.number(...)`, a let's value
# Terminals that continue an expression already read.
_OPERATORS = {
    "OR",
    "AND",
    "COMPARE",
    "PLUS",
    "MINUS",
    "STAR",
    "SLASH",
    "CARET",
    "QMARK",
    "DOT",
    "LSQB",
}
# Where ERROR is accepted the parser was in a list; one keyword of the list
# tells which, and the list's own keywords collapse into its name.
_LISTS = (
    ("SET", "a statement"),
    ("LET", "an item"),
    ("CAP", "a pool option"),
    ("BUDGET", "a step option"),
    ("ARRIVE", "a workload clause"),
    ("HORIZON", "a run setting"),
    ("NIC", "a queue member"),
)
_ORDER = ["SEMICOLON", "RBRACE", "RPAR", "RSQB", "COMMA", "LBRACE", "LPAR", "EQUAL", "COLON"]


class Words:
    """Turns sets of terminal names into phrases, knowing each terminal's spelling."""

    def __init__(self, spellings: Mapping[str, str], list_members: Mapping[str, set[str]]):
        self._spellings = spellings
        self._list_members = list_members

    def terminal(self, name: str) -> str:
        """The words for one terminal: `` `;` ``, `a name`, `end of file`."""
        if name == "NAME":
            return "a name"
        if name == "NUMBER":
            return "a number"
        if name == "STRING":
            return "a string"
        if name == "$END":
            return "end of file"
        spelled = self._spellings.get(name)
        return f"`{spelled}`" if spelled is not None else name.lower()

    def found(self, token: Token | None) -> str:
        """The words for what the parser found instead: the token as written."""
        if token is None or token.type == "$END":
            return "end of file"
        if token.type == "STRING":
            return "a string"
        return f"`{token.value}`"

    def expected(self, names: Iterable[str]) -> str:
        """A phrase for what the parser would have accepted."""
        names = set(names) - {"ERROR"}
        categories: list[str] = []
        for marker, label in _LISTS:
            if marker in names:
                names -= self._list_members.get(marker, set())
                names.discard(marker)
                categories.append(label)
        if "NUMBER" in names and "TILDE" in names:
            names -= _EXPRESSION_START
            categories.append("an expression")
        operators = names & _OPERATORS
        if len(operators) >= 3:
            names -= operators
            names.discard("LPAR")
            categories.append("an operator")
        ordered = sorted(names, key=lambda n: (_ORDER.index(n) if n in _ORDER else 99, n))
        phrases = [self.terminal(n) for n in ordered] + categories
        if not phrases:
            return "nothing more here"
        if len(phrases) > 6:
            return "one of " + ", ".join(phrases[:6]) + ", …"
        if len(phrases) == 1:
            return phrases[0]
        return ", ".join(phrases[:-1]) + " or " + phrases[-1]
