"""From Lark's parse tree to the surface AST (`serq.syntax.ast`), with spans.

One method per grammar rule (or alias), dispatched on `tree.data`. Lark keeps
named tokens and drops punctuation; `maybe_placeholders` puts `None` where an
optional part is missing, so each method reads its children by position.
"""

from __future__ import annotations

from collections.abc import Callable

from serq.diagnostics import Diagnostic, Span, codes
from serq.syntax import ast
from serq.syntax.lalr import Token, Tree
from serq.syntax.source_text import is_name


class Builder:
    """Builds AST nodes for one file; collects the few errors the grammar leaves to it."""

    def __init__(self, file: str, text: str = "") -> None:
        self.file = file
        self.text = text
        self.diagnostics: list[Diagnostic] = []
        self._rules = _rules(type(self))

    # ------------------------------------------------------------ helpers

    def span(self, node: Tree | Token) -> Span:
        """The span of a tree (from its meta) or a token."""
        if isinstance(node, Token):
            return Span(
                self.file,
                node.start_pos,
                node.end_pos,
                node.line,
                node.column,
                node.end_line,
                node.end_column,
            )
        m = node.meta
        return Span(self.file, m.start_pos, m.end_pos, m.line, m.column, m.end_line, m.end_column)

    def ident(self, token: Token) -> ast.Ident:
        return ast.Ident(str(token), self.span(token))

    def declared(self, node: Token | Tree) -> ast.Ident:
        """A declared name, `kv` or the kernel's dotted `P.kv`: one Ident spanning all of it."""
        if isinstance(node, Token):
            return self.ident(node)
        return ast.Ident(".".join(str(t) for t in node.children), self.span(node))

    def build(self, node):
        """The AST node for a subtree; None stays None."""
        if node is None:
            return None
        if isinstance(node, Token):
            return self.token(node)
        return self._rules[node.data](self, node)

    def token(self, token: Token):
        if token.type == "NUMBER":
            return ast.Number(float(token.replace("_", "")), str(token), self.span(token))
        if token.type == "NAME":
            return ast.Name(self.ident(token), self.span(token))
        raise AssertionError(f"no AST for token {token.type}")

    def exprs(self, node: Tree | None) -> tuple:
        if node is None:
            return ()
        return tuple(self.build(c) for c in node.children)

    def block(self, node: Tree) -> ast.Block:
        return ast.Block(tuple(self.build(c) for c in node.children), self.span(node))

    def names(self, node: Tree | None) -> tuple[ast.Ident, ...]:
        if node is None:
            return ()
        return tuple(self.ident(t) for t in node.children)

    def error(self, span: Span, message: str) -> None:
        self.diagnostics.append(Diagnostic.error(codes.PARSE, span, message))

    # --------------------------------------------------------------- items

    def items(self, children) -> tuple:
        return tuple(self.build(c) for c in children if c is not None)

    def r_let_item(self, t: Tree) -> ast.Let:
        name, value = t.children
        if isinstance(value, Tree) and value.data == "library_call":
            return self._argument(t, name, value)
        return ast.Let(self.ident(name), self.build(value), self.span(t))

    def _argument(self, t: Tree, name: Token, call: Tree) -> ast.Let:
        """let NAME = args.number("ARG", default);: an input of the program."""
        callee, args = call.children
        given = [] if args is None else list(args.children)
        del callee  # ARGS_NUMBER, the one library function
        if (
            len(given) != 2
            or not isinstance(given[0], Token)
            or given[0].type != "STRING"
            or (isinstance(given[1], Token) and given[1].type == "STRING")
        ):
            self.error(self.span(call), 'write `args.number("name", default)`')
            return ast.Let(self.ident(name), ast.Number(0.0, "0", self.span(call)), self.span(t))
        arg = ast.Ident(str(given[0])[1:-1], self.span(given[0]))
        if not is_name(arg.name):  # a name as the program's are (`x²`, `मान`)
            self.error(arg.span, f"`{arg.name}` is not a name an argument can have")
        return ast.Let(self.ident(name), self.build(given[1]), self.span(t), arg)

    def r_library_call(self, t: Tree) -> ast.Call:
        """`args.number(...)` anywhere but as the whole value of a let."""
        self.error(self.span(t), "`args.number` is the whole value of a `let`")
        return ast.Call(ast.Ident("args.number", self.span(t)), (), self.span(t))

    def r_claim_item(self, t: Tree) -> ast.Claim:
        name, given, body = t.children
        kind, stage, pred = self.build(body)
        given_expr = None if given is None else self.build(given.children[0])
        return ast.Claim(self.ident(name), given_expr, kind, stage, pred, self.span(t))

    def r_claim_every(self, t: Tree) -> tuple:
        stage, pred = t.children
        return "every_iteration", self.build(stage), self.build(pred)

    def r_claim_some(self, t: Tree) -> tuple:
        stage, pred = t.children
        return "some_iteration", self.build(stage), self.build(pred)

    def r_claim_at_end(self, t: Tree) -> tuple:
        return "at_end", None, self.build(t.children[0])

    def r_use_item(self, t: Tree) -> ast.Use:
        (path,) = t.children
        return ast.Use(str(path)[1:-1], self.span(path), self.span(t))

    def r_def_expr(self, t: Tree) -> ast.DefExpr:
        name, params, body = t.children  # `= expr;` and `{ expr }` alike
        return ast.DefExpr(self.ident(name), self.names(params), self.build(body), self.span(t))

    def r_def_block(self, t: Tree) -> ast.DefBlock:
        name, params, body = t.children
        return ast.DefBlock(self.ident(name), self.names(params), self.block(body), self.span(t))

    def r_pool_item(self, t: Tree) -> ast.Pool:
        name, size, *options = t.children
        return ast.Pool(
            self.declared(name),
            self.size(size),
            tuple(self.build(o) for o in options),
            self.span(t),
        )

    def size(self, node: Tree | None):
        return None if node is None else self.build(node.children[0])

    def r_stage_item(self, t: Tree) -> ast.Stage:
        name, size, kind = t.children[:3]
        return ast.Stage(self.declared(name), self.size(size), self.build(kind), self.span(t))

    def r_workload_item(self, t: Tree) -> ast.Workload:
        return ast.Workload(tuple(self.build(c) for c in t.children), self.span(t))

    def r_session_item(self, t: Tree) -> ast.Session:
        return ast.Session(self.block(t.children[0]), self.span(t))

    def r_server_item(self, t: Tree) -> ast.Server:
        return ast.Server(self.block(t.children[0]), self.span(t))

    def r_queue_item(self, t: Tree) -> ast.Queue:
        name, size, roles, *members = t.children
        return ast.Queue(
            self.ident(name),
            self.size(size),
            self.names(roles),
            tuple(self.build(m) for m in members),
            self.span(t),
        )

    def r_run_item(self, t: Tree) -> ast.RunSettings:
        return ast.RunSettings(tuple(self.build(c) for c in t.children), self.span(t))

    def r_share_item(self, t: Tree) -> ast.Share:
        return ast.Share(t.children[0].data, self.span(t))

    def r_pull_item(self, t: Tree) -> ast.Pull:
        reader, source, latency, policy = t.children
        return ast.Pull(
            self.ident(reader), self.ident(source), self.build(latency), policy.data, self.span(t)
        )

    def r_gauge_item(self, t: Tree) -> ast.Gauge:
        name, value = t.children
        return ast.Gauge(self.ident(name), self.build(value), self.span(t))

    def r_error_item(self, t: Tree) -> ast.ErrorItem:
        return ast.ErrorItem(self.span(t.children[0]))

    def r_error_option(self, t: Tree) -> ast.ErrorOption:
        return ast.ErrorOption(self.span(t.children[0]))

    def r_error_stmt(self, t: Tree) -> ast.ErrorStmt:
        return ast.ErrorStmt(self.span(t.children[0]))

    # ------------------------------------------------------------- options

    def option(self, t: Tree, key: str, value=None, keys=(), target=None) -> ast.Option:
        return ast.Option(key, value, keys, target, self.span(t))

    def _valued(key: str):  # noqa: N805 - a rule factory used in the class body
        def rule(self, t: Tree) -> ast.Option:
            return self.option(t, key, value=self.build(t.children[0]))

        return rule

    def _keyed(key: str):  # noqa: N805
        def rule(self, t: Tree) -> ast.Option:
            return self.option(t, key, keys=self.exprs(t.children[0]))

        return rule

    def _bare(key: str):  # noqa: N805
        def rule(self, t: Tree) -> ast.Option:
            return self.option(t, key)

        return rule

    def _targeted(key: str):  # noqa: N805
        def rule(self, t: Tree) -> ast.Option:
            return self.option(t, key, target=self.declared(t.children[0]))

        return rule

    r_cap = _valued("cap")
    r_block_size = _valued("block")
    r_evict_lru = _bare("evict lru")
    r_evict_by = _keyed("evict by")
    r_preempt_none = _bare("preempt none")
    r_preempt_lifo = _bare("preempt lifo")
    r_reserve_held = _bare("reserve held")

    def r_preempt_by(self, t: Tree) -> ast.Option:
        """preempt by (keys) [requeue tail|head];: `target` is the requeue word, if any."""
        keys, requeue = t.children
        word = None if requeue is None else self.ident(requeue.children[0])
        return self.option(t, "preempt by", keys=self.exprs(keys), target=word)

    r_queue_fifo = _bare("queue fifo")
    r_queue_by = _keyed("queue by")
    r_admit_via = _targeted("admit via")
    r_budget = _valued("budget")
    r_cost = _valued("cost")
    r_chunk = _valued("chunk")
    r_serve_admission = _bare("serve admission")
    r_serve_by = _keyed("serve by")
    r_serve_decode_first = _bare("serve decode first")
    r_serve_exclusive_prefill = _bare("serve exclusive prefill")
    r_memory = _targeted("memory")
    r_horizon = _valued("horizon")
    r_warmup = _valued("warmup")
    r_seed = _valued("seed")
    r_arrivals = _valued("arrivals")

    def r_spill(self, t: Tree) -> ast.Spill:
        pool, stage, amount, when = t.children
        return ast.Spill(
            self.declared(pool),
            self.declared(stage),
            self.build(amount),
            self.build(when),
            self.span(t),
        )

    # --------------------------------------------------------- stage kinds

    def r_fifo(self, t: Tree) -> ast.Fifo:
        return ast.Fifo(self.build(t.children[0]), self.span(t))

    def r_ps(self, t: Tree) -> ast.Ps:
        return ast.Ps(self.build(t.children[0]), self.span(t))

    def r_delay(self, t: Tree) -> ast.Delay:
        return ast.Delay(self.span(t))

    def r_step(self, t: Tree) -> ast.Step:
        return ast.Step(tuple(self.build(c) for c in t.children), self.span(t))

    # ------------------------------------------------------------ workload

    def _arrival(process: str):  # noqa: N805
        def rule(self, t: Tree) -> tuple[str, object]:
            return process, self.build(t.children[0]) if t.children else None

        return rule

    r_poisson = _arrival("poisson")
    r_renewal = _arrival("renewal")
    r_closed = _arrival("closed")
    r_batch = _arrival("batch")
    r_no_arrivals = _arrival("none")

    def r_arrive(self, t: Tree) -> ast.Arrive:
        process, arg = self.build(t.children[0])
        return ast.Arrive(process, arg, self.span(t))

    def r_trace(self, t: Tree) -> ast.Trace:
        path, ordered = t.children
        return ast.Trace(str(path)[1:-1], self.span(path), ordered is not None, self.span(t))

    def r_init(self, t: Tree) -> ast.Init:
        return ast.Init(self.block(t.children[0]), self.span(t))

    def r_turn_block(self, t: Tree) -> ast.TurnBlock:
        return ast.TurnBlock(self.block(t.children[0]), self.span(t))

    def r_workload_session(self, t: Tree) -> ast.WorkloadSession:
        return ast.WorkloadSession(self.block(t.children[0]), self.span(t))

    def r_hidden(self, t: Tree) -> ast.Hidden:
        return ast.Hidden(tuple(self.ident(n) for n in t.children), self.span(t))

    # -------------------------------------------------------------- queues

    def r_queue_pool(self, t: Tree) -> ast.QueuePool:
        name, *options = t.children
        return ast.QueuePool(self.ident(name), tuple(self.build(o) for o in options), self.span(t))

    def r_queue_serve(self, t: Tree) -> ast.QueueServe:
        kind, latency = t.children
        return ast.QueueServe(self.build(kind), self.build(latency), self.span(t))

    def r_queue_serve_step(self, t: Tree) -> ast.QueueServe:
        return ast.QueueServe(self.build(t.children[0]), None, self.span(t))

    def r_queue_nic(self, t: Tree) -> ast.QueueNic:
        return ast.QueueNic(self.build(t.children[0]), self.span(t))

    def r_entry(self, t: Tree) -> ast.Entry:
        verb, params, source, body = t.children
        return ast.Entry(
            self.ident(verb),
            self.names(params),
            None if source is None else self.ident(source),
            self.block(body),
            self.span(t),
        )

    # ---------------------------------------------------------- statements

    def r_block(self, t: Tree) -> ast.Block:
        return self.block(t)

    def r_turn(self, t: Tree) -> ast.Turn:
        return ast.Turn(self.span(t))

    def r_request(self, t: Tree) -> ast.Request:
        gateway = t.children[0]
        return ast.Request(None if gateway is None else self.ident(gateway), self.span(t))

    def r_set(self, t: Tree) -> ast.Set:
        name, value = t.children
        return ast.Set(self.declared(name), self.build(value), self.span(t))

    def r_observe(self, t: Tree) -> ast.Observe:
        name, value = t.children
        return ast.Observe(self.declared(name), self.build(value), self.span(t))

    def r_hold(self, t: Tree) -> ast.Hold:
        *pools, reuse, at_admission, body, cache, lease = t.children
        bindings: tuple[ast.Binding, ...] = ()
        if at_admission is not None:
            bindings = tuple(self.r_binding(b) for b in at_admission.children)
        return ast.Hold(
            tuple(self.r_hold_pool(p) for p in pools),
            None if reuse is None else self.build(reuse.children[0]),
            bindings,
            None if at_admission is None else self.span(at_admission),
            self.block(body),
            None if cache is None else self.build(cache.children[0]),
            None if lease is None else self.r_lease(lease),
            self.span(t),
        )

    def r_hold_pool(self, t: Tree) -> ast.HoldPool:
        pool, units, reserve = t.children
        return ast.HoldPool(self.ref(pool), self.build(units), self.build(reserve), self.span(t))

    def r_binding(self, t: Tree) -> ast.Binding:
        name, value = t.children
        return ast.Binding(self.ident(name), self.build(value), self.span(t))

    def r_lease(self, t: Tree) -> ast.Lease:
        pool, duration = t.children
        return ast.Lease(self.ref(pool), self.build(duration), self.span(t))

    def r_grow(self, t: Tree) -> ast.Grow:
        pool, amount = t.children
        return ast.Grow(self.ref(pool), self.build(amount), self.span(t))

    def r_drop(self, t: Tree) -> ast.Drop:
        return ast.Drop(self.ref(t.children[0]), self.span(t))

    def r_release(self, t: Tree) -> ast.Release:
        return ast.Release(self.ref(t.children[0]), self.span(t))

    def r_load(self, t: Tree) -> ast.Load:
        pool, amount = t.children
        return ast.Load(self.ref(pool), self.build(amount), self.span(t))

    def refs(self, node: Tree | None) -> tuple[ast.Ref, ...]:
        return () if node is None else tuple(self.ref(r) for r in node.children)

    def growing(self, node: Tree | None) -> ast.Ref | None:
        return None if node is None else self.ref(node.children[0])

    def r_run(self, t: Tree) -> ast.Run:
        stages, mode, work, growing = t.children
        return ast.Run(
            self.refs(stages),
            None if mode is None else str(mode.children[0]),
            self.build(work),
            self.growing(growing),
            self.span(t),
        )

    def r_run_own(self, t: Tree) -> ast.Run:
        """`run ( work )` in a queue entry: the queue's own stage."""
        work, growing = t.children
        return ast.Run((), None, self.build(work), self.growing(growing), self.span(t))

    def r_branch(self, t: Tree) -> ast.Branch:
        test, then, otherwise = t.children
        return ast.Branch(
            self.build(test), self.block(then), self.else_block(otherwise), self.span(t)
        )

    def r_branch_with(self, t: Tree) -> ast.BranchWith:
        p, then, otherwise = t.children
        return ast.BranchWith(
            self.build(p), self.block(then), self.else_block(otherwise), self.span(t)
        )

    def else_block(self, node: Tree | None) -> ast.Block | None:
        return None if node is None else self.block(node.children[0])

    def r_loop(self, t: Tree) -> ast.Loop:
        return ast.Loop(self.block(t.children[0]), self.span(t))

    def r_choose(self, t: Tree) -> ast.Choose:
        name, count, keys = t.children
        return ast.Choose(self.declared(name), self.build(count), self.exprs(keys), self.span(t))

    def r_end(self, t: Tree) -> ast.End:
        return ast.End(self.span(t))

    def r_mark(self, t: Tree) -> ast.Mark:
        return ast.Mark(self.ident(t.children[0]), self.span(t))

    def r_call(self, t: Tree):
        target, args, source, to = t.children
        arguments = self.exprs(args)
        if isinstance(target, Token) and source is None and to is None:
            return ast.DefCall(self.ident(target), arguments, self.span(t))
        ref = self.entry_ref(target)
        call_to = None
        if to is not None:
            pool, amount = to.children
            call_to = ast.CallTo(self.ref(pool), self.build(amount), self.span(to))
        return ast.EntryCall(
            ref,
            arguments,
            None if source is None else self.ref(source.children[0]),
            call_to,
            self.span(t),
        )

    def entry_ref(self, node: Tree | Token) -> ast.Ref:
        """The target of an entry call: `Q.verb`, `Q[i].verb` (or a bare name with `from`/`to`)."""
        if isinstance(node, Token):
            span = self.span(node)
            return ast.Ref((ast.RefPart(self.ident(node), None, span),), span)
        first, *rest = node.children
        index = None
        head_span = self.span(first)
        if node.data == "ref_indexed":
            index, *rest = rest
            close = self.text.find("]", self.span(index).end) + 1 if self.text else 0
            if close > 0:
                head_span = Span(
                    self.file,
                    first.start_pos,
                    close,
                    first.line,
                    first.column,
                    *self._position(close),
                )
        parts = [ast.RefPart(self.ident(first), self.build(index), head_span)]
        for part in rest:
            name, part_index = part.children
            parts.append(ast.RefPart(self.ident(name), self.build(part_index), self.span(part)))
        return ast.Ref(tuple(parts), self.span(node))

    def _position(self, offset: int) -> tuple[int, int]:
        line = self.text.count("\n", 0, offset) + 1
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1

    def target(self, node: Tree | None) -> tuple[object, tuple[ast.Ref, ...]]:
        if node is None:
            return None, ()
        if node.data == "target_index":
            return self.build(node.children[0]), ()
        return None, self.refs(node.children[0])

    def r_serving(self, t: Tree) -> ast.Serving:
        verb, target, work, growing = t.children
        index, on = self.target(target)
        return ast.Serving(
            str(verb.children[0]), index, on, self.build(work), self.growing(growing), self.span(t)
        )

    def r_transfer(self, t: Tree) -> ast.Transfer:
        target, work, source, dest, amount = t.children
        index, on = self.target(target)
        return ast.Transfer(
            index,
            on,
            self.build(work),
            self.ref(source),
            self.ref(dest),
            self.build(amount),
            self.span(t),
        )

    # --------------------------------------------------------- expressions

    def ref(self, t: Tree) -> ast.Ref:
        """A reference in a statement: always a `Ref`, even when it is one bare name."""
        parts = []
        for part in t.children:
            name, *index = part.children
            index = index[0] if index else None
            parts.append(ast.RefPart(self.ident(name), self.build(index), self.span(part)))
        return ast.Ref(tuple(parts), self.span(t))

    def r_ref(self, t: Tree):
        """A reference in an expression: a bare name is a `Name`, the rest a `Ref`."""
        ref = self.ref(t)
        if len(ref.parts) == 1 and ref.parts[0].index is None:
            return ast.Name(ref.parts[0].ident, ref.span)
        return ref

    def r_number(self, t: Tree) -> ast.Number:
        return self.token(t.children[0])

    def r_binary(self, t: Tree) -> ast.Binary:
        left, op, right = t.children
        return ast.Binary(str(op), self.build(left), self.build(right), self.span(t))

    def r_unary(self, t: Tree) -> ast.Unary:
        op, operand = t.children
        return ast.Unary(str(op), self.build(operand), self.span(t))

    def r_conditional(self, t: Tree) -> ast.Conditional:
        test, then, otherwise = t.children
        return ast.Conditional(
            self.build(test), self.build(then), self.build(otherwise), self.span(t)
        )

    def r_call_expr(self, t: Tree) -> ast.Call:
        func, args = t.children
        if isinstance(func, Tree):  # max ( … ), min ( … ), sum ( … )
            func = func.children[0]
        return ast.Call(self.ident(func), self.exprs(args), self.span(t))

    def r_aggregate_name(self, t: Tree) -> ast.Name:
        token = t.children[0].children[0]
        return ast.Name(self.ident(token), self.span(token))

    def r_aggregate(self, t: Tree) -> ast.Aggregate:
        func, var, count, body = t.children
        return ast.Aggregate(
            str(func.children[0]),
            self.ident(var),
            self.build(count),
            self.build(body),
            self.span(t),
        )

    def r_count(self, t: Tree):
        return self.build(t.children[0])  # `( expr )`

    def r_count_name(self, t: Tree) -> ast.Name:
        return self.token(t.children[0])

    def r_draw(self, t: Tree) -> ast.Draw:
        dist, args = t.children
        return ast.Draw(self.ident(dist), self.exprs(args), self.span(t))


_RULES: dict[type, dict[str, Callable[[Builder, Tree], object]]] = {}


def _rules(cls: type) -> dict[str, Callable[[Builder, Tree], object]]:
    """The `r_` methods of `cls` by rule name (one table a class, not one a builder: a file
    makes a builder per item)."""
    rules = _RULES.get(cls)
    if rules is None:
        rules = _RULES[cls] = {
            name[2:]: getattr(cls, name) for name in dir(cls) if name.startswith("r_")
        }
    return rules
