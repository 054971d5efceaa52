"""Compile IR expressions into Python functions of a session's attribute list.

Each expression becomes one generated `lambda a: ...` (Python source, compiled once), so
evaluating it walks no tree and looks up no name: attributes are `a[slot]`, context
variables are attributes of the engine, pools and stages are bound objects. The
arithmetic is `serq.ir.arith`'s (IEEE division, C's pow, Rust's min/max, comparisons to
0/1), so the simulator computes what the linker folds. `a[len(attrs)]` holds the session
itself, for observables such as `cachedin` that belong to it. An expression without a
session (a gauge, a ps capacity, an arrival gap) reads a blank list: zeros, and no session;
an eviction key or a spill clause reads the entry owner's attributes.
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from types import CodeType
from typing import Any

from serq.diagnostics import Diagnostic, Span, codes
from serq.ir import arith
from serq.ir.expr import (
    Aggregate,
    Attr,
    Binary,
    Call,
    Cond,
    Cost,
    Ctx,
    Draw,
    Expr,
    Num,
    Observable,
    Ref,
    Unary,
)
from serq.sim import draws
from serq.sim.errors import SimError, number, out_of_domain


@functools.lru_cache(maxsize=4096)
def _lambda_code(code: str) -> CodeType:
    """The code object of `lambda a: {code}`. A program's expressions are compiled again by
    every run (each binds its own world's objects under the same names); Python's compiler
    runs once per text."""
    return compile(f"lambda a: {code}", "<string>", "eval")


Fn = Callable[[Any], float]


@functools.lru_cache(maxsize=64)
def _tuple_code(n: int) -> CodeType:
    """The code object of `lambda a: (k0(a), ..., k{n-1}(a),)`."""
    calls = "".join(f"k{i}(a), " for i in range(n))
    return compile(f"lambda a: ({calls})", "<string>", "eval")


def key_tuple(keys: Sequence[Fn]) -> Callable[[Any], tuple]:
    """One function giving the tuple of the values of `keys` (a `queue by`, `evict by`,
    `serve by`, `preempt by` or `choose ... by` list) for the attributes `a`: the keys are
    called in their order, as `tuple(k(a) for k in keys)` calls them, without making a
    generator at each call."""
    names = {f"k{i}": k for i, k in enumerate(keys)}
    return eval(_tuple_code(len(names)), names)  # noqa: S307  # our own text, no input


def keys_less(key: tuple, best: tuple) -> bool:
    """Whether the `choose` keys `key` come before `best`: compared in order, the first
    pair that is not equal deciding, and a NaN equal to nothing (so a NaN met before the
    keys differ is not less), as the reference's scan with `<` has it. Python's tuple `<`
    takes an element for equal to itself when it is the same object, a NaN too (an
    attribute read for each candidate, `arith.DEFAULT_NAN`), and goes on to the next key:
    ask it first, and this only where it says yes."""
    for x, y in zip(key, best, strict=True):
        if x < y:
            return True
        if not x == y:  # greater, or a NaN
            return False
    return False


_COMPARE = {"==", "!=", "<", "<=", ">", ">="}
_PLAIN = {"+", "-", "*"}
CONTEXT = {"now", "present", "size", "age", "last", "waiting", "waited"}
CONTEXT |= {"residents", "decoders", "kv_decode", "kv_prefill", "tokens", "prefilled"}
CONTEXT |= {"attention", "decoding", "admission", "remaining"}
CONTEXT |= {"demand", "served", "arrived", "position"}
# The code of an observable of one argument, by name: `t` the member, `a` the session slot.
OBSERVABLE_CODE = {
    "used": "{t}.allocated",
    "free": "({t}.cap - {t}.allocated)",
    "holders": "{t}.holders_count()",
    "queued": "{t}.queued_count()",
    "cachedin": "{t}.cachedin(a[{a}])",
    "blocksize": "{t}.blocksize()",
    "queue": "float({t}.present)",
    "busy": "{t}.busy_count()",
    "work": "{t}.work_left()",
    "budget_left": "{t}.budget_left()",
    "est_lambda": "{t}.{f}()",
    "est_rho": "{t}.{f}()",
    "est_wait": "{t}.{f}()",
}
# The code of a draw of constant arguments, for `ExprCompiler.inline_draws`: the
# arithmetic of `serq.sim.draws`' sampler, in its order ({0} the stream's `random`).
_INLINE_DRAWS = {
    "exp": "(-{1} * _log(1.0 - {0}()))",
    "uniform": "({1} + ({2} - {1}) * {0}())",
    "bernoulli": "(1.0 if {0}() < {1} else 0.0)",
    "det": "{1}",
}
# `draws.erlang` of a constant k up to this many phases, written out: the product of k
# uniforms' complements never underflows there (each is at least 2**-53, and 2**-1060 is
# a normal float), so the sampler's fallback is never taken
_ERLANG_INLINE = 16
_SPLIT_DEPTH = 40  # a deeper subexpression becomes a function of its own (Python's nesting limit)
_NOW = re.compile(r"(?<![.\w])now\b")  # the clock's local in generated code


def member(
    items: Sequence[Any], base: int, count: int, value: float, origin: Span, what: str = ""
) -> Any:
    """Member `value` of the family at `items[base : base + count]`, or a SimError: an
    index is a whole number from 0 to count - 1, as a constant index must be at link
    time (pyserq 0.1.4 refuses the others at run time too; 0.1.2 truncated them toward
    zero, negatives and NaN to 0, tests/sim/NOTES.md §17)."""
    if 0.0 <= value < count:
        i = int(value)
        if i == value:
            return items[base + i]
    raise SimError(
        origin,
        f"{what}index {number(value)} is out of range: the array has {count} "
        f"member{'s' if count != 1 else ''}, 0 .. {count - 1}",
    )


def constant_member(ref: Ref) -> bool:
    """Whether `ref` names one member of its family without a run-time check: no index,
    or a constant whole index from 0 to the family's count - 1."""
    if ref.index is None:
        return True
    if not isinstance(ref.index, Num):
        return False
    value = ref.index.value
    return 0.0 <= value < ref.count and value == int(value)


def _erlang_code(u: str, n: int, mean: float) -> str:
    """`draws.erlang(u, n, mean)` for a whole n from 1 to `_ERLANG_INLINE`, as its
    arithmetic: the product of the n complements in draw order (the sampler's running
    product starts at 1.0, which changes nothing), then -(mean / n) * log of it."""
    product = " * ".join(["(1.0 - " + u + "())"] * n)
    return f"(-{mean / n!r} * _log({product}))"


def _h2_code(u: str, mean: float, cv2: float) -> str | None:
    """`draws.h2(u, mean, cv2)` of constants as its arithmetic: the phase's probability
    and both phases' means worked out now, as the sampler works them out at each draw;
    None when the first phase is certain (p rounds to 1: the second's mean, never used,
    divides by 0)."""
    if not cv2 >= 1.0:
        cv2 = 1.0
    p = 0.5 * (1.0 + math.sqrt((cv2 - 1.0) / (cv2 + 1.0)))
    if p == 1.0:
        return None
    first, second = mean / (2.0 * p), mean / (2.0 * (1.0 - p))
    return (
        f"((-{first!r}) * _log(1.0 - {u}()) if {u}() < {p!r} "
        f"else (-{second!r}) * _log(1.0 - {u}()))"
    )


def _pure(e: Expr) -> bool:
    """Whether reading `e` again gives the same value and does nothing else: a number, a
    session attribute or a context variable."""
    return isinstance(e, Num | Attr) or (isinstance(e, Ctx) and e.name in CONTEXT)


def _no_aggregates(func: str, stat: int) -> float:
    raise AssertionError(f"`{func}` of observation {stat} read outside a claim `at end`")


def _not_simulated(origin: Span, what: str) -> float:
    raise SimError(origin, f"`{what}` is not simulated yet")


def _draw_fails(origin: Span, problem: tuple[str, float, str]) -> float:
    raise out_of_domain(origin, *problem)


class ExprCompiler:
    """Compiles expressions against one run: its `engine` (context variables), its runtime
    `pools` and `stages` (member lists) and `session_slot`, the index of the session in an
    attribute list."""

    def __init__(
        self, engine: Any, pools: Sequence[Any], stages: Sequence[Any], session_slot: int
    ) -> None:
        self.session_slot = session_slot
        self.ns: dict[str, Any] = {
            "E": engine,
            "POOLS": pools,
            "STAGES": stages,
            "_INF": math.inf,
            "_div": arith.divide,
            "_pow": arith.power,
            "_member": member,
            "_not_simulated": _not_simulated,
            "_agg": _no_aggregates,
        }
        for name, (_, fn) in arith.FUNCTIONS.items():
            self.ns[f"_f_{name}"] = fn
        self.warnings: dict[Span, Diagnostic] = {}  # W-draw, by the draw's origin
        for name, fn in draws.SAMPLERS.items():
            self.ns[f"_d_{name}"] = fn
            self.ns[f"_c_{name}"] = draws.checked(name, _draw_fails, self.warn_cv2)
        self.ns["_draw_fails"] = _draw_fails
        self.ns["_log"] = math.log
        self.ns["_m_floor"] = math.floor
        self.ns["_m_ceil"] = math.ceil
        self._names: dict[int, str] = {}
        self._stream: random.Random | None = None
        # draws of constants written as their samplers' arithmetic (`_INLINE_DRAWS`)
        self.inline_draws = False
        # the code of `now`: the compiled path's generated code has the clock in a local
        # (a function of its own, for a subexpression too deep to inline, reads E.now)
        self.now_code = "E.now"
        self._extrema = 0  # the `min`/`max` written out with names of their own so far
        self._given: Mapping[int, str] = {}  # `compile`'s

    def compile(
        self,
        expr: Expr,
        stream: random.Random | None = None,
        given: Mapping[int, str] | None = None,
    ) -> Fn:
        """A function `f(a)` giving the value of `expr`; draws use `stream`. `given` maps
        the id of a subexpression of `expr` to the code that reads its value, worked out
        elsewhere (`serq.sim.eviction_keys`)."""
        self._stream = stream
        self._given = given or {}
        try:
            code, _ = self._code(expr)
        finally:
            self._given = {}
        return self._lambda(code)

    def constant(self, ref: Ref) -> Any:
        """The pool or stage member `ref` names when it names one by a constant in its
        family (`constant_member`), else None: a computed index, or a constant one that
        `member` checks when it is read (`resolver`)."""
        if not constant_member(ref):
            return None
        items = self.ns["POOLS"] if ref.kind == "pool" else self.ns["STAGES"]
        return items[ref.base + (0 if ref.index is None else int(ref.index.value))]

    def resolver(self, ref: Ref, stream: random.Random | None = None) -> Callable[[Any], Any]:
        """A function `f(a)` giving the pool or stage member `ref` names; a computed index
        draws from `stream` (the statement's, as its other expressions do)."""
        obj = self.constant(ref)
        if obj is not None:
            return lambda a: obj
        self._stream = stream
        code, _ = self._ref(ref, in_statement=True)
        return self._lambda(code)

    def member_code(self, ref: Ref, stream: random.Random | None) -> str:
        """The inline code of the member `ref` names (the generated session code's, which
        reads the clock's local `now`), drawing from `stream`: `resolver`'s body."""
        self._stream = stream
        self.now_code = "now"
        try:
            code, _ = self._ref(ref, in_statement=True)
        finally:
            self.now_code = "E.now"
        return code

    # ------------------------------------------------------------------ internals

    def bind(self, obj: Any, prefix: str) -> str:
        """The name under which generated code reads `obj` (bound once per object)."""
        key = id(obj)
        name = self._names.get(key)
        if name is None:
            name = f"{prefix}{len(self._names)}"
            self._names[key] = name
            self.ns[name] = obj
            self.ns[f"_keep_{name}"] = obj  # keeps id(obj) unique while bound
        return name

    def _lambda(self, code: str) -> Fn:
        return eval(_lambda_code(code), self.ns)  # noqa: S307 - our own generated code

    def _code(self, e: Expr) -> tuple[str, int]:
        code, depth = self._node(e)
        if depth > _SPLIT_DEPTH:
            if self.now_code != "E.now":  # the function of its own reads the engine's clock
                code = _NOW.sub("E.now", code)
            name = self.bind(self._lambda(code), "_sub")
            return f"{name}(a)", 1
        return code, depth

    def _node(self, e: Expr) -> tuple[str, int]:  # noqa: C901 - one case per IR node
        given = self._given.get(id(e)) if self._given else None
        if given is not None:
            return given, 1
        if isinstance(e, Num):
            v = e.value
            if math.isinf(v):
                return ("_INF" if v > 0 else "(-_INF)"), 1
            return (repr(v) if v >= 0 else f"({v!r})"), 1
        if isinstance(e, Attr):
            return f"a[{e.slot}]", 1
        if isinstance(e, Ctx):
            if e.name == "now":
                return self.now_code, 1
            if e.name in CONTEXT:
                return f"E.{e.name}", 1
            return f"_not_simulated(None, {e.name!r})", 1
        if isinstance(e, Unary):
            x, d = self._code(e.operand)
            if e.op == "-":
                return f"(-{x})", d + 1
            return f"(1.0 if {x} == 0 else 0.0)", d + 1
        if isinstance(e, Binary):
            (x, dx), (y, dy) = self._code(e.left), self._code(e.right)
            d = max(dx, dy) + 1
            op = e.op
            if op in _PLAIN:
                return f"({x} {op} {y})", d
            if op == "/":
                right = e.right
                if isinstance(right, Num) and right.value == right.value and right.value != 0:
                    return f"({x} / {y})", d  # `divide` of a divisor that is a number not 0
                return f"_div({x}, {y})", d
            if op == "^":
                return f"_pow({x}, {y})", d
            if op in _COMPARE:
                return f"(1.0 if {x} {op} {y} else 0.0)", d
            both = "&" if op == "&&" else "|"  # both operands are evaluated, as in arith
            return f"(1.0 if ({x} != 0) {both} ({y} != 0) else 0.0)", d + 1
        if isinstance(e, Cond):
            test = arith.fold(e.test)
            if test is not None:  # a constant test (a `let`, a `--set`): only its branch is
                # ever evaluated, so only its code is written and its draws checked (a
                # branch it never takes warns of nothing: `scv == 0 ? ~det(m) : ~h2(m, scv)`)
                return self._code(e.then if test != 0 else e.otherwise)
            (c, dc), (t, dt), (o, do) = (self._code(x) for x in (e.test, e.then, e.otherwise))
            return f"({t} if {c} != 0 else {o})", max(dc, dt, do) + 1
        if isinstance(e, Call):
            args = [self._code(x) for x in e.args]
            depth = max((d for _, d in args), default=0) + 1
            if e.func in ("min", "max"):
                return self._extremum(e, args[0][0], args[1][0]), depth + 1
            if e.func in ("floor", "ceil"):
                return self._rounded(e, args[0][0]), depth + 1
            inner = ", ".join(c for c, _ in args)
            return f"_f_{e.func}({inner})", depth
        if isinstance(e, Cost):
            return self._code(e.value)
        if isinstance(e, Draw):
            return self._draw(e)
        if isinstance(e, Observable):
            return self._observable(e)
        if isinstance(e, Aggregate):  # a claim `at end`: `_agg` is `serq.sim.claims`'
            return f"_agg({e.func!r}, {e.stat})", 1
        raise TypeError(f"not an expression: {e!r}")

    def _extremum(self, e: Call, x: str, y: str) -> str:
        """`min(x, y)` or `max(x, y)` written out as `arith._min`/`_max` compute it (the
        reference's: a NaN operand gives the other, the second wins a tie of 0 and -0): no
        call. Operands that read nothing but a number, an attribute
        or a context variable are read where they are needed; others are evaluated once,
        first then second, into names of their own (`:=`)."""
        left, right = e.args
        if not (_pure(left) and _pure(right)):
            k = len(self._names) + self._extrema
            self._extrema += 1
            t1, t2 = f"_e{k}a", f"_e{k}b"
            chosen = self._select(e.func, t1, t2, right)
            # both are bound, in order, by a test that always holds
            return f"({chosen} if ((({t1} := {x}) is {t1}) and (({t2} := {y}) is {t2})) else 0.0)"
        return self._select(e.func, x, y, right)

    def _rounded(self, e: Call, x: str) -> str:
        """`floor(x)` or `ceil(x)` written out as `arith._floor`/`_ceil` compute it: a
        finite operand rounded as a float where the result cannot be a zero of the wrong
        sign (math's rounding is an int, which has no -0); 0, -0, inf, -inf and NaN as
        they are, and -0 for the ceil of a number between -1 and 0; no call. An operand
        that reads more than a number, an attribute or a context variable is evaluated
        once, into a name of its own (`:=`)."""
        (operand,) = e.args
        if isinstance(operand, Num):  # the linker folds these: worked out now
            return self._code(Num(arith.FUNCTIONS[e.func][1](operand.value)))[0]
        if _pure(operand):
            t = first = x
        else:
            k = len(self._names) + self._extrema
            self._extrema += 1
            t = f"_e{k}r"
            first = f"({t} := {x})"
        if e.func == "floor":  # floor(-0) is -0: a zero is left as it is
            return f"(float(_m_floor({t})) if -_INF < {first} < _INF and {t} != 0 else {t})"
        return (
            f"(float(_m_ceil({t})) if 0 < {first} < _INF or -_INF < {t} <= -1.0 "
            f"else (-0.0 if -1.0 < {t} < 0 else {t}))"
        )

    @staticmethod
    def _select(func: str, a: str, b: str, right: Expr) -> str:
        """The choice of `_extremum` between the values `a` and `b` (`b` of the IR operand
        `right`, which is never NaN if a number)."""
        beats = "<" if func == "min" else ">"
        # `min(a, b)`: a if a < b, else b (a tie, or a NaN `a`, gives b)
        chosen = f"({a} if {a} {beats} {b} else {b})"
        if not isinstance(right, Num):  # a NaN `b` gives a
            chosen = f"({a} if {b} != {b} else {chosen})"
        return chosen

    def _draw(self, e: Draw) -> tuple[str, int]:
        """A draw: its sampler on constant arguments checked now, else a sampler that
        checks its arguments at every draw (`draws.checked`)."""
        stream = self._stream or random.Random(0)
        u = self.bind(stream.random, "_U")
        args = [self._code(x) for x in e.args]
        depth = max((d for _, d in args), default=0) + 1
        if all(isinstance(x, Num) for x in e.args):
            values = tuple(x.value for x in e.args)  # type: ignore[union-attr]
            found = draws.problem(e.dist, values)
            if found is not None:  # fails when (if ever) it is drawn
                origin = self.bind(e.origin, "_O")
                return f"_draw_fails({origin}, {self.bind(found, '_P')})", 1
            if draws.below_one(e.dist, values):
                self.warn_cv2(e.origin, values)
                args = [args[0], ("1.0", 1)]
            if self.inline_draws:  # the compiled path's: the sampler's arithmetic inline
                inline = _INLINE_DRAWS.get(e.dist)
                if inline is not None:
                    return inline.format(u, *(c for c, _ in args)), depth
                if e.dist == "erlang" and int(values[0]) <= _ERLANG_INLINE:
                    return _erlang_code(u, int(values[0]), values[1]), depth
                if e.dist == "h2":
                    inline = _h2_code(u, *values)
                    if inline is not None:
                        return inline, depth
            inner = "".join(f", {c}" for c, _ in args)
            return f"_d_{e.dist}({u}{inner})", depth
        origin = self.bind(e.origin, "_O")
        inner = "".join(f", {c}" for c, _ in args)
        return f"_c_{e.dist}({u}{inner}, {origin})", depth

    def warn_cv2(self, origin: Span, args: tuple[float, ...]) -> None:
        """Warn (W-draw, once per draw) that `~h2(args)` at `origin` is drawn with cv2 = 1."""
        if origin in self.warnings:
            return
        mean, cv2 = args
        self.warnings[origin] = Diagnostic.warning(
            codes.DRAW,
            origin,
            f"`~h2({number(mean)}, {number(cv2)})`: no hyperexponential has a cv2 "
            f"below 1; this draws `~h2({number(mean)}, 1)`, an exponential of mean "
            f"{number(mean)}, not the variance asked for",
            help="for a cv2 below 1, draw `~erlang(k, m)`: its cv2 is 1/k",
        )

    def _ref(self, ref: Ref, in_statement: bool = False) -> tuple[str, int]:
        """Code for the member a reference names (`in_statement`: a statement's target,
        whose bad index the message calls a pool or stage index)."""
        items = "POOLS" if ref.kind == "pool" else "STAGES"
        if constant_member(ref):
            k = ref.base + (0 if ref.index is None else int(ref.index.value))
            members = self.ns[items]
            if k < len(members):  # the member itself, bound once: no subscript
                return self.bind(members[k], "_m"), 1
            return f"{items}[{k}]", 1  # a member not built yet (a pool's key reads a stage)
        # a computed index, or a constant one out of the family (a `choose j in n` over an
        # array of fewer than n members writes j out): `member` checks it when it is read
        idx, d = self._code(ref.index)
        origin = self.bind(ref.origin, "_O")
        what = f"{ref.kind} " if in_statement else ""
        # the members by their index as a float (-0 finds member 0, as `member` has it);
        # any other index goes to `member`, which gives the error
        members = self.ns[items][ref.base : ref.base + ref.count]
        family = self.bind({float(j): m for j, m in enumerate(members)}, "_F")
        if not _pure(ref.index):
            k = len(self._names) + self._extrema
            self._extrema += 1
            t = f"_e{k}i"
            idx, first = t, f"({t} := {idx})"
        else:
            first = idx
        fallback = f"_member({items}, {ref.base}, {ref.count}, {idx}, {origin}, {what!r})"
        return f"({family}.get({first}) or {fallback})", d + 1

    def _observable(self, e: Observable) -> tuple[str, int]:
        target, d = self._ref(e.target)
        f = e.func
        template = OBSERVABLE_CODE.get(f)
        member = self.ns.get(target)  # a constant member, bound by `_ref`
        template = getattr(member, "COUNT_CODE", {}).get(f, template)  # its count, inline
        if template is not None:
            return template.format(t=target, a=self.session_slot, f=f), d
        if f == "price" and len(e.args) == 2:
            (h, dh), (x, dx) = (self._code(a) for a in e.args)
            return f"{target}.price({h}, {x})", max(d, dh, dx) + 1
        origin = self.bind(e.origin, "_O")
        return f"_not_simulated({origin}, {f!r})", d
