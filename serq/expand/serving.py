"""The serving vocabulary: `prefill`, `decode`, `tool` and `transfer` become `run` statements.

Which stage: `on STAGE` names it; otherwise the stage declared above the form
whose name is the role's (`prefill`, `decode`, `tool`; `link` or `transfer`),
and failing that, for prefill and decode, the step engine. Exactly one must
qualify. `[j]` indexes the stage found. On a step engine prefill and decode get
their mode; elsewhere the run is plain. In the `fn main` dialect the work is a
plain quantity, stated in the stage's unit as `cost(STAGE, work)`.

The client's `tool Z;` needs no declaration: in a program that declares no stage
`tool`, the workload owns one, a delay (an infinite server) named `tool`, declared
where the workload is (serq-workload.txt, session).
"""

from __future__ import annotations

from dataclasses import replace

from serq.diagnostics import Label, codes
from serq.expand.context import Context
from serq.expand.walk import map_blocks, walk
from serq.syntax import ast

_ROLE_NAMES = {
    "prefill": ("prefill",),
    "decode": ("decode",),
    "tool": ("tool",),
    "transfer": ("link", "transfer"),
}
# The stage names a serving form finds its stage by, when it has no `on STAGE`.
FORM_STAGES = frozenset(name for names in _ROLE_NAMES.values() for name in names)


def expand_serving(items: list[ast.Item], ctx: Context) -> list[ast.Item]:
    """Rewrite every serving form into the kernel `run` (and `load`, `release`) it stands for."""
    every: dict[str, ast.Stage] = {}
    for item in items:
        if isinstance(item, ast.Stage):
            every.setdefault(item.name.name, item)
    if "tool" not in every:
        items = _workload_tool(items)
        every.update((i.name.name, i) for i in items if isinstance(i, ast.Stage))
    above: dict[str, ast.Stage] = {}
    out: list[ast.Item] = []
    for item in items:
        if isinstance(item, ast.Stage):
            above.setdefault(item.name.name, item)
        out.append(map_blocks(item, lambda s, found=dict(above): _stmt(s, found, every, ctx)))
    return out


def _stmt(
    s: ast.Stmt, stages: dict[str, ast.Stage], every: dict[str, ast.Stage], ctx: Context
) -> list[ast.Stmt] | None:
    """`stages` are those declared above the form, where it looks for one; `every` stage
    is where an `on STAGE` is found, for its kind."""
    if isinstance(s, ast.Serving):
        result = _serving(s, stages, every, ctx)
    elif isinstance(s, ast.Transfer):
        result = _transfer(s, stages, ctx)
    elif isinstance(s, ast.Run) and not s.stages:
        ctx.error(
            codes.QUEUE,
            s.span,
            "`run (...)` with no stage runs on the queue's own, and is only in a queue's entry",
            help="name the stage: `run STAGE (...)`",
        )
        return []
    else:
        return None
    if result is not None:
        ctx.origin(s.span, s.verb if isinstance(s, ast.Serving) else "transfer", result)
    return result or []


def _workload_tool(items: list[ast.Item]) -> list[ast.Item]:
    """`items` with the workload's own `stage tool : delay;` declared just before the
    workload, when a `tool` form without `on` or an index would look for one."""
    bare = any(
        isinstance(n, ast.Serving) and n.verb == "tool" and not n.on and n.index is None
        for item in items
        for n in walk(item)
    )
    at = next((k for k, item in enumerate(items) if isinstance(item, ast.Workload)), None)
    if not bare or at is None:
        return items
    span = items[at].span
    tool = ast.Stage(ast.Ident("tool", span), None, ast.Delay(span), span)
    return [*items[:at], tool, *items[at:]]


def _is_step(stage: ast.Stage | None) -> bool:
    return stage is not None and isinstance(stage.kind, ast.Step)


def _find(
    form: ast.Serving | ast.Transfer, verb: str, stages: dict[str, ast.Stage], ctx: Context
) -> tuple[ast.Ref, ...] | None:
    """The stages the form runs on, as references, or None after a diagnostic."""
    if form.on:
        return form.on
    named = [stages[n] for n in _ROLE_NAMES[verb] if n in stages]
    found = named
    if not found and verb in ("prefill", "decode"):
        found = [s for s in stages.values() if _is_step(s)]
    if len(found) != 1:
        roles = " or ".join(f"`{n}`" for n in _ROLE_NAMES[verb])
        if not found:
            engine = ", or a step engine" if verb in ("prefill", "decode") else ""
            ctx.error(
                codes.SERVING,
                form.span,
                f"no stage declared above plays `{verb}`: none is named {roles}{engine}",
                help=f"declare a stage named {roles}, or write `{verb} on STAGE ...`",
            )
        else:
            ctx.error(
                codes.SERVING,
                form.span,
                f"{len(found)} stages could run this `{verb}`: "
                + ", ".join(f"`{s.name.name}`" for s in found),
                labels=tuple(Label(s.name.span, f"`{s.name.name}` qualifies") for s in found),
                help=f"say which with `{verb} on STAGE ...`",
            )
        return None
    stage = found[0]
    part = ast.RefPart(ast.Ident(stage.name.name, form.span), form.index, form.span)
    return (ast.Ref((part,), form.span),)


def _cost(ref: ast.Ref, work: ast.Expr, ctx: Context) -> ast.Expr:
    """`cost(STAGE, work)` in the `fn main` dialect, where a form's quantity is plain (a
    transfer's tokens are stated in the receiving pool's unit, `cost(POOL, n)`)."""
    if not ctx.fn_main:
        return work
    stage = ast.Ref(tuple(replace(p, index=None) for p in ref.parts), ref.span)
    return ast.Call(ast.Ident("cost", work.span), (stage, work), work.span)


def _serving(
    s: ast.Serving, stages: dict[str, ast.Stage], every: dict[str, ast.Stage], ctx: Context
) -> list[ast.Stmt] | None:
    refs = _find(s, s.verb, stages, ctx)
    if refs is None:
        return None
    mode = None
    if len(refs) == 1 and s.verb in ("prefill", "decode"):
        if _is_step(every.get(refs[0].dotted)):
            mode = s.verb
    work = _cost(refs[0], s.work, ctx) if len(refs) == 1 else s.work
    return [ast.Run(refs, mode, work, s.growing, s.span)]


def _transfer(s: ast.Transfer, stages: dict[str, ast.Stage], ctx: Context) -> list[ast.Stmt] | None:
    refs = _find(s, "transfer", stages, ctx)
    if refs is None:
        return None
    work = _cost(refs[0], s.work, ctx) if len(refs) == 1 else s.work
    return [
        ast.Run(refs, None, work, None, s.span),
        ast.Load(s.dest, _cost(s.dest, s.amount, ctx), s.span),
        ast.Release(s.source, s.span),
    ]
