"""The two sides: a workload's `session` (the client) and the `server` spliced into it.

The kernel has one session, at top level. A program written from two sides has
its session inside `workload` and its server apart; the server's statements go
in place of every `request;` of the session, at any depth (in the `fn main`
dialect, after every `turn;`, which draws the turn and runs the server). Each
side owns its words: `turn`, `end` and `request` are refused in a server, and
`request` in a top-level session; the two forms are exclusive in one program. In
the `fn main` dialect the attributes the workload assigns (its `init`, `turn` and
`session`, and the built-ins it gives a session: `serial`, `turn_no`, a trace's
columns) are the request's sizes, which the server reads and may not assign
(serq-workload.txt).
"""

from __future__ import annotations

from dataclasses import replace

from serq.diagnostics import Label, Span, codes
from serq.expand.context import Context
from serq.expand.walk import map_blocks, walk
from serq.syntax import ast


def expand_sides(items: list[ast.Item], ctx: Context) -> list[ast.Item]:
    """Splice the server into the workload's session and make that session the kernel's."""
    workloads = [i for i in items if isinstance(i, ast.Workload)]
    wsessions = [c for w in workloads for c in w.clauses if isinstance(c, ast.WorkloadSession)]
    servers = [i for i in items if isinstance(i, ast.Server)]
    sessions = [i for i in items if isinstance(i, ast.Session)]
    _once(ctx, servers, "server")
    _once(ctx, wsessions, "workload session")
    _words(ctx, servers, sessions)
    if ctx.fn_main:
        _sizes(ctx, workloads, servers)
        if not sessions and not wsessions:  # a workload's session without one is said apart
            _paired(ctx, workloads, servers)
    if sessions and (servers or wsessions):
        later = max([sessions[0], *servers[:1], *wsessions[:1]], key=lambda n: n.span.start)
        first = min([sessions[0], *servers[:1], *wsessions[:1]], key=lambda n: n.span.start)
        ctx.error(
            codes.SIDES,
            _head(later),
            "a top-level `session` and the two sides (`session` in `workload`, `server`) "
            "are exclusive in one program",
            labels=(Label(_head(first), "the other form is here"),),
        )
        return items
    if not (servers or wsessions):
        return items
    server = servers[0] if servers else None
    wsession = wsessions[0] if wsessions else None
    if ctx.fn_main:
        body = _splice_main(ctx, wsession, server)
    else:
        body = _splice(ctx, wsession, server)
    if body is None:
        return [i for i in items if not isinstance(i, ast.Server)]
    span = wsession.span if wsession is not None else server.span  # type: ignore[union-attr]
    session: ast.Session | None = ast.Session(body, span)
    ctx.origin(span, "session", (session,))  # type: ignore[arg-type]
    # The session takes the server's place (the server's forms find the stages declared
    # above it), or the workload's when there is no server.
    anchor = ast.Server if server is not None else ast.Workload
    out: list[ast.Item] = []
    for item in items:
        if isinstance(item, ast.Workload):
            clauses = tuple(c for c in item.clauses if not isinstance(c, ast.WorkloadSession))
            item = replace(item, clauses=clauses)
        if isinstance(item, anchor) and session is not None:
            if isinstance(item, ast.Workload):
                out.append(item)
            out.append(session)
            session = None
        elif not isinstance(item, ast.Server):
            out.append(item)
    return out


def _head(node: ast.Server | ast.Session | ast.WorkloadSession) -> Span:
    """The keyword of a session or server block: where a diagnostic about the block points."""
    return node.span.first(len("server" if isinstance(node, ast.Server) else "session"))


def _paired(ctx: Context, workloads: list[ast.Workload], servers: list[ast.Server]) -> None:
    """`fn main`: a workload with no server to run its turns, or a server no workload
    requests (both references refuse either)."""
    if workloads and not servers:
        ctx.error(
            codes.SIDES,
            workloads[0].span.first(len("workload")),
            "a workload needs a `server` block to handle its turns",
            help="add `server { ... }`: what the deployment does at each `turn;`",
        )
    elif servers and not workloads:
        ctx.error(
            codes.SIDES,
            _head(servers[0]),
            "a `server` needs a `workload`: nothing arrives to request it",
            help="add `workload { arrive ...; }` before the server",
        )


def _once(ctx: Context, nodes: list, what: str) -> None:
    for extra in nodes[1:]:
        ctx.error(
            codes.SIDES,
            _head(extra),
            f"a second {what}: a program has one",
            labels=(Label(_head(nodes[0]), "the first is here"),),
        )


def _words(ctx: Context, servers: list[ast.Server], sessions: list[ast.Session]) -> None:
    """`turn`, `end` and `request` in a server, and `request` in a top-level session."""
    for server in servers:
        for n in walk(server.body):
            if isinstance(n, ast.Turn):
                ctx.error(
                    codes.SIDES,
                    n.span,
                    "`turn` is the session's word: a server is done with a request "
                    "when its block is",
                    help="write the next turn in the workload's `session`",
                )
            elif isinstance(n, ast.End):
                ctx.error(
                    codes.SIDES,
                    n.span,
                    "`end` is the session's word: a server does not end the session",
                    help="write `end;` in the workload's `session`",
                )
            elif isinstance(n, ast.Request):
                ctx.error(codes.SIDES, n.span, "a server does not request itself")
    for session in sessions:
        for n in walk(session.body):
            if isinstance(n, ast.Request):
                ctx.error(
                    codes.SIDES,
                    n.span,
                    "`request` belongs to a `session` inside `workload`",
                    help="move this session into `workload { session { ... } }`, "
                    "or write the server's statements here",
                )


# What the workload gives every session itself, besides what its blocks assign.
_WORKLOAD_BUILTINS = frozenset({"serial", "turn_no", "new", "out", "think", "more", "forced"})


def _sizes(ctx: Context, workloads: list[ast.Workload], servers: list[ast.Server]) -> None:
    """`fn main`: a server's `set` or `choose` of an attribute the workload assigns."""
    sizes = set(_WORKLOAD_BUILTINS)
    for w in workloads:
        for clause in w.clauses:
            if isinstance(clause, ast.Init | ast.TurnBlock | ast.WorkloadSession):
                for n in walk(clause.body):
                    if isinstance(n, ast.Set | ast.Choose):
                        sizes.add(n.target.name)
    for server in servers:
        for n in walk(server.body):
            if isinstance(n, ast.Set | ast.Choose) and n.target.name in sizes:
                # at the value assigned (the count of a choose), where the reference points
                at = n.value if isinstance(n, ast.Set) else n.count
                ctx.error(
                    codes.SIDES,
                    at.span,
                    f"the server cannot assign `{n.target.name}`: the workload assigns it, "
                    "so it is a size of the request, which the server reads and does not "
                    "overwrite",
                    labels=(Label(n.target.span, "assigned here"),),
                    help="give the server's attribute a name of its own",
                )


def _requests(block: ast.Block) -> list[ast.Request]:
    return [n for n in walk(block) if isinstance(n, ast.Request)]


def _turns(block: ast.Block) -> list[ast.Turn]:
    return [n for n in walk(block) if isinstance(n, ast.Turn)]


def _splice(
    ctx: Context, wsession: ast.WorkloadSession | None, server: ast.Server | None
) -> ast.Block | None:
    """Classic dialect: every bare `request;` of the session is the server's statements."""
    if wsession is None:
        ctx.error(
            codes.SIDES,
            _head(server),  # type: ignore[arg-type]
            "a `server` needs a `session` inside `workload` that says `request;`",
        )
        return None
    requests = _requests(wsession.body)
    bare = [r for r in requests if r.gateway is None]
    if server is None:
        for r in bare:
            ctx.error(codes.SIDES, r.span, "`request;` runs the `server`, and there is none")
        if not requests:
            ctx.error(
                codes.SIDES,
                _head(wsession),
                "a `session` in `workload` needs a `server` (or a gateway) to request",
            )
        return wsession.body
    if not bare:
        ctx.error(
            codes.SIDES,
            _head(server),
            "the `server` is never requested: the workload's session has no `request;`",
            labels=(Label(_head(wsession), "the session"),),
        )
        return wsession.body

    def f(s: ast.Stmt) -> list[ast.Stmt] | None:
        if isinstance(s, ast.Request) and s.gateway is None:
            ctx.origin(s.span, "request", server.body.body)
            return list(server.body.body)
        return None

    return map_blocks(wsession.body, f)


def _splice_main(
    ctx: Context, wsession: ast.WorkloadSession | None, server: ast.Server | None
) -> ast.Block | None:
    """`fn main` dialect: `turn;` draws the turn and runs the server; the session ends."""
    for r in _requests(wsession.body) if wsession else []:
        if r.gateway is None:
            ctx.error(
                codes.DIALECT,
                r.span,
                "in `fn main`, the session's `turn;` runs the server: there is no `request;`",
            )
    if wsession is None:
        span = server.span  # type: ignore[union-attr]
        body = ast.Block((ast.Turn(span),), span)
    else:
        body = wsession.body
    if server is not None and wsession is not None and not _turns(wsession.body):
        ctx.error(
            codes.SIDES,
            _head(server),
            "the `server` never runs: the workload's session has no `turn;`",
            labels=(Label(_head(wsession), "the session"),),
            help="say `turn;` in the session where each turn uses the server",
        )
        return wsession.body
    if server is not None:

        def f(s: ast.Stmt) -> list[ast.Stmt] | None:
            if isinstance(s, ast.Turn):
                ctx.origin(s.span, "turn", server.body.body)
                return [s, *server.body.body]
            return None

        body = _map_turns(body, f)
    elif not _requests(body):
        ctx.error(
            codes.SIDES,
            _head(wsession),  # type: ignore[arg-type]
            "a `session` in `workload` needs a `server` to run at its `turn;`",
        )
    end = ast.End(body.span)
    return replace(body, body=(*body.body, end))


def _map_turns(block: ast.Block, f) -> ast.Block:
    """Apply `f` to the session's own `turn;` statements (not to the spliced server's)."""
    return map_blocks(block, lambda s: f(s) if isinstance(s, ast.Turn) else None)
