"""The words the language supplies, explained in our own words: keywords, built-in functions,
distributions, context variables and built-in attributes (for hover, completion, signatures)."""

from __future__ import annotations

import re

from serq import builtins
from serq.syntax.source_text import NAME
from serq.vocabulary import BUILTIN_ATTRS, CLAIM_CONTEXT, CONTEXT_VARS, TRACE_ATTRS

KEYWORDS: dict[str, str] = {
    "let": "Names a constant: `let NAME = expr;`, folded before the program runs.",
    "use": 'Brings in the `def`s of another file: `use "lib.sq";`, relative to this one.',
    "def": "Defines a reusable piece: `def f(x) = expr;` or `def f(x) { statements }`, "
    "written out in place at every call.",
    "fn": "`fn main() { items }`: the wrapper of the main dialect; its items are the program.",
    "pool": "A counted resource (KV blocks, request slots) with an optional prefix cache: "
    "`pool NAME { cap N; ... }`.",
    "stage": "A server: `stage NAME : fifo(c) | ps(phi) | delay | step { ... };`.",
    "queue": "A station with roles: its pools, its engine (`serve`), its NIC and one entry per "
    "verb of its roles; it expands to pools and stages under long names (`Q.kv`, `Q.nic`).",
    "workload": "The client's side: arrivals, the turn's attributes and the session that "
    "issues requests.",
    "session": "What one session does, from arrival to end.",
    "server": "The server's side: the statements every `request;` stands for.",
    "request": "`request;` runs the server's statements in place; `request gw;` calls the "
    "gateway queue's `route` entry.",
    "run": "`run S (work);` serves work at stage S; `run { horizon ...; }` sets the run.",
    "arrive": "How sessions arrive: `poisson(rate)`, `renewal(gap)`, `closed(n)`, "
    "`batch(n)` or `none`.",
    "trace": 'Replays a CSV trace of turns: `trace "file.csv" [ordered];`.',
    "init": "Statements run once when a session starts (sets only).",
    "turn": "`turn;` draws the next turn's attributes; `turn { ... }` says how.",
    "hidden": "Attributes the scheduler may not read (the output length): `hidden o;`.",
    "set": "Assigns a session attribute: `set NAME = expr;`.",
    "observe": "Records a sample of a statistic: `observe NAME = expr;`.",
    "hold": "Holds units of pools for the block's duration: admitted when every pool has room.",
    "reserve": "The units that must fit before a hold is admitted (more than it then takes).",
    "reuse": "How much of the session's cached prefix the hold may consume.",
    "at": "`at admission (x = e, ...)`: bindings read when the hold is admitted, not when it "
    "queues.",
    "admission": "`at admission (...)`: bindings evaluated at admission; in `serve by`, the "
    "resident's admission order.",
    "cache": "`cache (n)`: how many units stay cached when the hold ends.",
    "lease": "`lease POOL (t)`: keeps the hold's allocation past its end for up to t.",
    "grow": "`grow POOL (n);`: adds units to the enclosing hold.",
    "drop": "`drop POOL;`: forgets the session's cached prefix in the pool.",
    "release": "`release POOL;`: gives the innermost enclosing hold's allocation on POOL back "
    "now; outside any hold on POOL, ends the session's lease there.",
    "load": "`load POOL (n);`: advances the hold's computed position by n tokens.",
    "prefill": "Serving form: `prefill (work) [growing POOL];`, a prefill run on the stage "
    "that serves here.",
    "decode": "Serving form: `decode (work) [growing POOL];`, a decode run on the stage that "
    "serves here.",
    "tool": "Serving form: `tool (time);`, a run on the tool stage.",
    "transfer": "Serving form: `transfer (work) from POOL to POOL (n);`, moves KV over the NICs.",
    "branch": "`branch (test) { } else { }`; `branch with (p)` takes the first block with "
    "probability p.",
    "with": "`branch with (p)`: a random branch, taken with probability p.",
    "else": "The block a branch takes otherwise.",
    "loop": "Repeats its block until an `end;`.",
    "choose": "`choose i in n by (keys);`: the index with the least keys.",
    "end": "Ends the session (its holds released, its cache kept).",
    "mark": "`mark NAME;` in an entry: the moment, read by the caller as `QUEUE.NAME`.",
    "from": "Names the source: a queue entry's other member, or a transfer's pool.",
    "to": "Names the destination pool of a transfer or an entry call.",
    "growing": "The run grows the hold on this pool as its tokens advance.",
    "on": "`on STAGE, ...`: the stages a serving form runs on.",
    "fifo": "`fifo(c)`: c servers in arrival order.",
    "ps": "`ps(phi)`: processor sharing, capacity phi(present) split among the jobs.",
    "delay": "Every job on its own server.",
    "step": "An engine of iterations with a token budget: `step { budget B; cost C; ... }`.",
    "budget": "The tokens one iteration may schedule.",
    "cost": "The duration of one iteration, an expression of what it scheduled.",
    "chunk": "At most this many prefill tokens to one resident per iteration.",
    "serve": "In a step stage, the order of the residents; in a queue, its engine.",
    "memory": "The pool whose blocks a step stage's growing runs take.",
    "cap": "The pool's capacity in units.",
    "block": "The pool's block size: allocation and caching in whole blocks.",
    "evict": "The pool's eviction order: `evict lru;` or `evict by (keys);`.",
    "preempt": "Which resident gives way when a growing run does not fit: `lifo`, `none` or "
    "`by (keys) [requeue tail|head]` (the smallest keys, ties to the newest).",
    "admit": "`admit via S;`: the pool's queue is admitted by step stage S.",
    "via": "`admit via S;`: the step stage that admits this pool's queue.",
    "spill": "`spill POOL via STAGE (amount) when (test);`: moves evicted entries elsewhere.",
    "nic": "A queue's network interface: `nic ps(bw);`, the stage `Q.nic` transfers run on.",
    "pull": "`R pull S latency x share maxmin;`: R reads S's KV over both NICs.",
    "share": "How flows over several stages share them: `maxmin` or `bottleneck`.",
    "gauge": "`gauge NAME = expr;`: a time-averaged signal of the deployment's state.",
    "horizon": "The simulated time the run lasts.",
    "warmup": "Statistics before this time are discarded.",
    "seed": "The seed of the random streams: one seed, one result.",
    "arrivals": "Stop after this many arrivals.",
    "poisson": "Poisson arrivals at the given rate.",
    "renewal": "Arrivals separated by independent gaps drawn from the expression.",
    "closed": "A closed population of n sessions.",
    "batch": "n sessions all arriving at time 0.",
    "ordered": "Replay the trace in file order.",
    "latency": "A fixed delay before the transfer or the queue's serving.",
    "sum": "`sum j in n (e)`: e summed over j = 0 .. n-1.",
    "maxmin": "Max-min fair sharing: every flow's rate rises together until a stage fills.",
    "bottleneck": "Each flow gets its equal share at the tightest of its stages.",
    "lru": "Evict the least recently released entry first.",
    "lifo": "Preempt the most recently admitted resident first.",
    "none": "Nothing: no arrivals, or no preemption.",
    "by": "Orders by keys, ascending: `by (k1, k2, ...)`.",
    "in": "`choose i in n` or an aggregate's range 0 .. n-1.",
    "exclusive": "`serve exclusive prefill`: one prefill alone or a decode-only batch.",
    "args": '`args.number("name", default)`: an input of the program (`use "std/args";`), '
    "given with `serq run --set name=VALUE` or the API's `sets=`.",
    "claim": "A property the run checks and reports: `claim NAME [given (cond)]: every "
    "iteration of E (p);`, `some iteration of E (p);` or `at end (p);`.",
    "given": "`claim NAME given (cond): ...`: the claim applies only while every session that "
    "arrives satisfies cond (read once, at its arrival, after `init`).",
    "every": "`every iteration of E (p)`: p must hold as each iteration of step stage E starts.",
    "some": "`some iteration of E (p)`: p must hold as at least one iteration of E starts.",
    "iteration": "One scheduler step of a step stage; a claim reads it as it starts.",
    "of": "`every iteration of E` / `some iteration of E`: the step stage a claim watches.",
    "requeue": "`preempt by (keys) requeue tail|head;`: where the victim goes back in the "
    "pool's queue (default: head).",
    "tail": "`requeue tail`: the preempted request waits behind every other.",
    "head": "`requeue head`: the preempted request is the next one admitted.",
    "held": "`reserve held;`: a holder's reservation stays counted against admission and "
    "growth until it releases, not only at its admission.",
}

# A keyword whose meaning depends on the words beside it: (word, the word before or None,
# a pattern of what follows or None) and its meaning there, tried before `KEYWORDS`.
IN_CONTEXT: list[tuple[str, str | None, str | None, str]] = [
    (
        "queue",
        None,
        r"\s*(?:fifo\b|by\b)",
        "In a pool: the order its waiting holds are admitted in: `queue fifo;` (arrival "
        "order, the default) or `queue by (keys);` (the smallest keys first).",
    ),
    ("fifo", "queue", None, "`queue fifo;`: the pool admits its waiting holds in arrival order."),
    (
        "by",
        "queue",
        None,
        "`queue by (keys);`: the pool admits the waiting hold with the smallest keys first.",
    ),
    (
        "max",
        None,
        r"\s+" + NAME + r"\s+in\b",
        "`max j in n (e)`: the largest value of e for j = 0 .. n-1.",
    ),
    (
        "min",
        None,
        r"\s+" + NAME + r"\s+in\b",
        "`min j in n (e)`: the smallest value of e for j = 0 .. n-1.",
    ),
]


# comments and strings, an open one running to the end (of its line, for a string)
OPAQUE = re.compile(r'//[^\r\n]*|/\*[\s\S]*?(?:\*/|\Z)|"[^"\r\n]*"?')


def in_comment_or_string(text: str, offset: int, start: int = 0) -> bool:
    """Whether `offset` lies inside a comment or a string of `text` (after its first
    character): a word there is no keyword. `start`, where the scan begins, lies outside
    every comment and string (`Analysis.item_start`)."""
    for m in OPAQUE.finditer(text, start):
        if m.start() >= offset:
            return False
        if offset < m.end():
            return True
    return False


def in_context(text: str, start: int, word: str) -> str | None:
    """The meaning of the keyword `word` at offset `start` of `text` where the words beside
    it decide it (`queue fifo;` in a pool, `max j in n (e)`), or None."""
    end = start + len(word)
    before = re.findall(NAME, text[max(0, start - 40) : start])
    for name, prior, after, meaning in IN_CONTEXT:
        if name != word:
            continue
        if prior is not None and (not before or before[-1] != prior):
            continue
        if after is not None and not re.match(after, text[end : end + 80]):
            continue
        return meaning
    return None


# `cost(X, amount)`, the function (the keyword `cost` is a step stage's clause)
COST_CALL = (
    "`amount` stated in the unit of the pool or stage `X`; its value is `amount` (how the "
    "`fn main` dialect writes a quantity handed to a resource)."
)

# Built-in functions and distributions: parameter names and what they give (serq.builtins).
FUNCTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    **{
        name: (tuple(p.name for p in b.params), b.meaning) for name, b in builtins.FUNCTIONS.items()
    },
    # the run's aggregates a claim `at end` reads
    "total": (("obs",), "the sum of every sample of the observation (a claim `at end`)"),
    "count": (("obs",), "the number of samples of the observation (a claim `at end`)"),
    "largest": (("obs",), "the largest sample of the observation, 0 for none (at end)"),
    "prefix_total": (
        ("obs",),
        "the sum of the prefix sums of the samples, smallest first (a claim `at end`)",
    ),
}
DISTRIBUTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    name: (tuple(p.name for p in b.params), b.meaning) for name, b in builtins.DRAWS.items()
}

CONTEXT_MEANINGS: dict[str, str] = {
    "now": "the simulated time",
    "size": "the size of the cache entry being ranked",
    "age": "the time since the entry was released",
    "last": "the time the entry was last used",
    "waiting": "whether the entry's session is waiting",
    "waited": "the time the waiting hold has waited",
    "present": "the jobs present at the ps stage",
    "residents": "the engine's residents before the iteration",
    "decoders": "the residents that decode",
    "kv_decode": "the KV the decoding residents hold",
    "kv_prefill": "the KV the prefilling residents hold",
    "tokens": "the tokens the iteration scheduled",
    "prefilled": "the prefill tokens the iteration scheduled",
    "attention": "the attention work of the iteration's prefill chunks",
    "decoding": "1 for a decoding resident",
    "admission": "the resident's admission sequence number",
    "remaining": "the tokens the resident's run has left",
    "demand": "the tokens the residents would take in the iteration with no budget",
    "served": "the tokens the stage's finished iterations served",
    "arrived": "the sessions arrived so far",
    "position": "where the candidate victim's hold on the pool is now",
}
assert set(CONTEXT_MEANINGS) == CONTEXT_VARS | CLAIM_CONTEXT

BUILTIN_MEANINGS: dict[str, str] = {
    "serial": "the session's serial number",
    "turn_no": "the number of the current turn",
    "cached": "the prefix consumed at the last admission",
    "computed": "the position the hold had computed when preempted",
    "inf": "infinity",
    **{name: "a column of the trace" for name in TRACE_ATTRS},
}
assert set(BUILTIN_MEANINGS) >= BUILTIN_ATTRS


def context_homes(name: str) -> str:
    """Where the context variable `name` may be read, in words."""
    if name == "now":
        return "everywhere but an arrival gap"
    from serq.link.checks.moments import HOMES

    return " or ".join(place.value for place in HOMES.get(name, ()))


def signature(params: tuple[str, ...], name: str, prefix: str = "") -> str:
    """`name(a, b)` written out, with an optional `~` prefix for a draw."""
    return f"{prefix}{name}({', '.join(params)})"


# `args.` and what of a member name follows it, ending where it is asked
_ARGS_MEMBER = re.compile(r"(?<![\w.])args\.\w*\Z")


def in_args_member(text: str, offset: int) -> bool:
    """Whether `offset` is in the member of `args.` (`args.number`): right after `args.`
    and what of a name follows it (completion offers only `number` there, hover names it)."""
    return _ARGS_MEMBER.search(text, max(0, offset - 80), offset) is not None
