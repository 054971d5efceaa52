"""`serq.ir.to_json` / `from_json`: every corpus program round-trips, and the format's rules.

from_json(to_json(p)) == p for every program of tests/corpus/valid, valid_main and
examples, in both layouts; the JSON itself has a version, a table of files for the
origins, tags where a field may hold several classes, "inf" for infinity; `from_json`
refuses what is not an IR program of this version, with an `IRFormatError`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from serq import api, ir
from serq.diagnostics import Span

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
PROGRAMS = [
    *sorted((CORPUS / "valid").glob("*.sq")),
    *sorted((CORPUS / "valid_main").glob("*.sq")),
    *sorted((ROOT / "examples").glob("*.sq")),
]
S = Span("a.sq", 10, 14, 2, 3, 2, 7)
T = Span("lib/b.sq", 0, 3, 1, 1, 1, 4)


def _linked(path: Path) -> ir.Program:
    text = path.read_text(encoding="utf-8")
    kernel, expanded = api.expand_source(text, str(path))
    if kernel is None or expanded:  # a program that does not expand is the expander's test
        pytest.skip(f"does not expand: {expanded[0].message if expanded else '?'}")
    program, diagnostics = api.link_source(text, str(path))
    assert [d.message for d in diagnostics] == []
    assert program is not None
    return program


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_program_round_trips(path):
    program = _linked(path)
    assert ir.from_json(ir.to_json(program)) == program
    assert ir.from_json(ir.to_json(program, indent=2)) == program


def small_program(**changes) -> ir.Program:
    svc = ir.Ref("stage", 0, 1, None, S)
    kv = ir.Ref("pool", 0, 2, ir.Attr(9), T)
    session = (
        ir.Set(9, ir.Draw("exp", (ir.Num(2.0),), S), S),
        ir.Hold(
            (ir.HoldPool(kv, ir.Num(1.0), None, S),),
            None,
            3,
            ir.Num(math.inf),
            ir.Lease(kv, ir.Num(math.inf), S),
            S,
        ),
        ir.Branch(ir.Ctx("now"), 4, 5, S),
        ir.End(S),
    )
    fields = dict(
        attrs=(*ir.BUILTIN_ATTRS, "k"),
        hidden=(9,),
        observes=("ttft",),
        pools=tuple(
            ir.Pool("kv", i, math.inf, 16.0, ir.Lru(), "lifo", ir.By(()), None, None, S)
            for i in range(2)
        ),
        stages=(ir.Stage("svc", None, ir.Fifo(2), S),),
        arrival=ir.Poisson(1.5, S),
        trace=None,
        init=0,
        turn=1,
        session=2,
        blocks=(
            (),
            (),
            session,
            (ir.Run((svc,), "plain", ir.Unary("-", ir.Num(-math.inf)), None, S),),
            (ir.Observe(0, ir.Observable("used", kv, (), S), S),),
            (),
        ),
        horizon=None,
        warmup=0.0,
        seed=7,
        arrivals=None,
        share="maxmin",
        gauges=(ir.Gauge("g", ir.Call("min", (ir.Num(1.0), ir.Num(2.0))), S),),
    )
    fields.update(changes)
    return ir.Program(**fields)


def test_a_program_written_by_hand_round_trips():
    program = small_program()
    text = ir.to_json(program)
    assert ir.from_json(text) == program
    assert ir.from_json(ir.to_json(program, indent=4)) == program


def test_the_top_level_has_the_version_and_the_files_of_the_origins():
    data = json.loads(ir.to_json(small_program()))
    assert data["version"] == ir.IR_VERSION
    assert data["files"] == ["a.sq", "lib/b.sq"]
    pool_ref = data["blocks"][2][1]["Hold"]["pools"][0]["pool"]
    assert pool_ref["origin"] == [1, 0, 3, 1, 1, 1, 4]
    assert pool_ref["index"] == {"Attr": 9}


def test_tags_only_where_a_field_may_hold_several_classes():
    data = json.loads(ir.to_json(small_program()))
    assert data["pools"][0]["evict"] == "Lru"  # a class without fields: its name
    assert data["pools"][0]["queue"] == {"keys": []}  # one class possible: untagged
    assert data["stages"][0]["kind"] == {"Fifo": 2}  # one field: the tag holds its value
    assert data["arrival"] == {"Poisson": {"rate": 1.5, "origin": [0, 10, 14, 2, 3, 2, 7]}}
    assert data["blocks"][2][0]["Set"]["value"] == {
        "Draw": {"dist": "exp", "args": [{"Num": 2.0}], "origin": [0, 10, 14, 2, 3, 2, 7]}
    }
    assert data["blocks"][2][3] == {"End": [0, 10, 14, 2, 3, 2, 7]}


def test_infinities_are_strings():
    data = json.loads(ir.to_json(small_program()))
    assert data["pools"][0]["cap"] == "inf"
    assert data["blocks"][3][0]["Run"]["work"] == {"Unary": {"op": "-", "operand": {"Num": "-inf"}}}
    assert math.isinf(ir.from_json(ir.to_json(small_program())).pools[0].cap)


def test_nan_is_never_written():
    with pytest.raises(ValueError, match="NaN"):
        ir.to_json(small_program(warmup=math.nan))


def test_the_indented_layout_keeps_short_values_on_one_line():
    text = ir.to_json(small_program(), indent=2)
    assert '"files": ["a.sq", "lib/b.sq"],' in text
    assert '"origin": [0, 10, 14, 2, 3, 2, 7]' in text
    assert all(len(line) <= 100 for line in text.splitlines())
    assert "\n" not in ir.to_json(small_program())


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(version=ir.IR_VERSION + 1), "IR version"),
        (lambda d: d.pop("version"), "IR version None"),
        (lambda d: d.update(files="a.sq"), "`files`"),
        (lambda d: d.pop("seed"), r"missing fields \['seed'\]"),
        (lambda d: d.update(colour=1), r"unknown fields \['colour'\]"),
        (lambda d: d.update(seed=1.5), "1.5 is not int"),
        (lambda d: d.update(seed=True), "true is not int"),
        (lambda d: d.update(warmup="1"), '"1" is not float'),
        (lambda d: d.update(horizon="-inf"), None),
        (lambda d: d["stages"][0].update(kind={"Lru": []}), "is not one of Fifo"),
        (lambda d: d["stages"][0].update(kind="Turn"), "is not one of Fifo"),
        (lambda d: d["stages"][0].update(origin=[5, 0, 0, 1, 1, 1, 1]), "not an origin span"),
        (lambda d: d["stages"][0].update(origin=[0, 3, 1, 1, 1, 1, 1]), "bad span offsets"),
        (lambda d: d.update(arrival=None, trace=None, pools=None), "null where"),
    ],
)
def test_from_json_refuses_what_is_not_an_ir_program(mutate, message):
    data = json.loads(ir.to_json(small_program()))
    mutate(data)
    if message is None:  # "-inf" is a float; the rest of the program is fine
        assert ir.from_json(json.dumps(data)).horizon == -math.inf
        return
    with pytest.raises(ir.IRFormatError, match=message):
        ir.from_json(json.dumps(data))


@pytest.mark.parametrize("text", ["", "[1, 2]", "{", "null"])
def test_from_json_refuses_text_that_is_no_program(text):
    with pytest.raises(ir.IRFormatError):
        ir.from_json(text)


def test_every_ir_class_is_frozen_and_slotted():
    for cls in [ir.Num, ir.Ref, ir.Hold, ir.Pool, ir.Step, ir.Program, ir.Lru]:
        assert "__slots__" in vars(cls)
        assert cls.__dataclass_params__.frozen
    with pytest.raises(AttributeError):
        small_program().seed = 2  # type: ignore[misc]


def test_ir_nodes_work_in_match_statements():
    match ir.Binary("+", ir.Num(1.0), ir.Attr(3)):
        case ir.Binary("+", ir.Num(a), ir.Attr(slot)):
            assert (a, slot) == (1.0, 3)
        case _:
            pytest.fail("no match")
