"""The kernel printer: its text parses back to the tree it printed, spans aside.

Round trips over every valid program of the corpus and examples/, over every
expression in them, and over small expressions built for each pair of
operators; unit cases for the parentheses each precedence needs, for numbers
the expander computes, and for the kernel's dotted names, which the grammar
reads as declared names (`pool P.kv[2]`) and as references (`P.kv[i]`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

from serq.diagnostics import Span
from serq.expand.printer import print_module, print_node
from serq.syntax import ast, parse

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(
    [
        *(ROOT / "tests" / "corpus" / "valid").rglob("*.sq"),
        *(ROOT / "tests" / "corpus" / "valid_main").rglob("*.sq"),
        *(ROOT / "examples").rglob("*.sq"),
    ]
)
INVALID = sorted((ROOT / "tests" / "corpus" / "invalid").glob("*.sq"))
S = Span("k.sq", 0, 0, 1, 1, 1, 1)  # the span of a node built by hand


def normal(node):
    """A form of `node` that compares as the tree means, not as it was written.

    Spans are dropped. A reference with at most one index is its dotted name and
    that index (`P[i].kv`, `P.kv[i]` and the kernel's one-part `P.kv[i]` are
    equal), and a bare name is such a reference. A number is its value, which
    `-2` and `inf` also are."""
    if isinstance(node, ast.Number):
        return ("number", "nan" if math.isnan(node.value) else float(node.value))
    if isinstance(node, ast.Unary) and node.op == "-" and isinstance(node.operand, ast.Number):
        return ("number", -float(node.operand.value))
    if isinstance(node, ast.Name):
        if node.name == "inf":
            return ("number", math.inf)
        return ("ref", node.name, None)
    if isinstance(node, ast.Ref):
        indexed = [p.index for p in node.parts if p.index is not None]
        if len(indexed) <= 1:
            return ("ref", node.dotted, normal(indexed[0]) if indexed else None)
        return ("ref", tuple((p.ident.name, normal(p.index)) for p in node.parts))
    if isinstance(node, ast.Ident):
        return node.name
    if isinstance(node, Span):
        return "span"
    if isinstance(node, tuple):
        return tuple(normal(n) for n in node)
    if is_dataclass(node):
        return (type(node).__name__,) + tuple(
            normal(getattr(node, f.name)) for f in fields(node) if f.name != "span"
        )
    return node


def parsed(text: str, file: str = "k.sq") -> ast.Module:
    result = parse(text, file)
    assert [d.message for d in result.diagnostics] == [], text
    return result.module


def expression(text: str) -> ast.Expr:
    (let,) = parsed(f"let x = {text};").items
    return let.value


def canonical(text: str) -> str:
    """`text`, an expression, as the printer writes it."""
    return print_node(expression(text))


# ------------------------------------------------------------- round trips


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_program_round_trips(path):
    module = parsed(path.read_text(encoding="utf-8"), str(path))
    text = print_module(module)
    again = parsed(text, str(path))
    assert normal(again) == normal(module)
    assert print_module(again) == text  # the canonical text is a fixed point


def _expressions(node):
    if isinstance(node, tuple):
        for child in node:
            yield from _expressions(child)
    elif is_dataclass(node) and not isinstance(node, Span):
        if isinstance(node, (ast.Unary, ast.Binary, ast.Conditional, ast.Aggregate, ast.Call)):
            yield node
        for f in fields(node):
            yield from _expressions(getattr(node, f.name))


def test_every_corpus_expression_round_trips_on_its_own():
    seen = set()
    for path in PROGRAMS:
        module = parsed(path.read_text(encoding="utf-8"), str(path))
        for e in _expressions(module):
            text = print_node(e)
            if text in seen:
                continue
            seen.add(text)
            assert normal(expression(text)) == normal(e), text
    assert len(seen) > 200


_BINARY = ("||", "&&", "==", "<", "+", "-", "*", "/", "^")


def _small_expressions():
    """Every expression of depth two over the operators, with leaves a, b, c."""
    a, b, c = (ast.Name(ast.Ident(n, S), S) for n in "abc")
    inner = [a]
    inner += [ast.Binary(op, a, b, S) for op in _BINARY]
    inner += [ast.Unary("-", a, S), ast.Unary("!", a, S), ast.Conditional(a, b, c, S)]
    for op in _BINARY:
        for left, right in itertools.product(inner, repeat=2):
            yield ast.Binary(op, left, right, S)
    for operand in inner:
        yield ast.Unary("-", operand, S)
    for test, then, otherwise in itertools.product(inner, repeat=3):
        yield ast.Conditional(test, then, otherwise, S)


def test_generated_expressions_round_trip():
    built = list(_small_expressions())
    source = "".join(f"let x{i} = {print_node(e)};\n" for i, e in enumerate(built))
    lets = parsed(source).items
    assert len(lets) == len(built)
    for let, e in zip(lets, built, strict=True):
        assert normal(let.value) == normal(e), print_node(e)


# ------------------------------------------------------------ parentheses


@pytest.mark.parametrize(
    "source, printed",
    [
        ("(a + b) * c", "(a + b) * c"),
        ("a + (b * c)", "a + b * c"),
        ("(a - b) - c", "a - b - c"),
        ("a - (b - c)", "a - (b - c)"),
        ("a / (b * c)", "a / (b * c)"),
        ("(a / b) * c", "a / b * c"),
        ("-(x ^ 2)", "-x ^ 2"),
        ("(-x) ^ 2", "(-x) ^ 2"),
        ("a ^ (b ^ c)", "a ^ b ^ c"),
        ("(a ^ b) ^ c", "(a ^ b) ^ c"),
        ("a ^ (-b)", "a ^ -b"),
        ("-(a * b)", "-(a * b)"),
        ("-(-x)", "- -x"),
        ("!(!(x))", "!!x"),
        ("!(a && b)", "!(a && b)"),
        ("(a < b) == c", "(a < b) == c"),
        ("a == (b < c)", "a == (b < c)"),
        ("(a + 1) < (b * 2)", "a + 1 < b * 2"),
        ("(a || b) && c", "(a || b) && c"),
        ("a || (b && c)", "a || b && c"),
        ("(a && b) || c", "a && b || c"),
        ("a ? b : (c ? d : e)", "a ? b : c ? d : e"),
        ("a ? (b ? c : d) : e", "a ? b ? c : d : e"),
        ("(a ? b : c) ? d : e", "(a ? b : c) ? d : e"),
        ("(a || b) ? c : d", "a || b ? c : d"),
        ("(a ? b : c) + 1", "(a ? b : c) + 1"),
        ("max j in (N + 1) (x[j])", "max j in (N + 1) (x[j])"),
        ("sum j in (N) ((j))", "sum j in N (j)"),
        ("(max j in 2 (u[j])) ^ 2", "max j in 2 (u[j]) ^ 2"),
        ("max(a, b)", "max(a, b)"),
        ("~h2(mean, (cv2))", "~h2(mean, cv2)"),
        ("P[i].kv", "P[i].kv"),
        ("1_000 + .5 + 2e-3", "1_000 + .5 + 2e-3"),
    ],
)
def test_parentheses(source, printed):
    assert canonical(source) == printed
    assert normal(expression(printed)) == normal(expression(source))


def number(value: float) -> ast.Number:
    return ast.Number(value, "", S)


@pytest.mark.parametrize(
    "node, printed",
    [
        (number(2.0), "2"),
        (number(0.25), "0.25"),
        (number(1e-7), "1e-07"),
        (number(1e20), "1e+20"),
        (number(math.inf), "inf"),
        (number(-3.0), "-3"),
        (number(math.nan), "0 / 0"),
        (ast.Number(5.0, "4", S), "5"),  # a text that is not the value is not trusted
        (ast.Binary("^", number(-2.0), number(2.0), S), "(-2) ^ 2"),
        (ast.Binary("*", number(2.0), number(math.nan), S), "2 * (0 / 0)"),
        (ast.Binary("-", number(1.0), number(-1.0), S), "1 - -1"),
        (ast.Unary("-", number(-1.0), S), "- -1"),
    ],
)
def test_computed_numbers(node, printed):
    assert print_node(node) == printed


def test_computed_numbers_read_back_as_their_values():
    for value in (0.0, 3.0, 0.1, 1 / 3, 2.5e-9, 6.02e23, 1e16, math.inf, -7.5):
        assert normal(expression(print_node(number(value)))) == ("number", value)


# ----------------------------------------------------------- dotted names


def test_dotted_declarations_parse_as_one_name():
    text = (
        "pool P.kv[2] { cap 10; spill P.kv via D.nic (1) when (1); }\n"
        "stage P.nic[2] : ps(1);\n"
        "stage D.nic.latency[2] : delay;\n"
        "stage P[2] : step { budget 1; cost 1; memory P.kv; }\n"
        "pool P.reqs[2] { admit via P; }\n"
        "session { set P.c = cached; observe D.first_token = now; choose P.j in 2 by (1); }\n"
    )
    pool, nic, latency, stage, reqs, session = parsed(text).items
    assert pool.name.name == "P.kv"
    assert text[pool.name.span.start : pool.name.span.end] == "P.kv"
    assert (pool.options[1].pool.name, pool.options[1].stage.name) == ("P.kv", "D.nic")
    assert nic.name.name == "P.nic" and latency.name.name == "D.nic.latency"
    assert text[latency.name.span.start : latency.name.span.end] == "D.nic.latency"
    assert stage.kind.options[2].target.name == "P.kv"
    assert reqs.options[0].target.name == "P"
    assert [s.target.name for s in session.body.body] == ["P.c", "D.first_token", "P.j"]
    set_ = session.body.body[0]
    assert text[set_.target.span.start : set_.target.span.end] == "P.c"


def test_dotted_names_keep_keywords_as_names():
    (session,) = parsed("session { set P.hold = 1; set hold = 2; }").items
    assert [s.target.name for s in session.body.body] == ["P.hold", "hold"]


def test_a_dotted_name_still_needs_its_parts():
    result = parse("stage P. : delay;\nsession { set P.. = 1; }\n", "k.sq")
    assert len(result.diagnostics) == 2
    assert all(d.code == "E-parse" for d in result.diagnostics)


def _ref(name: str, index: ast.Expr | None = None) -> ast.Ref:
    return ast.Ref((ast.RefPart(ast.Ident(name, S), index, S),), S)


def _name(name: str) -> ast.Name:
    return ast.Name(ast.Ident(name, S), S)


def test_a_kernel_with_dotted_names_prints_and_parses_back():
    j = _name("j")
    kernel = ast.Module(
        "k.sq",
        (
            ast.Pool(
                ast.Ident("P.kv", S),
                number(2.0),
                (ast.Option("cap", number(100.0), (), None, S),),
                S,
            ),
            ast.Stage(ast.Ident("P", S), number(2.0), ast.Step((), S), S),
            ast.Stage(ast.Ident("D.nic.latency", S), number(2.0), ast.Delay(S), S),
            ast.Session(
                ast.Block(
                    (
                        ast.Set(ast.Ident("P.c", S), _name("cached"), S),
                        ast.Observe(ast.Ident("seen", S), _name("P.c"), S),
                        ast.Run((_ref("D.nic.latency", j),), None, number(0.001), None, S),
                        ast.Hold(
                            (ast.HoldPool(_ref("P.kv", j), number(1.0), None, S),),
                            None,
                            (),
                            None,
                            ast.Block((ast.Grow(_ref("P.kv", j), number(1.0), S),), S),
                            None,
                            ast.Lease(_ref("P.kv", j), number(math.inf), S),
                            S,
                        ),
                    ),
                    S,
                ),
                S,
            ),
        ),
        None,
        S,
    )
    text = print_module(kernel)
    assert text == (
        "pool P.kv[2] {\n"
        "  cap 100;\n"
        "}\n"
        "\n"
        "stage P[2] : step {}\n"
        "stage D.nic.latency[2] : delay;\n"
        "\n"
        "session {\n"
        "  set P.c = cached;\n"
        "  observe seen = P.c;\n"
        "  run D.nic.latency[j] (0.001);\n"
        "  hold P.kv[j] (1) {\n"
        "    grow P.kv[j] (1);\n"
        "  } lease P.kv[j] (inf);\n"
        "}\n"
    )
    assert normal(parsed(text)) == normal(kernel)


# --------------------------------------------------------- the whole AST


def _instances():
    """One node of each AST class, from the corpus (the invalid files give the error nodes)."""
    found: dict[type, object] = {}

    def walk(node):
        if isinstance(node, tuple):
            for child in node:
                walk(child)
        elif is_dataclass(node) and not isinstance(node, Span):
            found.setdefault(type(node), node)
            for f in fields(node):
                walk(getattr(node, f.name))

    for path in [*PROGRAMS, *INVALID]:
        walk(parse(path.read_text(encoding="utf-8"), str(path)).module)
    return found


def test_every_node_class_prints():
    classes = {
        c for c in vars(ast).values() if isinstance(c, type) and c.__module__ == ast.__name__
    }
    found = _instances()
    assert classes - set(found) == set()
    for node in found.values():
        assert isinstance(print_node(node), str)


def test_error_nodes_print_as_comments():
    for path in INVALID:
        module = parse(path.read_text(encoding="utf-8"), str(path)).module
        text = print_module(module)
        assert isinstance(text, str)
    stmt = ast.Session(ast.Block((ast.ErrorStmt(S), ast.End(S)), S), S)
    assert print_node(stmt) == "session {\n  /* error */\n  end;\n}"
    assert print_node(ast.ErrorItem(S)) == "/* error */"


def test_print_node_refuses_what_is_not_a_node():
    with pytest.raises(TypeError):
        print_node(object())


# ------------------------------------------------------------ layout


def test_layout():
    source = (
        'use "lib.sq"; let a = 1; let b = 2; stage s : fifo; stage t : ps(2);\n'
        "queue Q[2] : prefill, decode { pool kv { cap 1; } serve fifo latency 0.5;"
        " nic delay; prefill (p) from src { run (p); } route { end; } }\n"
        'workload { arrive none; trace "t.csv" ordered; hidden o, n; }\n'
        "server { branch with (0.5) { prefill [j] (1); } else { tool on s, t (2) growing kv; } }\n"
        "R pull Q latency 1 share bottleneck; share maxmin; gauge g = 1;\n"
    )
    assert print_module(parse(source, "k.sq").module) == (
        'use "lib.sq";\n'
        "\n"
        "let a = 1;\n"
        "let b = 2;\n"
        "\n"
        "stage s : fifo;\n"
        "stage t : ps(2);\n"
        "\n"
        "queue Q[2] : prefill, decode {\n"
        "  pool kv {\n"
        "    cap 1;\n"
        "  }\n"
        "  serve fifo latency 0.5;\n"
        "  nic delay;\n"
        "  prefill (p) from src {\n"
        "    run (p);\n"
        "  }\n"
        "  route {\n"
        "    end;\n"
        "  }\n"
        "}\n"
        "\n"
        "workload {\n"
        "  arrive none;\n"
        '  trace "t.csv" ordered;\n'
        "  hidden o, n;\n"
        "}\n"
        "\n"
        "server {\n"
        "  branch with (0.5) {\n"
        "    prefill[j] (1);\n"
        "  } else {\n"
        "    tool on s, t (2) growing kv;\n"
        "  }\n"
        "}\n"
        "\n"
        "R pull Q latency 1 share bottleneck;\n"
        "\n"
        "share maxmin;\n"
        "\n"
        "gauge g = 1;\n"
    )


def test_fn_main_dialect():
    source = "let k = 2;\ndef f(x) { x * k }\nfn main() { stage s : delay; server { end; } }\n"
    assert print_module(parsed(source)) == (
        "let k = 2;\n"
        "\n"
        "def f(x) { x * k }\n"
        "\n"
        "fn main() {\n"
        "  stage s : delay;\n"
        "\n"
        "  server {\n"
        "    end;\n"
        "  }\n"
        "}\n"
    )
    (definition,) = parsed("def f(x) { x * 2 }").items
    assert print_node(definition) == "def f(x) = x * 2;"
