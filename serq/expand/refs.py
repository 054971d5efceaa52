"""References in the kernel: one name per pool or stage, long names included.

A queue's pool `kv` is the program's pool `P.kv`, and the member reference
`P[i].kv` is the kernel's array reference `P.kv[i]`: a single part whose name
has dots, with the one index. A dotted reference that names no pool or stage,
read in an expression, is an attribute (`D.first_token`, set by a `mark`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from serq.expand.walk import child_fields, is_node
from serq.syntax import ast

# Fields that hold a pool or stage, where a reference is never an attribute.
_RESOURCE_FIELDS = frozenset({"pool", "stages", "growing", "source", "dest", "on", "target"})


def collapse(ref: ast.Ref) -> ast.Ref:
    """`P[i].kv` as the single part `P.kv[i]`; a reference with two indices stays as written."""
    if len(ref.parts) == 1:
        return ref
    indexed = [p for p in ref.parts if p.index is not None]
    if len(indexed) > 1:
        return ref
    first, last = ref.parts[0].ident, ref.parts[-1].ident
    span = (
        replace(
            first.span,
            end=last.span.end,
            end_line=last.span.end_line,
            end_column=last.span.end_column,
        )
        if first.span.file == last.span.file and first.span.start <= last.span.end
        else first.span
    )
    ident = ast.Ident(ref.dotted, span)
    index = indexed[0].index if indexed else None
    return replace(ref, parts=(ast.RefPart(ident, index, ref.span),))


def normalize(node: Any) -> Any:
    """Collapse every reference; in an expression, one without an index is a name, as the
    parser reads `used(kv)` (a dotted one naming no pool or stage is an attribute)."""

    def visit(n: Any, resource_position: bool) -> Any:
        changes = {}
        for fname in child_fields(n):
            value = getattr(n, fname)
            res = fname in _RESOURCE_FIELDS
            if isinstance(value, tuple):
                new = tuple(visit(v, res) if is_node(v) else v for v in value)
                if any(a is not b for a, b in zip(new, value, strict=True)):
                    changes[fname] = new
            elif is_node(value):
                new = visit(value, res)
                if new is not value:
                    changes[fname] = new
        if changes:
            n = replace(n, **changes)
        if isinstance(n, ast.Ref):
            n = collapse(n)
            part = n.parts[0]
            if not resource_position and len(n.parts) == 1 and part.index is None:
                return ast.Name(part.ident, n.span)
        return n

    return visit(node, False)
