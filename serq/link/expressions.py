"""Expressions: kernel expressions to IR expressions, with every name resolved.

`Resolver.expr` turns a kernel expression into an IR expression over a `Scope`
(`serq.link.resolve`) and reports each reference that fails: an unknown name (with a
"did you mean" when exactly one name is close), a name of the wrong kind, a call with the
wrong number of arguments, an array without an index or a scalar with one, a constant
index out of range, and anything but a constant where one is required (`Resolver.constant`
folds it then, and a NaN does not link). A failed part becomes a placeholder, so the rest
is still checked. It does not judge where a context variable or a hidden attribute may be
read (`serq.link.checks` does).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from serq import ir
from serq.diagnostics import Edit, Fix, Label, Span, codes, counted, spelling
from serq.diagnostics.suggest import close_names
from serq.expand.walk import walk
from serq.ir import arith
from serq.syntax import ast
from serq.vocabulary import (
    CLAIM_AGGREGATES,
    CLAIM_CONTEXT,
    CONTEXT_VARS,
    MAX_MEMBERS,
    OBSERVABLES,
)

if TYPE_CHECKING:
    from serq.link.resolve import Family, Scope

# The observables by the kind of resource they read; `blocksize` is folded at link time.
_POOL_FUNCS = frozenset(ir.POOL_OBSERVABLES) | {"blocksize"}
_STAGE_FUNCS = frozenset(ir.STAGE_OBSERVABLES)
_ARITY = {**{f: n for f, (n, _) in arith.FUNCTIONS.items()}, "cost": 2, "price": 3}
_FUNCTION_NAMES = frozenset(arith.FUNCTIONS) | OBSERVABLES | {"cost"} | CLAIM_AGGREGATES
_LANGUAGE = CONTEXT_VARS | {"inf"}


class Resolver:
    """Kernel expressions to IR expressions over a `Scope`, reporting into its diagnostics."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.failed = False  # set when a resolution reported an error or read a failed let

    # -- constants

    def constant(
        self,
        e: ast.Expr,
        what: str,
        *,
        visible: dict[str, float | None] | None = None,
    ) -> float | None:
        """The value of the constant `e` (`what` names its position in messages), or None
        after reporting why it is not one; `visible` limits the lets it may read."""
        failed, self.failed = self.failed, False
        try:
            lowered = self.expr(e, constant=True, draws=False, visible=visible)
            if self.failed:
                return None
            value = arith.fold(lowered)
            if value is None:  # unreachable: a constant expression always folds
                self.scope.error(codes.CONSTANT, e.span, f"{what} is not a constant")
                return None
            if math.isnan(value):
                self._nan(e, what)
                return None
            return value
        finally:
            self.failed = self.failed or failed

    def _nan(self, e: ast.Expr, what: str) -> None:
        """Report that the constant `e` (`what`) is NaN: at `e`, or, when `e` is the value
        `--set NAME=...` gave, at the `let` it changes, naming the override."""
        help_ = "a constant is a number or `inf`; `0/0` and `inf - inf` are not"
        let = next((n for n, v in self.scope.let_values.items() if v is e), None)
        flag = None if let is None else self.flag(let)
        if let is None or flag is None:
            self.scope.error(codes.CONSTANT, e.span, f"{what} is NaN", help=help_)
            return
        self.scope.error(
            codes.CONSTANT,
            self.scope.let_spans[let],
            f"{what} is NaN: `{spelling.option('set', flag)}` makes it so",
            labels=(Label(e.span, "the value given"),),
            help=f"give `{spelling.option('set', flag)}` a number or `inf`; `0/0` and "
            "`inf - inf` are not",
        )

    def whole(self, e: ast.Expr, what: str, *, low: int, high: int | None = None) -> int | None:
        """The constant `e` as a whole number in `low` .. `high`, or None after reporting."""
        value = self.constant(e, what)
        if value is None:
            return None
        top = math.inf if high is None else high
        if not (math.isfinite(value) and value == math.floor(value) and low <= value <= top):
            bound = f"at least {low}" if high is None else f"from {low} to {high}"
            self.out_of_domain(e, what, f"a whole number {bound}", value)
            return None
        return int(value)

    def out_of_domain(self, e: ast.Expr, what: str, rule: str, value: float) -> None:
        """Report that the constant `e` (`what`), folded to `value`, is not `rule`. When a
        `--set` override gave the value, the error is at the `let` it changes and names it."""
        message = f"{what} must be {rule}, not {_number(value)}"
        overrides = self.overrides(e)
        if not overrides:
            self.scope.error(codes.CONSTANT, e.span, message)
            return
        name = overrides[0]
        flag = self.flag(name) or name
        let_value = self.scope.lets.get(name)
        given = None if let_value is None else _number(let_value)
        self.scope.error(
            codes.CONSTANT,
            self.scope.let_spans[name],
            f"{message}: `{spelling.option('set', flag, given)}` makes it so",
            labels=(Label(e.span, f"{what} is {_number(value)} here"),),
            help=f"give `{spelling.option('set', flag)}` a value that makes {what} {rule}",
        )

    def flag(self, let: str) -> str | None:
        """The NAME of the `--set NAME=...` that gave `let` its value (the let's own name,
        or the program argument it reads), or None when no override did."""
        value = self.scope.let_values.get(let)
        override = None if value is None else spelling.override_of(value.span.file)
        return override[1] if override is not None and override[0] == "set" else None

    def overrides(self, e: ast.Expr) -> list[str]:
        """The `let`s whose values `--set` gave that the constant `e` reads, directly or
        through other lets, in the order they are met."""
        found: list[str] = []
        seen: set[str] = set()
        todo = [e]
        while todo:
            for n in walk(todo.pop()):
                name = _bare_name(n) if isinstance(n, ast.Name | ast.Ref) else None
                if name is None or name in seen:
                    continue
                seen.add(name)
                value = self.scope.let_values.get(name)
                if value is None:
                    continue
                if spelling.holds_set(value.span.file):
                    found.append(name)
                else:
                    todo.append(value)
        return found

    def family_size(self, item: ast.Pool | ast.Stage) -> int:
        """The member count of a pool or stage: 1, or its `[N]` (1 after reporting a bad N)."""
        if item.size is None:
            return 1
        kind = "pool" if isinstance(item, ast.Pool) else "stage"
        what = f"the size of {kind} `{item.name.name}`"
        count = self.whole(item.size, what, low=1, high=MAX_MEMBERS)
        return 1 if count is None else count

    def block(self, pool: ast.Pool) -> float | None:
        """The folded `block` of `pool` (the last one written), or None."""
        blocks = [o for o in pool.options if isinstance(o, ast.Option) and o.key == "block"]
        if not blocks or blocks[-1].value is None:
            return None
        what = f"the block of pool `{pool.name.name}`"
        value = self.constant(blocks[-1].value, what)
        if value is not None and not 0 < value < math.inf:
            self.out_of_domain(blocks[-1].value, what, "positive and finite", value)
            return None
        return value

    # -- expressions

    def expr(
        self,
        e: ast.Expr,
        *,
        constant: bool = False,
        draws: bool = True,
        visible: dict[str, float | None] | None = None,
    ) -> ir.Expr:
        """`e` with its names resolved. With `constant`, it may read only numbers, the
        `let`s in `visible` (default: all) and functions of numbers, and draws when `draws`;
        a constant that may draw (an arrival gap) reads context variables too, which the
        moment table judges."""
        return _Expr(self, constant, draws, visible).visit(e)

    def resource(self, node: ast.Expr | ast.Ident, kind: str) -> ir.Ref | None:
        """The pool or stage (`kind`) that `node` names, or None after reporting why not."""
        return _Expr(self, False, True, None).resource(node, kind)

    def family(self, ident: ast.Ident, kind: str) -> Family | None:
        """The whole family (`kind`) that `ident` names, or None after reporting why not."""
        return _Expr(self, False, True, None).lookup(ident, kind)

    def folded(self, e: ast.Expr) -> tuple[ir.Expr, float | None]:
        """`e` resolved (`expr`) and the value it folds to; None for a value that depends
        on the run, and for one whose resolution failed and said so (its placeholder is no
        value to judge: `budget foo;` is an unknown name, not a budget of 0)."""
        failed, self.failed = self.failed, False
        try:
            lowered = self.expr(e)
            return lowered, None if self.failed else arith.fold(lowered)
        finally:
            self.failed = self.failed or failed

    def fail(self, code: codes.Code, span: Span, message: str, **kw) -> ir.Num:
        """Report an error and return a placeholder expression."""
        self.failed = True
        self.scope.error(code, span, message, **kw)
        return ir.Num(0.0)


class _Expr:
    """One resolution: the constant-position rules in force."""

    def __init__(
        self,
        resolver: Resolver,
        constant: bool,
        draws: bool,
        visible: dict[str, float | None] | None,
    ) -> None:
        self.r = resolver
        self.scope = resolver.scope
        self.constant = constant
        self.draws = draws
        self.lets = self.scope.lets if visible is None else visible

    def visit(self, e: ast.Expr) -> ir.Expr:
        if isinstance(e, ast.Number):
            return ir.Num(float(e.value))
        if isinstance(e, ast.Name):
            return self.name(e.ident)
        if isinstance(e, ast.Ref):
            return self.ref_as_value(e)
        if isinstance(e, ast.Unary):
            return ir.Unary(e.op, self.visit(e.operand))
        if isinstance(e, ast.Binary):
            return ir.Binary(e.op, self.visit(e.left), self.visit(e.right))
        if isinstance(e, ast.Conditional):
            return ir.Cond(self.visit(e.test), self.visit(e.then), self.visit(e.otherwise))
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Draw):
            return self.draw(e)
        return self.r.fail(
            codes.INTERNAL,
            e.span,
            f"the kernel still holds a `{type(e).__name__}` expression (a bug in serq's expander)",
        )

    # -- names

    def name(self, ident: ast.Ident) -> ir.Expr:
        name, span = ident.name, ident.span
        if name in self.lets:
            value = self.lets[name]
            if value is None:
                self.r.failed = True
                return ir.Num(0.0)
            return ir.Num(value)
        if name == "inf":
            return ir.Num(math.inf)
        if name in self.scope.let_spans:  # a `let` declared after the one being folded
            return self.r.fail(
                codes.CONSTANT,
                span,
                f"`{name}` is read before its `let`",
                labels=(Label(self.scope.let_spans[name], "declared here, later"),),
                help="a `let` reads only the constants declared above it",
            )
        if name in self.scope.attrs:
            if self.constant:
                return self.not_constant(span, f"`{name}` is a session attribute")
            return ir.Attr(self.scope.attrs[name])
        if name in CONTEXT_VARS or name in CLAIM_CONTEXT:
            if self.constant and not self.draws:
                return self.not_constant(span, f"`{name}` is a context variable")
            return ir.Ctx(name)
        for kind in ("pool", "stage"):
            family = self.scope.family(kind).get(name)
            if family is not None:
                return self.r.fail(
                    codes.WRONG_KIND,
                    span,
                    f"`{name}` is a {kind}, not a value",
                    labels=(Label(family.span, f"the {kind} is declared here"),),
                    help=_observable_help(kind, name),
                )
        fallback = None
        if not self.constant:
            fallback = "declare it with `let`, or assign it with `set` to make it an attribute"
        return self.unknown(span, f"unknown name `{name}`", name, self.value_names(), fallback)

    def value_names(self) -> dict[str, Span | None]:
        names: dict[str, Span | None] = {n: self.scope.let_spans.get(n) for n in self.lets}
        if not self.constant:
            names.update({n: self.scope.attr_spans.get(n) for n in self.scope.attrs})
            names.update(dict.fromkeys(CONTEXT_VARS))
        names["inf"] = None
        return names

    def not_constant(self, span: Span, why: str) -> ir.Num:
        return self.r.fail(
            codes.CONSTANT,
            span,
            f"{why}, not a constant",
            help="this position takes a number, `inf`, or a `let` constant over them",
        )

    def unknown(
        self,
        span: Span,
        message: str,
        name: str,
        candidates: dict[str, Span | None],
        fallback: str | None = None,
    ) -> ir.Num:
        """Report an unknown `name`, suggesting the one close name among `candidates` (with
        where it is declared), else giving the `fallback` help."""
        close = close_names(name, candidates)
        kw: dict = {"help": fallback} if fallback else {}
        if len(close) == 1:
            kw["help"] = f"did you mean `{close[0]}`?"
            where = candidates[close[0]]
            if where is not None:
                kw["labels"] = (Label(where, f"`{close[0]}` is declared here"),)
            if span.end - span.start == len(name):  # the span is the name as written
                kw["fix"] = Fix(
                    f"change `{name}` to `{close[0]}`", (Edit(span, close[0]),), "unsafe"
                )
        return self.r.fail(codes.UNKNOWN_NAME, span, message, **kw)

    def ref_as_value(self, ref: ast.Ref) -> ir.Expr:
        if len(ref.parts) != 1:
            return self.r.fail(codes.INDEX, ref.span, f"`{_text(ref)}` takes one index at most")
        part = ref.parts[0]
        name = part.ident.name
        if part.index is None:
            return self.name(part.ident)
        for kind in ("pool", "stage"):
            family = self.scope.family(kind).get(name)
            if family is not None:
                return self.r.fail(
                    codes.WRONG_KIND,
                    ref.span,
                    f"`{_text(ref)}` is a {kind}, not a value",
                    labels=(Label(family.span, f"the {kind} is declared here"),),
                    help=_observable_help(kind, _text(ref)),
                )
        if name in self.lets or name in self.scope.attrs or name in _LANGUAGE:
            return self.r.fail(
                codes.INDEX,
                part.index.span,
                f"`{name}` is not an array: only pools and stages take an index",
            )
        names = {**self.scope.pools, **self.scope.stages}
        return self.unknown(
            part.ident.span,
            f"unknown pool or stage `{name}`",
            name,
            {n: f.span for n, f in names.items()},
        )

    # -- resources

    def resource(self, node: ast.Expr | ast.Ident, kind: str) -> ir.Ref | None:
        if isinstance(node, ast.Ident):
            ident, index, span = node, None, node.span
        elif isinstance(node, ast.Name):
            ident, index, span = node.ident, None, node.span
        elif isinstance(node, ast.Ref) and len(node.parts) == 1:
            part = node.parts[0]
            ident, index, span = part.ident, part.index, node.span
        elif isinstance(node, ast.Ref):
            self.r.fail(codes.INDEX, node.span, f"`{_text(node)}` takes one index at most")
            return None
        else:
            self.r.fail(codes.WRONG_KIND, node.span, f"a {kind} goes here, not an expression")
            return None
        family = self.lookup(ident, kind)
        if family is None:
            return None
        return ir.Ref(kind, family.base, family.count, self.index(family, index, span), span)

    def lookup(self, ident: ast.Ident, kind: str) -> Family | None:
        """The pool or stage family (`kind`) named `ident`, or None after reporting why not."""
        name = ident.name
        family = self.scope.family(kind).get(name)
        if family is not None:
            return family
        other = "stage" if kind == "pool" else "pool"
        found = self.scope.family(other).get(name)
        if found is not None:
            self.r.fail(
                codes.WRONG_KIND,
                ident.span,
                f"`{name}` is a {other}, not a {kind}",
                labels=(Label(found.span, f"the {other} is declared here"),),
            )
        else:
            candidates = {n: f.span for n, f in self.scope.family(kind).items()}
            self.unknown(ident.span, f"unknown {kind} `{name}`", name, candidates)
        return None

    def index(self, family: Family, index: ast.Expr | None, span: Span) -> ir.Expr | None:
        name = family.name
        if index is None:
            if family.count > 1:
                self.r.fail(
                    codes.INDEX,
                    span,
                    f"{family.kind} `{name}` is an array of {family.count}: it needs an index",
                    labels=(Label(family.span, f"declared with {family.count} members"),),
                    help=f"name one member, `{name}[0]` .. `{name}[{family.count - 1}]`, "
                    "or pick one with `choose`",
                )
            return None
        if not family.array:
            self.r.fail(
                codes.INDEX,
                index.span,
                f"{family.kind} `{name}` is not an array: it takes no index",
                labels=(Label(family.span, "declared without a size"),),
            )
            return None
        lowered = _Expr(self.r, False, True, None).visit(index)
        value = arith.fold(lowered)
        if value is None:
            return lowered
        if not (math.isfinite(value) and value == math.floor(value) and 0 <= value < family.count):
            self.r.fail(
                codes.INDEX,
                index.span,
                f"index {_number(value)} is out of range: `{name}` has {family.count} "
                f"member{'s' if family.count > 1 else ''}, 0 .. {family.count - 1}",
                labels=(Label(family.span, f"declared with {family.count}"),),
            )
        return ir.Num(value)

    # -- calls

    def call(self, e: ast.Call) -> ir.Expr:
        func = e.func.name
        if func not in _FUNCTION_NAMES:
            candidates: dict[str, Span | None] = dict.fromkeys(_FUNCTION_NAMES)
            fallback = None
            if func in arith.DISTRIBUTIONS:
                fallback = f"`~{func}(...)` draws from a distribution"
            return self.unknown(
                e.func.span, f"unknown function `{func}`", func, candidates, fallback
            )
        arity = _ARITY.get(func, 1)
        if len(e.args) != arity:
            if func in arith.FUNCTIONS:
                for arg in e.args:
                    self.visit(arg)
            return self.r.fail(
                codes.ARITY,
                e.func.span,
                f"`{func}` takes {counted(arity, 'argument')}, not {len(e.args)}",
            )
        if func in arith.FUNCTIONS:
            return ir.Call(func, tuple(self.visit(a) for a in e.args))
        if func in CLAIM_AGGREGATES:
            return self.aggregate(e)
        if self.constant:
            return self.not_constant(e.span, f"`{func}(...)` reads the deployment's state")
        if func == "cost":
            value = self.visit(e.args[1])
            target = self.cost_target(e.args[0])
            return value if target is None else ir.Cost(target, value)
        kind = "pool" if func in _POOL_FUNCS else "stage"
        target = self.resource(e.args[0], kind)
        args = tuple(self.visit(a) for a in e.args[1:])
        if target is None:
            return ir.Num(0.0)
        if func == "blocksize":
            return self.blocksize(e, target)
        if func == "budget_left":
            return self.budget_left(e, target, args)
        return ir.Observable(func, target, args, e.span)

    def budget_left(self, e: ast.Call, target: ir.Ref, args: tuple[ir.Expr, ...]) -> ir.Expr:
        """`budget_left(S)`: S a step engine (it plans S's next iteration); a fifo, ps or
        delay stage has no budget (serq failed with E-internal; pyserq 0.1.2 refuses it:
        "budget_left needs a step stage")."""
        family = next(f for f in self.scope.stages.values() if f.base == target.base)
        kind = family.item.kind
        if isinstance(kind, ast.Step):
            return ir.Observable("budget_left", target, args, e.span)
        word = {ast.Fifo: "a fifo", ast.Ps: "a ps", ast.Delay: "a delay"}.get(type(kind), "no")
        return self.r.fail(
            codes.WRONG_KIND,
            e.args[0].span,
            f"`budget_left({family.name})`: stage `{family.name}` is {word} stage, which has "
            "no budget: `budget_left` reads a step engine's",
            labels=(Label(family.span, "declared here"),),
        )

    def aggregate(self, e: ast.Call) -> ir.Expr:
        """total(obs), count(obs), largest(obs), prefix_total(obs): `obs` an observation."""
        func, arg = e.func.name, e.args[0]
        if self.constant:
            return self.not_constant(e.span, f"`{func}(...)` aggregates the run's observations")
        name = _bare_name(arg)
        if name is None:
            return self.r.fail(
                codes.WRONG_KIND, arg.span, f"`{func}` takes the name of an observation"
            )
        if name not in self.scope.observes:
            candidates = dict(self.scope.observe_spans)
            return self.unknown(
                arg.span,
                f"unknown observation `{name}`",
                name,
                candidates,
                "an aggregate reads a statistic that an `observe` records",
            )
        return ir.Aggregate(func, self.scope.observes[name])

    def cost_target(self, node: ast.Expr) -> ir.Ref | None:
        """The pool or stage of `cost(X, e)`: a family needs no index (its unit is every
        member's), a member may have one."""
        name = _bare_name(node)
        if name in self.scope.pools:
            kind = "pool"
        elif name in self.scope.stages:
            kind = "stage"
        elif name is None:
            self.r.fail(codes.WRONG_KIND, node.span, "`cost` takes a pool or a stage first")
            return None
        else:
            names = {**self.scope.pools, **self.scope.stages}
            candidates = {n: f.span for n, f in names.items()}
            self.unknown(node.span, f"unknown pool or stage `{name}`", name, candidates)
            return None
        family = self.scope.family(kind)[name]
        if isinstance(node, ast.Name):
            return ir.Ref(kind, family.base, family.count, None, node.span)
        return self.resource(node, kind)

    def blocksize(self, e: ast.Call, target: ir.Ref) -> ir.Expr:
        family = next(f for f in self.scope.pools.values() if f.base == target.base)
        if family.block is not None:
            return ir.Num(family.block)
        if any(isinstance(o, ast.Option) and o.key == "block" for o in family.item.options):
            self.r.failed = True  # the block itself failed, and said so
            return ir.Num(0.0)
        return self.r.fail(
            codes.WRONG_KIND,
            e.span,
            f"`blocksize({family.name})`: pool `{family.name}` has no `block`",
            labels=(Label(family.span, "declared without `block`"),),
        )

    def draw(self, e: ast.Draw) -> ir.Expr:
        dist = e.dist.name
        args = tuple(self.visit(a) for a in e.args)
        if dist not in arith.DISTRIBUTIONS:
            candidates: dict[str, Span | None] = dict.fromkeys(arith.DISTRIBUTIONS)
            return self.unknown(e.dist.span, f"unknown distribution `~{dist}`", dist, candidates)
        arity = arith.DISTRIBUTIONS[dist]
        if len(e.args) != arity:
            return self.r.fail(
                codes.ARITY,
                e.dist.span,
                f"`~{dist}` takes {counted(arity, 'argument')}, not {len(e.args)}",
            )
        if self.constant and not self.draws:
            return self.not_constant(e.span, "a draw is random")
        return ir.Draw(dist, args, e.span)


def _observable_help(kind: str, name: str) -> str:
    if kind == "pool":
        return f"read its state with an observable, such as `used({name})` or `free({name})`"
    return f"read its state with an observable, such as `queue({name})` or `busy({name})`"


def _bare_name(node: ast.Expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.name
    if isinstance(node, ast.Ref) and len(node.parts) == 1:
        return node.parts[0].ident.name
    return None


def _text(ref: ast.Ref) -> str:
    """`ref` as written, a simple index shown (`kv[0]`, `kv[i]`) and another as `[…]`."""
    return ".".join(p.ident.name + _index_text(p.index) for p in ref.parts)


def _index_text(index: ast.Expr | None) -> str:
    if index is None:
        return ""
    if isinstance(index, ast.Number):
        return f"[{index.text}]"
    if isinstance(index, ast.Name):
        return f"[{index.name}]"
    return "[…]"


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:g}"
