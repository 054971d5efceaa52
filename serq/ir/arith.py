"""The arithmetic of serQ expressions, defined once for the linker's folding and the simulator.

Values are IEEE doubles, as in the reference: a division by zero is an infinity (0/0 is
NaN), an overflow is an infinity, a function outside its domain is NaN; no operation
raises. Comparisons and `!`, `&&`, `||` give 0 or 1, and a non-zero operand is true.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from serq.ir.expr import Binary, Call, Cond, Expr, Num, Unary

INF = math.inf


# The NaN an invalid operation gives in the reference's f64 arithmetic on x86-64: the
# processor's default NaN, whose sign bit is set (`inf - inf` gives it in Python too).
# Its sign is seen only where keys order a NaN (`serq.sim.ranked_queue.total`).
DEFAULT_NAN = -math.nan


def divide(a: float, b: float) -> float:
    """a / b under IEEE rules: x/0 is ±inf, 0/0 is the default NaN, NaN/0 the NaN."""
    if b == 0:
        if a == 0:
            return DEFAULT_NAN
        if math.isnan(a):
            return a
        return math.copysign(INF, a) * math.copysign(1.0, b)
    return a / b


def power(a: float, b: float) -> float:
    """a ^ b as C's pow: an overflow is inf, a negative base to a fraction is NaN, and 0
    or -0 to a negative power is inf, of the zero's sign when the power is an odd integer
    (`pow(-0, -1)` is -inf)."""
    try:
        r = math.pow(a, b)
    except OverflowError:
        return INF if a > 0 or b == math.floor(b) and int(b) % 2 == 0 else -INF
    except ValueError:  # a negative base to a non-integer, or 0 to a negative power
        if a == 0:
            odd = b == math.floor(b) and int(b) % 2 == 1  # b is finite here
            return math.copysign(INF, a) if odd else INF
        return DEFAULT_NAN  # as C's pow gives it
    return r


def _mul(a: float, b: float) -> float:
    return a * b  # float multiplication never raises; inf * 0 is NaN


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def _ln(x: float) -> float:
    """C's log: of a negative number a NaN without its sign bit, of a NaN the NaN."""
    if x > 0:
        return math.log(x)
    if x != x:
        return x
    return -INF if x == 0 else math.nan


def _sqrt(x: float) -> float:
    """The processor's square root: of a negative number the default NaN."""
    return math.sqrt(x) if x >= 0 or math.isnan(x) else DEFAULT_NAN


def _floor(x: float) -> float:
    """The reference's floor: of 0 or -0, inf or NaN, the operand itself (Python's
    `math.floor` is an int, which has no -0)."""
    if x == 0 or not math.isfinite(x):
        return x
    return float(math.floor(x))


def _ceil(x: float) -> float:
    """The reference's ceil: -0 for an operand between -1 and 0 (`ceil(-0.5)` is -0),
    and as `_floor` for 0, -0, inf and NaN."""
    if x == 0 or not math.isfinite(x):
        return x
    r = float(math.ceil(x))
    return -0.0 if r == 0 and x < 0 else r


def _min(a: float, b: float) -> float:
    """The reference's `min`: a NaN operand gives the other, and on a tie (0 and -0) the
    second operand wins, as both pyserq 0.1.2 and 0.1.4 give it (tests/sim/NOTES.md §20)."""
    return a if a < b or b != b else b


def _max(a: float, b: float) -> float:
    """The reference's `max`: as `_min`, a NaN gives the other, the second wins a tie."""
    return a if a > b or b != b else b


BINARY: dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": _mul,
    "/": divide,
    "^": power,
    "==": lambda a, b: float(a == b),
    "!=": lambda a, b: float(a != b),
    "<": lambda a, b: float(a < b),
    "<=": lambda a, b: float(a <= b),
    ">": lambda a, b: float(a > b),
    ">=": lambda a, b: float(a >= b),
    "&&": lambda a, b: float(a != 0 and b != 0),
    "||": lambda a, b: float(a != 0 or b != 0),
}
UNARY: dict[str, Callable[[float], float]] = {
    "-": lambda a: -a,
    "!": lambda a: float(a == 0),
}
# name -> (arity, function)
FUNCTIONS: dict[str, tuple[int, Callable[..., float]]] = {
    "min": (2, _min),
    "max": (2, _max),
    "abs": (1, abs),
    "floor": (1, _floor),
    "ceil": (1, _ceil),
    "sqrt": (1, _sqrt),
    "exp": (1, _exp),
    "ln": (1, _ln),
    "pow": (2, power),
}
# distribution -> arity
DISTRIBUTIONS: dict[str, int] = {
    "exp": 1,
    "det": 1,
    "uniform": 2,
    "erlang": 2,
    "h2": 2,
    "bernoulli": 1,
}


def fold(expr: Expr) -> float | None:
    """The value of `expr` when it reads only numbers and functions of numbers, else None."""
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, Unary):
        v = fold(expr.operand)
        return None if v is None else UNARY[expr.op](v)
    if isinstance(expr, Binary):
        a, b = fold(expr.left), fold(expr.right)
        return None if a is None or b is None else BINARY[expr.op](a, b)
    if isinstance(expr, Cond):
        t = fold(expr.test)
        if t is None:
            return None
        return fold(expr.then if t != 0 else expr.otherwise)
    if isinstance(expr, Call):
        args = [fold(a) for a in expr.args]
        if any(a is None for a in args):
            return None
        return float(FUNCTIONS[expr.func][1](*args))
    return None
