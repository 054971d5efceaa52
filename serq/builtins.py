"""The functions, draws and arrival laws the language supplies: their parameters, the units
of each and of the result, and what they mean, in our own words.

One table for every tool that explains them: the language server's hover, completion and
signature help read it, and so can the docs. Units are those of the program: serQ has no
unit of its own, so "time" is whatever unit the program's durations are written in (the
examples use seconds), "work" is what a stage serves (time at a unit-rate stage, tokens
at a step engine), and "units" are a pool's (KV tokens or blocks, request slots).
`tests/link/test_builtins.py` holds the table to `serq.vocabulary`'s names.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter: its `name`, its `unit`, and what it is."""

    name: str
    unit: str
    meaning: str


@dataclass(frozen=True, slots=True)
class Builtin:
    """A function, draw or arrival law: `kind` ("function", "observable", "draw", "arrival"),
    its parameters, the unit of its value (`result`) and a one-phrase `meaning`."""

    name: str
    kind: str
    params: tuple[Param, ...]
    result: str
    meaning: str

    @property
    def prefix(self) -> str:
        """What precedes the name where it is written: `~` for a draw, `arrive ` for a law."""
        return {"draw": "~", "arrival": "arrive "}.get(self.kind, "")

    def signature(self, units: bool = False) -> str:
        """`name(a, b)` as written (with `~` or `arrive`); `units` adds each parameter's."""
        if not self.params and self.kind == "arrival":
            return f"{self.prefix}{self.name}"  # `arrive none;`
        params = ", ".join(f"{p.name}: {p.unit}" if units else p.name for p in self.params)
        return f"{self.prefix}{self.name}({params})"

    def markdown(self) -> str:
        """The signature, the meaning and its unit, and a line per parameter with its unit."""
        if self.kind == "arrival":
            what = f"arrival law: {self.meaning}."
        elif self.result.startswith("none"):  # "none (0 or 1)": a pure number
            what = f"{self.kind}: {self.meaning}; its value has no unit{self.result[4:]}."
        else:
            what = f"{self.kind}: {self.meaning}; its value is in {self.result}."
        parts = [f"```serq\n{self.signature()}\n```", what]
        if self.params:
            parts.append(
                "\n".join(f"- `{p.name}` ({_said(p.unit)}): {p.meaning}" for p in self.params)
            )
        return "\n\n".join(parts)


def _said(unit: str) -> str:
    """A parameter's unit as a hover says it: "none" is "no unit"."""
    return "no unit" if unit == "none" else unit


def _b(name: str, kind: str, params: list[tuple[str, str, str]], result: str, meaning: str):
    return Builtin(name, kind, tuple(Param(*p) for p in params), result, meaning)


_X = ("x", "any", "a number")
_STAGE = ("stage", "a stage", "the stage's name (a family member as `S[i]`)")
_POOL = ("pool", "a pool", "the pool's name (a family member as `P[i]`)")

FUNCTIONS: dict[str, Builtin] = {
    b.name: b
    for b in (
        _b(
            "min",
            "function",
            [("a", "any", "a number"), ("b", "any", "a number")],
            "the unit of a and b",
            "the smaller of a and b",
        ),
        _b(
            "max",
            "function",
            [("a", "any", "a number"), ("b", "any", "a number")],
            "the unit of a and b",
            "the larger of a and b",
        ),
        _b("abs", "function", [_X], "the unit of x", "the absolute value of x"),
        _b("floor", "function", [_X], "the unit of x", "x rounded down to a whole number"),
        _b("ceil", "function", [_X], "the unit of x", "x rounded up to a whole number"),
        _b("sqrt", "function", [_X], "the square root of x's unit", "the square root of x"),
        _b("exp", "function", [("x", "none", "an exponent")], "none", "e to the power x"),
        _b(
            "ln",
            "function",
            [("x", "none", "a positive number")],
            "none",
            "the natural logarithm of x",
        ),
        _b(
            "pow",
            "function",
            [("a", "any", "the base"), ("b", "none", "the exponent")],
            "a's unit to the power b",
            "a to the power b",
        ),
        _b("queue", "observable", [_STAGE], "jobs", "the jobs waiting at the stage, now"),
        _b("busy", "observable", [_STAGE], "servers", "the stage's busy servers, now"),
        _b(
            "work",
            "observable",
            [_STAGE],
            "work",
            "the work the jobs present at the stage have left, now",
        ),
        _b("used", "observable", [_POOL], "units", "the pool's allocated units, now"),
        _b("free", "observable", [_POOL], "units", "the pool's free units, now"),
        _b(
            "cachedin",
            "observable",
            [_POOL],
            "units",
            "the units of this session's prefix cached in the pool",
        ),
        _b("holders", "observable", [_POOL], "sessions", "the sessions holding the pool, now"),
        _b("queued", "observable", [_POOL], "holds", "the holds waiting for the pool, now"),
        _b(
            "budget_left",
            "observable",
            [("step_stage", "a step stage", "the engine's name")],
            "tokens",
            "the token budget the engine's running residents leave in its next iteration",
        ),
        _b("blocksize", "observable", [_POOL], "units", "the pool's `block`, folded at link time"),
        _b(
            "price",
            "observable",
            [
                _STAGE,
                ("s_hit", "time", "the service a hit takes"),
                ("ds", "time", "the extra service a miss takes"),
            ],
            "time",
            "the online price of a miss at the stage: its own extra service plus the wait it "
            "adds to the others, from the stage's measured rate, load and wait",
        ),
        _b(
            "est_lambda",
            "observable",
            [_STAGE],
            "1/time",
            "the stage's measured arrival rate (0 before two completions)",
        ),
        _b(
            "est_rho",
            "observable",
            [_STAGE],
            "none (a fraction below 0.99)",
            "the stage's measured utilisation",
        ),
        _b("est_wait", "observable", [_STAGE], "time", "the stage's measured mean wait"),
    )
}

DRAWS: dict[str, Builtin] = {
    b.name: b
    for b in (
        _b(
            "exp",
            "draw",
            [("mean", "any", "the mean, in the unit of the value drawn")],
            "the unit of mean",
            "exponential with the given mean",
        ),
        _b("det", "draw", [("x", "any", "the value")], "the unit of x", "always x"),
        _b(
            "uniform",
            "draw",
            [("lo", "any", "the least value"), ("hi", "the unit of lo", "the greatest value")],
            "the unit of lo and hi",
            "uniform between lo and hi",
        ),
        _b(
            "erlang",
            "draw",
            [
                ("k", "phases", "the number of exponential phases, a whole number ≥ 1"),
                ("mean", "any", "the mean of the sum"),
            ],
            "the unit of mean",
            "Erlang: k exponential phases summing to the given mean",
        ),
        _b(
            "h2",
            "draw",
            [
                ("mean", "any", "the mean"),
                ("cv2", "none", "the squared coefficient of variation, ≥ 1"),
            ],
            "the unit of mean",
            "two-phase hyperexponential with the given mean and cv²",
        ),
        _b(
            "bernoulli",
            "draw",
            [("p", "probability", "the chance of a 1, in [0, 1]")],
            "none (0 or 1)",
            "1 with probability p, else 0",
        ),
    )
}

ARRIVALS: dict[str, Builtin] = {
    b.name: b
    for b in (
        _b(
            "poisson",
            "arrival",
            [("rate", "sessions/time", "the mean arrivals per unit of time")],
            "sessions",
            "one session at time 0, then exponential gaps of mean 1 / rate",
        ),
        _b(
            "renewal",
            "arrival",
            [("gap", "time", "the gap before each arrival, drawn anew each time (`~h2(...)`)")],
            "sessions",
            "the first session after one gap, then one after every gap",
        ),
        _b(
            "closed",
            "arrival",
            [("n", "sessions", "the population, a constant")],
            "sessions",
            "n sessions at time 0, each replaced by a new one when it ends",
        ),
        _b(
            "batch",
            "arrival",
            [("n", "sessions", "how many, a constant")],
            "sessions",
            "n sessions all arriving at time 0",
        ),
        _b("none", "arrival", [], "sessions", "no session arrives"),
    )
}


def lookup(name: str, *, draw: bool = False, arrival: bool = False) -> Builtin | None:
    """The built-in `name` as written: after `~` (`draw`), after `arrive` (`arrival`), or
    as a function; None when the language has none by that name there."""
    table = DRAWS if draw else ARRIVALS if arrival else FUNCTIONS
    return table.get(name)
