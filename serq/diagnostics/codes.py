"""Every diagnostic code, declared once as a module constant (in the manner of mypy's errorcodes).

An id is `E-<name>` (error), `W-<name>` (warning) or `L-<name>` (lint), the name in kebab-case.
Constructing a `Code` registers it in `ALL`; declaring the same id twice raises `ValueError`.
To add a code, add a constant below with a one-line description and a category from `CATEGORIES`.
"""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = ("syntax", "expand", "link", "lint", "run", "io", "internal")

ALL: dict[str, Code] = {}


@dataclass(frozen=True)
class Code:
    """A stable diagnostic code: its `id`, a one-line `description` and the stage `category`."""

    id: str
    description: str
    category: str

    def __post_init__(self) -> None:
        if self.id in ALL:
            raise ValueError(f"diagnostic code {self.id!r} declared twice")
        ALL[self.id] = self

    def __str__(self) -> str:
        return self.id


def describe(code_id: str) -> str:
    """Return the one-line description of the code whose id is `code_id`."""
    try:
        return ALL[code_id].description
    except KeyError:
        raise KeyError(f"unknown diagnostic code {code_id!r}") from None


# syntax
PARSE = Code(
    "E-parse",
    "the text is not serQ syntax: an unexpected token or character, or a missing one",
    "syntax",
)

TOO_DEEP = Code(
    "E-too-deep",
    "operators, calls or blocks nest deeper than serq reads, or a `def` call inlines more "
    "than it takes (docs/limits.md gives the limits)",
    "syntax",
)
INVALID_UTF8 = Code(
    "E-utf8", "the file's bytes are not UTF-8 text: the first bad byte is marked", "syntax"
)

# io
IO = Code(
    "E-io",
    "a file could not be read or written, something a command needs is missing, or "
    "`serq plot` has nothing to draw",
    "io",
)
INTERNAL = Code(
    "E-internal",
    "serq itself failed on this input (a bug in serq, not in the program); please report it",
    "internal",
)

# expand: the sugar's own rules, reported on the surface form
USE = Code(
    "E-use", "a `use`d file is missing, unreadable, or uses itself through a cycle", "expand"
)
DEF = Code(
    "E-def",
    "a `def` call names no definition, has the wrong number of arguments, or recurses",
    "expand",
)
SERVING = Code(
    "E-serving-stage",
    "a serving form (`prefill`, `decode`, `tool`, `transfer`) has no stage, or several, to run on",
    "expand",
)
SIDES = Code(
    "E-sides",
    "the two sides break their ownership rules: a word used on the wrong side, both forms "
    "in one program, a session without a server or a server never requested",
    "expand",
)
QUEUE = Code(
    "E-queue",
    "a queue, entry call, gateway request, `from`, `mark`, `self` or pull relation is malformed",
    "expand",
)
ADMISSION = Code(
    "E-admission",
    "an `at admission` binding draws, reads a later binding, or reads live state the body uses",
    "expand",
)
AGGREGATE = Code(
    "E-aggregate",
    "an aggregate's count is not a constant, or its index reuses a name of the program",
    "expand",
)
DIALECT = Code(
    "E-dialect", "a form the program's dialect (`fn main` or not) does not have", "expand"
)

# link: names
UNKNOWN_NAME = Code(
    "E-unknown-name",
    "a name that nothing declares: no attribute, let, pool, stage or function",
    "link",
)
NAME_CLASH = Code(
    "E-name-clash",
    "two things share one name: an attribute, a let, a context variable, a pool, a stage, "
    "a queue, a definition or a binding",
    "link",
)
WRONG_KIND = Code(
    "E-wrong-kind", "a name used as what it is not: a pool where a stage goes, and so on", "link"
)
ARITY = Code(
    "E-arity", "a function or distribution called with the wrong number of arguments", "link"
)
INDEX = Code(
    "E-index",
    "an array indexed wrongly: a missing index, a scalar indexed, a constant index out of range",
    "link",
)
# link: the rules of the spec
MOMENT = Code("E-moment", "a context variable read outside the one place it exists", "link")
HIDDEN = Code(
    "E-hidden", "a hidden attribute read where the scheduler decides, or hidden wrongly", "link"
)
CONSTANT = Code(
    "E-constant",
    "a constant position (let, cap, block, fifo count, rate, run block) that is not "
    "a constant, or is NaN",
    "link",
)
STRUCTURE = Code(
    "E-structure",
    "a structural rule: step modes, multi-stage runs and share, gauges, family sizes, serve, "
    "draws in keys, transfers and `from`",
    "link",
)
UNSET = Code(
    "W-unset",
    "an attribute read on a path where nothing has set it yet, so it reads 0",
    "link",
)
# lint (reported as errors)
LINT_SET_HEADER = Code(
    "L-set-in-header",
    "a `set` that reads live state is then read in a hold's header: use `at admission`",
    "lint",
)
LINT_GUARD = Code(
    "L-constant-guard",
    "a constant branch guard that is not 0 or 1 (one strictly between is a draw: use "
    "`branch with`)",
    "lint",
)
# run
RUNTIME = Code("E-run", "the program failed while it ran: ...", "run")
STALL = Code(
    "W-stall",
    "a stage stopped moving while the run went on: a step engine with residents or waiting "
    "sessions planned no iteration, a job of infinite work never completes, or a hold that "
    "can never grow is preempted and executed again for ever (a livelock); the report's "
    "numbers after that time describe a stopped stage",
    "run",
)
DEADLOCK = Code(
    "W-deadlock",
    "sessions wait for each other at the pools for ever while arrivals or other sessions "
    "keep the run going: the report's numbers after that describe a stopped deployment",
    "run",
)
REJECT = Code(
    "W-reject",
    "a hold that can never fit a pool (its units or reserve above the cap) rejected sessions, "
    "which ended there: the report counts them under `rejected`",
    "run",
)
IDLE = Code(
    "W-idle",
    "no session arrived in the whole run (`arrive none`, or a first renewal gap past the "
    "horizon): nothing ran, and the report is empty",
    "run",
)
DRAW = Code(
    "W-draw",
    "a draw whose parameters its law does not have, drawn as the reference draws it",
    "run",
)
