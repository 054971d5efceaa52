"""What a name is, in markdown: the text hover shows for a declaration or a reference."""

from __future__ import annotations

import math
import os

from serq import builtins
from serq.diagnostics import number_text
from serq.expand.printer import print_node
from serq.link.index import Key, Occurrence
from serq.syntax import ast
from serq_lsp import words
from serq_lsp.analysis import Analysis


def describe(analysis: Analysis, key: Key) -> str | None:
    """Markdown describing the name `key` of `analysis`' document, or None if nothing is known."""
    namespace, name = key
    if namespace == "context":
        meaning = words.CONTEXT_MEANINGS.get(name, "")
        homes = words.context_homes(name)
        where = homes if homes.startswith("everywhere") else f"in {homes}"
        return f"**context variable** `{name}`: {meaning}.\n\nMay be read {where}."
    if namespace == "builtin":
        what = "built-in constant" if name == "inf" else "built-in attribute"
        return f"**{what}** `{name}`: {words.BUILTIN_MEANINGS.get(name, '')}."
    if namespace in ("func", "dist"):
        builtin = builtins.lookup(name, draw=namespace == "dist")
        return builtin.markdown() if builtin is not None else None
    if namespace == "file":
        return f"library file `{name}`"
    if namespace == "std":
        return f"library `{name}`, supplied by serq: {words.KEYWORDS['args']}"
    declarations = analysis.index.declarations(key)
    if not declarations:
        return None
    first = declarations[0]
    return _DESCRIBERS.get(first.kind, _generic)(analysis, first, declarations)


def _code(text: str) -> str:
    return f"```serq\n{text}\n```"


def _number(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "not a constant"
    return number_text(value)  # inf and -inf as their repr


def _let(analysis: Analysis, decl: Occurrence, _: list[Occurrence]) -> str:
    item: ast.Let = decl.node
    value = _fold(analysis, item.name.name)
    return _code(print_node(item)) + f"\n\n`let` constant, folded value **{_number(value)}**"


def _fold(analysis: Analysis, name: str) -> float | None:
    try:
        return analysis.let_value(name)
    except LookupError:  # the program did not link: fold what can be folded
        pass
    from serq.expand.context import NotConstant, evaluate

    env: dict[str, float] = {}
    for item in analysis.module.all_items():
        if isinstance(item, ast.Let):
            try:
                env.setdefault(item.name.name, evaluate(item.value, env))
            except NotConstant:
                pass
    return env.get(name)


def _def(analysis: Analysis, decl: Occurrence, _: list[Occurrence]) -> str:
    item = decl.node
    params = ", ".join(p.name for p in item.params)
    head = f"def {item.name.name}({params})"
    where = ""
    if decl.span.file != analysis.path:
        where = (
            f", in the library `{os.path.relpath(decl.span.file, os.path.dirname(analysis.path))}`"
        )
    if isinstance(item, ast.DefExpr):
        return _code(f"{head} = {print_node(item.body)};") + f"\n\n`def` of an expression{where}"
    return _code(head) + f"\n\n`def` of statements, written out in place at each call{where}"


def _pool(analysis: Analysis, decl: Occurrence, _: list[Occurrence]) -> str:
    text = _code(print_node(decl.node))
    if decl.container:
        text += f"\n\npool of queue `{decl.container}`, `{decl.key[1]}` in the kernel"
    return text + _family(analysis, decl.key[1], "pool")


def _stage(analysis: Analysis, decl: Occurrence, _: list[Occurrence]) -> str:
    node = decl.node
    if isinstance(node, ast.QueueNic):
        return (
            _code(print_node(node)) + f"\n\nthe NIC of queue `{decl.container}`: "
            f"stage `{decl.key[1]}` in the kernel"
        )
    kind = type(node.kind).__name__.lower()
    return _code(print_node(node)) + f"\n\n{kind} stage" + _family(analysis, decl.key[1], "stage")


def _family(analysis: Analysis, name: str, kind: str) -> str:
    family = analysis.family(kind, name)
    if family is None or not family[1]:
        return ""
    return f", a family of {family[0]}"


def _queue(analysis: Analysis, decl: Occurrence, _: list[Occurrence]) -> str:
    q: ast.Queue = decl.node
    size = f"[{print_node(q.size)}]" if q.size is not None else ""
    roles = f" : {', '.join(r.name for r in q.roles)}" if q.roles else ""
    lines = [f"queue {q.name.name}{size}{roles} {{"]
    for m in q.members:
        if isinstance(m, ast.QueuePool):
            lines.append(
                "  " + print_node(m).splitlines()[0].rstrip(" {") + " { … }"
                if "\n" in print_node(m)
                else "  " + print_node(m)
            )
        elif isinstance(m, (ast.QueueServe, ast.QueueNic)):
            lines.extend("  " + line for line in print_node(m).splitlines())
        elif isinstance(m, ast.Entry):
            params = f" ({', '.join(p.name for p in m.params)})" if m.params else ""
            source = f" from {m.source.name}" if m.source else ""
            lines.append(f"  {m.verb.name}{params}{source} {{ … }}")
    lines.append("}")
    return (
        _code("\n".join(lines))
        + "\n\nqueue with roles "
        + (", ".join(f"`{r.name}`" for r in q.roles) or "none")
    )


def _entry(analysis: Analysis, decl: Occurrence, all_decls: list[Occurrence]) -> str:
    heads = []
    for d in all_decls:
        e: ast.Entry = d.node
        params = f" ({', '.join(p.name for p in e.params)})" if e.params else ""
        source = f" from {e.source.name}" if e.source else ""
        heads.append(f"{e.verb.name}{params}{source}")
    return _code("\n".join(heads)) + f"\n\nentry of queue `{decl.container}`"


def _attribute(analysis: Analysis, decl: Occurrence, all_decls: list[Occurrence]) -> str:
    name = decl.key[1]
    sites = ", ".join(f"line {d.span.line}" for d in all_decls)
    hidden = name in analysis.hidden_attributes
    text = f"**session attribute** `{name}`" + (" (hidden from the scheduler)" if hidden else "")
    return (
        text
        + f"\n\nset at {sites}:\n"
        + _code("\n".join(print_node(d.node).splitlines()[0] for d in all_decls[:5]))
    )


def _generic(analysis: Analysis, decl: Occurrence, all_decls: list[Occurrence]) -> str:
    node = decl.node
    what = {
        "statistic": "observed statistic",
        "gauge": "gauge",
        "mark": f"mark, read by the caller as `{decl.key[1]}`",
        "parameter": "parameter",
        "binding": "binding",
    }.get(decl.kind, decl.kind)
    if decl.kind == "binding" and isinstance(node, ast.Binding):
        return _code(f"{node.name.name} = {print_node(node.value)}") + (
            "\n\n`at admission` binding: read when the hold is admitted"
        )
    if decl.kind == "parameter":
        owner = getattr(getattr(node, "name", None), "name", None) or getattr(
            getattr(node, "verb", None), "name", ""
        )
        return f"**parameter** `{decl.key[1].rsplit(':', 1)[1]}` of `{owner}`"
    text = f"**{what}** `{decl.key[1].split(':')[-1]}`"
    if decl.kind in ("statistic", "gauge", "mark"):
        text += "\n\n" + _code(print_node(node).splitlines()[0])
    return text


def _claim(analysis: Analysis, decl: Occurrence, _: list[Occurrence]) -> str:
    """A claim: its text, and in words what it checks and when."""
    item: ast.Claim = decl.node
    if item.kind == "at_end":
        when = "once, when the run ends (not evaluated while sessions are live then), on the "
        when += "run's aggregates"
    else:
        stage = print_node(item.stage) if item.stage is not None else "?"
        quantifier = "every" if item.kind == "every_iteration" else "at least one"
        when = f"as {quantifier} iteration of step stage `{stage}` starts, once it is planned"
    text = f"claim: checks `{print_node(item.pred)}` {when}"
    if item.given is not None:
        text += (
            f"; only while every arriving session satisfies `{print_node(item.given)}` "
            "(else it is out of scope)"
        )
    return _code(print_node(item)) + f"\n\n{text}. `serq run` reports it; `--claims-fail` "
    "exits 3 when it fails."


_DESCRIBERS = {
    "claim": _claim,
    "let": _let,
    "def": _def,
    "pool": _pool,
    "stage": _stage,
    "queue": _queue,
    "entry": _entry,
    "attribute": _attribute,
}
