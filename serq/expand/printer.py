"""Canonical serQ text for a tree of `serq.syntax.ast`: the kernel `serq expand` prints.

`print_module(module)` gives a whole file and `print_node(node)` one node of any
class (an item, a statement, an expression, an option, a stage kind, a name).
The text parses back to the same tree, spans aside: two-space indentation, one
statement, option or clause per line, and only the parentheses the grammar's
precedence needs (grammar/serq.lark, "expressions"). Numbers keep the text they
were written with; a computed one prints in a form that reads back as its value.

Kernel names with dots are single `Ident`s (`Pool(name=Ident("P.kv"))`,
`Set(target=Ident("P.c"))`, a one-part `Ref` to `D.nic.latency` indexed by
`j`) and print as written: `pool P.kv[2]`, `set P.c = …;`, `D.nic.latency[j]`.
A declared name reads back as the one dotted `Ident`, a reference as a `Ref` of
several parts (the expander normalizes those). Error nodes print as the comment
`/* error */`, so a broken tree prints too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from serq.syntax import ast
from serq.syntax.source_text import is_name

INDENT = "  "
_WIDTH = 100  # a hold's head longer than this is written over several lines
_HOLD_CONTINUATION = " " * len("hold ")
ERROR = "/* error */"

# Precedence levels, lowest first, as in the grammar: `?:`, `||`, `&&`, the
# comparisons (which do not chain), `+ -`, `* /`, unary `- !`, `^` (whose left
# operand is an atom and whose right is a unary), atoms.
_CONDITIONAL, _OR, _AND, _COMPARE, _SUM, _PRODUCT, _UNARY, _POWER, _ATOM = range(9)
_LEVEL = {
    "||": _OR,
    "&&": _AND,
    "==": _COMPARE,
    "!=": _COMPARE,
    "<": _COMPARE,
    "<=": _COMPARE,
    ">": _COMPARE,
    ">=": _COMPARE,
    "+": _SUM,
    "-": _SUM,
    "*": _PRODUCT,
    "/": _PRODUCT,
    "^": _POWER,
}
_NUMBER = re.compile(r"(\d[\d_]*\.?[\d_]*|\.\d[\d_]*)([eE][+-]?\d+)?")


def print_module(module: ast.Module) -> str:
    """The text of `module`: its items, then its `fn main() { … }` with the items inside."""
    return _Printer(main_dialect=module.main is not None).module(module)


def print_node(node: ast.Node) -> str:
    """The text of any AST node: several lines for an item or a statement with a block."""
    return _Printer().node(node)


class _Printer:
    """Lines for items and statements, strings for expressions.

    `main_dialect` says whether the file has `fn main`, whose dialect writes an
    expression `def` as `def f(x) { e }` rather than `def f(x) = e;`."""

    def __init__(self, main_dialect: bool = False) -> None:
        self.main_dialect = main_dialect
        self._lines: dict[type, Callable] = {
            # items
            ast.Let: lambda n: [f"let {n.name.name} = {self._let_value(n)};"],
            ast.Use: lambda n: [f'use "{n.path}";'],
            ast.DefExpr: self._def_expr,
            ast.DefBlock: lambda n: self._block(f"def {n.name.name}({_names(n.params)})", n.body),
            ast.Pool: lambda n: self._braced(
                f"pool {n.name.name}{self._size(n.size)}", self._all(n.options)
            ),
            ast.Stage: self._stage,
            ast.Workload: lambda n: self._braced("workload", self._all(n.clauses)),
            ast.Session: lambda n: self._block("session", n.body),
            ast.Server: lambda n: self._block("server", n.body),
            ast.Queue: self._queue,
            ast.RunSettings: lambda n: self._braced("run", self._all(n.settings)),
            ast.Share: lambda n: [f"share {n.policy};"],
            ast.Pull: self._pull,
            ast.Gauge: lambda n: [f"gauge {n.name.name} = {self.expr(n.value)};"],
            ast.Claim: lambda n: [self._claim(n)],
            ast.ErrorItem: lambda n: [ERROR],
            ast.FnMain: self._fn_main,
            # options, kinds, clauses, members
            ast.Option: lambda n: [self._option(n)],
            ast.Spill: lambda n: [
                f"spill {n.pool.name} via {n.stage.name} ({self.expr(n.amount)})"
                f" when ({self.expr(n.when)});"
            ],
            ast.ErrorOption: lambda n: [ERROR],
            ast.Fifo: lambda n: [self._simple_kind(n)],
            ast.Ps: lambda n: [self._simple_kind(n)],
            ast.Delay: lambda n: [self._simple_kind(n)],
            ast.Step: lambda n: self._braced("step", self._all(n.options)),
            ast.Arrive: self._arrive,
            ast.Trace: lambda n: [f'trace "{n.path}"{" ordered" if n.ordered else ""};'],
            ast.Init: lambda n: self._block("init", n.body),
            ast.TurnBlock: lambda n: self._block("turn", n.body),
            ast.WorkloadSession: lambda n: self._block("session", n.body),
            ast.Hidden: lambda n: [f"hidden {_names(n.names)};"],
            ast.QueuePool: lambda n: self._braced(f"pool {n.name.name}", self._all(n.options)),
            ast.QueueServe: self._queue_serve,
            ast.QueueNic: lambda n: self._kind_line("nic", n.kind, ""),
            ast.Entry: self._entry,
            # statements
            ast.Block: self._bare_block,
            ast.Turn: lambda n: ["turn;"],
            ast.Request: lambda n: [
                "request;" if n.gateway is None else f"request {n.gateway.name};"
            ],
            ast.Set: lambda n: [f"set {n.target.name} = {self.expr(n.value)};"],
            ast.Observe: lambda n: [f"observe {n.target.name} = {self.expr(n.value)};"],
            ast.Hold: self._hold,
            ast.Grow: lambda n: [f"grow {self.ref(n.pool)} ({self.expr(n.amount)});"],
            ast.Drop: lambda n: [f"drop {self.ref(n.pool)};"],
            ast.Release: lambda n: [f"release {self.ref(n.pool)};"],
            ast.Load: lambda n: [f"load {self.ref(n.pool)} ({self.expr(n.amount)});"],
            ast.Run: self._run,
            ast.Branch: lambda n: self._if_else(f"branch ({self.expr(n.test)})", n),
            ast.BranchWith: lambda n: self._if_else(f"branch with ({self.expr(n.probability)})", n),
            ast.Loop: lambda n: self._block("loop", n.body),
            ast.Choose: lambda n: [
                f"choose {n.target.name} in {self.expr(n.count)} by ({self.exprs(n.keys)});"
            ],
            ast.End: lambda n: ["end;"],
            ast.Mark: lambda n: [f"mark {n.name.name};"],
            ast.EntryCall: self._entry_call,
            ast.DefCall: lambda n: [f"{n.name.name}({self.exprs(n.args)});"],
            ast.Serving: self._serving,
            ast.Transfer: self._transfer,
            ast.ErrorStmt: lambda n: [ERROR],
        }
        self._exprs: dict[type, Callable] = {
            ast.Number: self._number,
            ast.Name: lambda n: (n.ident.name, _ATOM),
            ast.Ref: lambda n: (self.ref(n), _ATOM),
            ast.Unary: self._unary,
            ast.Binary: self._binary,
            ast.Conditional: self._conditional,
            ast.Call: lambda n: (f"{n.func.name}({self.exprs(n.args)})", _ATOM),
            ast.Draw: lambda n: (f"~{n.dist.name}({self.exprs(n.args)})", _ATOM),
            ast.Aggregate: self._aggregate,
        }

    # ------------------------------------------------------------- entries

    def module(self, module: ast.Module) -> str:
        # Every item outside `fn main` prints before it: only `use`, `def` and
        # `let` may stand there, and only before it.
        lines = self._items(module.items)
        if module.main is not None:
            if lines:
                lines.append("")
            lines.extend(self._fn_main(module.main))
        return "".join(line + "\n" for line in lines)

    def node(self, node) -> str:
        if isinstance(node, ast.Module):
            return self.module(node).rstrip("\n")
        printer = self._exprs.get(type(node))
        if printer is not None:
            return printer(node)[0]
        if isinstance(node, ast.Ident):
            return node.name
        if isinstance(node, ast.RefPart):
            return self._part(node)
        if isinstance(node, ast.HoldPool):
            return self._hold_pool(node)
        if isinstance(node, ast.Binding):
            return f"{node.name.name} = {self.expr(node.value)}"
        if isinstance(node, ast.Lease):
            return f"lease {self.ref(node.pool)} ({self.expr(node.duration)})"
        if isinstance(node, ast.CallTo):
            return f"to {self.ref(node.pool)} ({self.expr(node.amount)})"
        return "\n".join(self.lines(node))

    def lines(self, node) -> list[str]:
        """The lines of an item, statement, option, clause, member or kind, unindented."""
        try:
            printer = self._lines[type(node)]
        except KeyError:
            raise TypeError(f"cannot print a {type(node).__name__}") from None
        return printer(node)

    # --------------------------------------------------------------- items

    def _items(self, items) -> list[str]:
        """Items in order: a blank line between two unless both are one-liners of one kind."""
        lines: list[str] = []
        previous: tuple[type, int] | None = None
        for item in items:
            printed = self.lines(item)
            if previous is not None:
                kind, count = previous
                if kind is not type(item) or count > 1 or len(printed) > 1:
                    lines.append("")
            lines.extend(printed)
            previous = (type(item), len(printed))
        return lines

    def _fn_main(self, main: ast.FnMain) -> list[str]:
        return self._braced(f"fn {main.name.name}()", self._items(main.items))

    def _def_expr(self, n: ast.DefExpr) -> list[str]:
        head = f"def {n.name.name}({_names(n.params)})"
        if self.main_dialect:
            return [f"{head} {{ {self.expr(n.body)} }}"]
        return [f"{head} = {self.expr(n.body)};"]

    def _stage(self, n: ast.Stage) -> list[str]:
        return self._kind_line(f"stage {n.name.name}{self._size(n.size)} :", n.kind, "")

    def _kind_line(self, head: str, kind: ast.StageKind, tail: str) -> list[str]:
        """`head kind tail;`, or for a step kind `head step { … }` over several lines."""
        if isinstance(kind, ast.Step):
            return self._braced(f"{head} step", self._all(kind.options))
        return [f"{head} {self._simple_kind(kind)}{tail};"]

    def _simple_kind(self, kind) -> str:
        if isinstance(kind, ast.Fifo):
            return "fifo" if kind.servers is None else f"fifo({self.expr(kind.servers)})"
        if isinstance(kind, ast.Ps):
            return f"ps({self.expr(kind.capacity)})"
        return "delay"

    def _queue(self, n: ast.Queue) -> list[str]:
        head = f"queue {n.name.name}{self._size(n.size)}"
        if n.roles:
            head += f" : {_names(n.roles)}"
        return self._braced(head, self._all(n.members))

    def _queue_serve(self, n: ast.QueueServe) -> list[str]:
        latency = "" if n.latency is None else f" latency {self.expr(n.latency)}"
        return self._kind_line("serve", n.kind, latency)  # a step serve has no latency

    def _entry(self, n: ast.Entry) -> list[str]:
        head = n.verb.name
        if n.params:
            head += f" ({_names(n.params)})"
        if n.source is not None:
            head += f" from {n.source.name}"
        return self._block(head, n.body)

    def _pull(self, n: ast.Pull) -> list[str]:
        latency = "" if n.latency is None else f" latency {self.expr(n.latency)}"
        return [f"{n.reader.name} pull {n.source.name}{latency} share {n.policy};"]

    def _arrive(self, n: ast.Arrive) -> list[str]:
        if n.arg is None:
            return [f"arrive {n.process};"]
        return [f"arrive {n.process}({self.expr(n.arg)});"]

    def _let_value(self, n: ast.Let) -> str:
        if n.argument is None:
            return self.expr(n.value)
        return f'args.number("{n.argument.name}", {self.expr(n.value)})'

    def _claim(self, n: ast.Claim) -> str:
        given = "" if n.given is None else f" given ({self.expr(n.given)})"
        if n.kind == "at_end":
            body = f"at end ({self.expr(n.pred)})"
        else:
            quantifier = "every" if n.kind == "every_iteration" else "some"
            stage = "?" if n.stage is None else self.expr(n.stage)
            body = f"{quantifier} iteration of {stage} ({self.expr(n.pred)})"
        return f"claim {n.name.name}{given}: {body};"

    def _option(self, n: ast.Option) -> str:
        if n.key == "preempt by":
            requeue = "" if n.target is None else f" requeue {n.target.name}"
            return f"preempt by ({self.exprs(n.keys)}){requeue};"
        words = [n.key]
        if n.target is not None:
            words.append(n.target.name)
        if n.value is not None:
            words.append(self.expr(n.value))
        if n.keys or n.key.endswith(" by"):
            words.append(f"({self.exprs(n.keys)})")
        return " ".join(words) + ";"

    def _size(self, size: ast.Expr | None) -> str:
        return "" if size is None else f"[{self.expr(size)}]"

    # ---------------------------------------------------------- statements

    def _hold(self, n: ast.Hold) -> list[str]:
        head = ["hold " + ", ".join(self._hold_pool(p) for p in n.pools)]
        if n.reuse is not None:
            head.append(f"reuse ({self.expr(n.reuse)})")
        if n.bindings:
            bindings = ", ".join(self._binding(b) for b in n.bindings)
            head.append(f"at admission ({bindings})")
        tail = ""
        if n.cache is not None:
            tail += f" cache ({self.expr(n.cache)})"
        if n.lease is not None:
            tail += f" lease {self.ref(n.lease.pool)} ({self.expr(n.lease.duration)})"
        if len(" ".join(head)) + 2 <= _WIDTH:
            head = [" ".join(head)]
        else:  # `reuse` and `at admission` on lines of their own, under the pools
            head = [head[0], *(_HOLD_CONTINUATION + h for h in head[1:])]
            if n.bindings and len(head[-1]) + 2 > _WIDTH:  # one binding a line
                head[-1:] = self._bindings_lines(n.bindings)
        lines = head[:-1] + self._block(head[-1], n.body)
        if tail:
            lines[-1] += tail + ";"
        return lines

    def _binding(self, b: ast.Binding) -> str:
        return f"{b.name.name} = {self.expr(b.value)}"

    def _bindings_lines(self, bindings) -> list[str]:
        """`at admission (a = …,` with each next binding under the first, and a
        conditional too long for its line broken before its `:`."""
        lead = _HOLD_CONTINUATION + "at admission ("
        pad = " " * len(lead)
        lines: list[str] = []
        for i, b in enumerate(bindings):
            first = lead if i == 0 else pad
            last = i == len(bindings) - 1
            end = ")" if last else ","
            text = first + self._binding(b) + end
            value = b.value
            if len(text) + 2 > _WIDTH and isinstance(value, ast.Conditional):
                test = self._operand(value.test, _OR)
                then = self._operand(value.then, _CONDITIONAL)
                otherwise = self._operand(value.otherwise, _CONDITIONAL)
                head = f"{first}{b.name.name} = "
                lines.append(f"{head}{test} ? {then}")
                lines.append(" " * len(head) + f": {otherwise}{end}")
            else:
                lines.append(text)
        return lines

    def _hold_pool(self, p: ast.HoldPool) -> str:
        text = f"{self.ref(p.pool)} ({self.expr(p.units)})"
        if p.reserve is not None:
            text += f" reserve ({self.expr(p.reserve)})"
        return text

    def _run(self, n: ast.Run) -> list[str]:
        words = ["run"]
        if n.stages:  # no stage: the queue's own, and no mode
            words.append(", ".join(self.ref(s) for s in n.stages))
            if n.mode is not None:
                words.append(n.mode)
        words.append(f"({self.expr(n.work)})")
        return [" ".join(words) + self._growing(n.growing) + ";"]

    def _growing(self, pool: ast.Ref | None) -> str:
        return "" if pool is None else f" growing {self.ref(pool)}"

    def _if_else(self, head: str, n: ast.Branch | ast.BranchWith) -> list[str]:
        lines = self._block(head, n.then)
        if n.otherwise is not None:
            otherwise = self._block("else", n.otherwise)
            lines[-1] += " " + otherwise[0]
            lines.extend(otherwise[1:])
        return lines

    def _entry_call(self, n: ast.EntryCall) -> list[str]:
        text = f"{self.ref(n.target)}({self.exprs(n.args)})"
        if n.source is not None:
            text += f" from {self.ref(n.source)}"
        if n.to is not None:
            text += f" to {self.ref(n.to.pool)} ({self.expr(n.to.amount)})"
        return [text + ";"]

    def _target(self, index: ast.Expr | None, on: tuple[ast.Ref, ...]) -> str:
        if index is not None:
            return f"[{self.expr(index)}]"
        if on:
            return " on " + ", ".join(self.ref(r) for r in on)
        return ""

    def _serving(self, n: ast.Serving) -> list[str]:
        target = self._target(n.index, n.on)
        return [f"{n.verb}{target} ({self.expr(n.work)}){self._growing(n.growing)};"]

    def _transfer(self, n: ast.Transfer) -> list[str]:
        return [
            f"transfer{self._target(n.index, n.on)} ({self.expr(n.work)})"
            f" from {self.ref(n.source)} to {self.ref(n.dest)} ({self.expr(n.amount)});"
        ]

    # -------------------------------------------------------------- blocks

    def _all(self, nodes) -> list[str]:
        return [line for node in nodes for line in self.lines(node)]

    def _block(self, head: str, block: ast.Block) -> list[str]:
        return self._braced(head, self._all(block.body))

    def _bare_block(self, block: ast.Block) -> list[str]:
        lines = self._braced("", self._all(block.body))
        lines[0] = lines[0].lstrip()
        return lines

    @staticmethod
    def _braced(head: str, inner: list[str]) -> list[str]:
        """`head { … }` with `inner` indented, or `head {}` when there is nothing inside."""
        if not inner:
            return [f"{head} {{}}"]
        body = [INDENT + line if line else line for line in inner]
        return [f"{head} {{", *body, "}"]

    # --------------------------------------------------------- expressions

    def expr(self, e: ast.Expr) -> str:
        return self._exprs[type(e)](e)[0]

    def exprs(self, es) -> str:
        return ", ".join(self.expr(e) for e in es)

    def _operand(self, e: ast.Expr, minimum: int) -> str:
        """`e`, in parentheses when it binds more loosely than its place allows."""
        text, level = self._exprs[type(e)](e)
        return f"({text})" if level < minimum else text

    def _binary(self, n: ast.Binary) -> tuple[str, int]:
        level = _LEVEL.get(n.op, _COMPARE)
        if level == _POWER:  # atom ^ unary: right-associative, above a unary minus
            left, right = _ATOM, _UNARY
        elif level == _COMPARE:  # sum OP sum: comparisons do not chain
            left, right = _SUM, _SUM
        else:  # left-associative
            left, right = level, level + 1
        text = f"{self._operand(n.left, left)} {n.op} {self._operand(n.right, right)}"
        return text, level

    def _unary(self, n: ast.Unary) -> tuple[str, int]:
        operand = self._operand(n.operand, _UNARY)
        space = " " if n.op == "-" and operand.startswith("-") else ""  # `- -x`, not `--x`
        return f"{n.op}{space}{operand}", _UNARY

    def _conditional(self, n: ast.Conditional) -> tuple[str, int]:
        test = self._operand(n.test, _OR)
        then = self._operand(n.then, _CONDITIONAL)
        otherwise = self._operand(n.otherwise, _CONDITIONAL)
        return f"{test} ? {then} : {otherwise}", _CONDITIONAL

    def _aggregate(self, n: ast.Aggregate) -> tuple[str, int]:
        count = self._count(n.count)
        return f"{n.func} {n.var.name} in {count} ({self.expr(n.body)})", _ATOM

    def _count(self, count: ast.Expr) -> str:
        """An aggregate's count: a number, a plain name, or any expression in parentheses."""
        if isinstance(count, ast.Name) and is_name(count.name):
            return count.name
        if isinstance(count, ast.Number):
            text, level = self._number(count)
            if level == _ATOM:
                return text
        return f"({self.expr(count)})"

    def _number(self, n: ast.Number) -> tuple[str, int]:
        text = n.text
        if text and _NUMBER.fullmatch(text) and float(text.replace("_", "")) == n.value:
            return text, _ATOM
        return _format_number(float(n.value))

    def ref(self, r: ast.Ref) -> str:
        return ".".join(self._part(p) for p in r.parts)

    def _part(self, p: ast.RefPart) -> str:
        return p.ident.name if p.index is None else f"{p.ident.name}[{self.expr(p.index)}]"


def _format_number(value: float) -> tuple[str, int]:
    """A computed number as text that reads back as `value`, and its precedence level."""
    if math.isnan(value):
        return "0 / 0", _PRODUCT
    if value < 0:
        text, _ = _format_number(-value)
        return f"-{text}", _UNARY
    if math.isinf(value):
        return "inf", _ATOM
    if value.is_integer() and value < 1e16:
        return str(int(value)), _ATOM
    return repr(value), _ATOM


def _names(idents) -> str:
    return ", ".join(i.name for i in idents)
