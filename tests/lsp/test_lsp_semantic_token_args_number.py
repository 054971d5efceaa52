"""The semantic token of `args.number` covers `args.number`, a function of the default library.

`args.number` is one token of the grammar (ARGS_NUMBER), never `args` and a member; its
semantic token covered `args` alone, as a keyword, and `number` had none, so an editor
coloured the two halves of one word apart. It is now one `function` token with the
`defaultLibrary` modifier, as the built-in functions (`min`, `exp`) are, and as the
TextMate grammar's `support.function.library` colours it.
"""

from __future__ import annotations

from serq_lsp import semantic_tokens
from serq_lsp.analysis import analyze

TEXT = """use "std/args";
fn main() {
  let rate = args.number("rate", 0.5) + min(1, args.number("é😀", 2));
  let n = args.numberx; // the grammar reads `args.number` then `x`
}
"""


def _tokens(text: str) -> list[tuple[str, str, list[str]]]:
    data = semantic_tokens.encode(analyze(text, "/nowhere/args.sq"))
    lines = text.splitlines()
    line = col = 0
    out = []
    for k in range(0, len(data), 5):
        dl, dc, length, kind, modifiers = data[k : k + 5]
        line, col = line + dl, (col + dc if dl == 0 else dc)
        piece = lines[line].encode("utf-16-le")[2 * col : 2 * (col + length)].decode("utf-16-le")
        names = [m for b, m in enumerate(semantic_tokens.TOKEN_MODIFIERS) if modifiers >> b & 1]
        out.append((piece, semantic_tokens.TOKEN_TYPES[kind], names))
    return out


def test_args_number_is_one_function_of_the_default_library():
    tokens = _tokens(TEXT)
    library = [t for t in tokens if t[0].startswith("args")]
    assert library == [("args.number", "function", ["defaultLibrary"])] * 3
    assert ("min", "function", ["defaultLibrary"]) in tokens  # the same kind as a built-in
    assert not any(t[0] in ("args", "number") for t in tokens)
    assert '"é😀"' in [t[0] for t in tokens]  # the string after it, at its UTF-16 place


def test_a_member_of_something_else_is_not_the_library_function():
    # `x.args.number` is not the grammar's token: no library function is coloured there
    tokens = _tokens("fn main() {\n  let a = x.args.number;\n}\n")
    assert not any(t[0] == "args.number" for t in tokens)
