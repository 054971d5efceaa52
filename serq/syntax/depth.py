"""The nesting limit: how deep a parse tree may be before the phases after the parser see it.

Lark's LALR parser builds a tree of any depth without recursion, but the
builder, the expander, the linker, the IR codec, the printers and the
simulator's compiler walk trees recursively. Rather than let a deep tree end
in Python's `RecursionError`, the parser measures each item's tree (without
recursion) and reports `E-too-deep` at the first construct that passes
`MAX_DEPTH`; such an item goes no further, like an item with a syntax error.

Depth counts the constructs that nest: each operator (unary `-` and `!`, each
operand of a chain of binary operators, `?:`), each call, draw, aggregate,
index and block (`loop { }`, `branch`, an entry's body). Brackets that only
group (`((x))`) add nothing. The limit is `MAX_DEPTH` levels, far beyond any
hand-written program and within what every phase walks on Python's default
recursion limit.
"""

from __future__ import annotations

from serq.syntax.lalr import Tree

MAX_DEPTH = 100
"""The deepest a parse tree may nest (documented in docs/limits.md)."""

# Lark nodes that only carry a list and add no level the user wrote.
_FLAT = frozenset({"exprs", "chunk", "program", "stmts", "params", "names", "refs"})


def too_deep(tree: Tree, limit: int = MAX_DEPTH) -> Tree | None:
    """The first node of `tree` that lies deeper than `limit` levels, or None; no recursion."""
    stack: list[tuple[Tree, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if node.data not in _FLAT:
            depth += 1
            if depth > limit:
                return node
        for child in reversed(node.children):
            if isinstance(child, Tree):
                stack.append((child, depth))
    return None
