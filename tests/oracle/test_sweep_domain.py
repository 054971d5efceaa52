"""A cheap slice of tests/oracle/sweep_domain.py: a few user programs' parameters over the
domain, on the three execution paths, in `serq sweep`, and one deterministic program in
the reference (the full sweep is the script, see its docstring)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import sweep_domain  # noqa: E402

# (program, parameter, values, run settings): the load around saturation, a pool's cap
# of 0, one block and inf, a chunk of 0 ("no cap") and 1e-9, a batch limit of 1, a
# population of 1, and values the grammar refuses
SLICE = (
    ("examples/mm1.sq", "lambda", ("0.99", "1", "1.01", "3", "0", "inf", "0/0"), 60.0),
    ("examples/closed.sq", "N", ("1", "0", "0.5", "-1"), 40.0),
    ("examples/vllm.sq", "blocks", ("0", "1", "inf", "-1"), 30.0),
    ("examples/vllm.sq", "chunk", ("0", "-0", "1e-9", "-inf"), 30.0),
    ("examples/vllm.sq", "sweep_cap0", ("1", "0", "1e-9"), 30.0),
)
GOOD = ("ran", "serq-error")


def _source(tmp_path: Path, name: str, main: bool = False) -> sweep_domain.mutants.Source:
    """The program `name` copied into `tmp_path` with the files it uses."""
    target = tmp_path / name
    folder = Path(name).parts[0]
    if not (tmp_path / folder).exists():
        shutil.copytree(ROOT / folder, tmp_path / folder)
    text = target.read_text(encoding="utf-8")
    return sweep_domain.mutants.Source(
        name, target, main, sweep_domain.mutants.RANDOM.search(text) is not None
    )


@pytest.mark.parametrize(("name", "parameter", "texts", "horizon"), SLICE)
def test_paths_and_sweep_agree(tmp_path, name, parameter, texts, horizon):
    source = _source(tmp_path, name)
    text = source.path.read_text(encoding="utf-8")
    found = {p.name: p for p in sweep_domain.parameters(text, source.main)}[parameter]
    body = found.text or text
    path = source.path
    if found.text is not None:
        path = source.path.with_name(f"_sweep_{found.name}.sq")
        path.write_text(body, encoding="utf-8")
    settings = {"horizon": horizon, "warmup": 0.0}
    values = [found.base, *texts]
    outcomes = [
        sweep_domain.judge(source, str(path), body, {"sets": {parameter: v}}, settings, "none")
        for v in values
    ]
    assert [o.verdict for o in outcomes if o.verdict not in GOOD] == [], [
        (v, o.verdict, o.detail) for v, o in zip(values, outcomes, strict=True)
    ]
    rows = sweep_domain.sweep_rows(body, str(path), found, values, settings)
    assert sweep_domain.sweep_check(outcomes, rows) is None
    # the sweep refuses the grid, naming the values, exactly when one does not compile
    assert isinstance(rows, str) == any(not o.compiled for o in outcomes), rows
    good = [v for v, o in zip(values, outcomes, strict=True) if o.compiled]
    rows = sweep_domain.sweep_rows(body, str(path), found, good, settings)
    assert not isinstance(rows, str), rows
    assert sweep_domain.sweep_check([o for o in outcomes if o.compiled], rows) is None


def test_a_deterministic_program_against_the_reference(tmp_path):
    source = _source(tmp_path, "examples/oracle/chunk_cap.sq")
    text = source.path.read_text(encoding="utf-8")
    settings = {"horizon": 400.0, "warmup": 0.0}
    verdicts = {}
    for value in ("0", "-1", "1e-9", "1", "64", "inf"):
        outcome = sweep_domain.judge(
            source, str(source.path), text, {"sets": {"chunk": value}}, settings, "all"
        )
        verdicts[value] = (outcome.verdict, outcome.detail)
    assert all(v == "same" for v, _ in verdicts.values()), verdicts


def test_the_parameters_a_user_sweeps():
    text = (ROOT / "examples/vllm.sq").read_text(encoding="utf-8")
    names = [p.name for p in sweep_domain.parameters(text, False)]
    assert names[:3] == ["Lambda", "Z", "bs"] and "sweep_cap0" in names
    lifted = {p.name: p for p in sweep_domain.parameters(text, False)}["sweep_cap0"]
    assert "let sweep_cap0 = 32;" in lifted.text and "cap sweep_cap0;" in lifted.text
    main = (ROOT / "examples/vocabulary/mg1_args.sq").read_text(encoding="utf-8")
    assert [p.name for p in sweep_domain.parameters(main, True)][:3] == ["rate", "mean", "scv"]
    assert sweep_domain.values("0.8")[:1] == ["0.8"] and "1" in sweep_domain.values("0.8")


def test_a_folder_alone_every_way(tmp_path, monkeypatch):
    """`--folder` lists that folder's programs alone (not the spec's), and `--every-way`
    runs each value twice more, stepped and checking the invariants, as the others."""
    found = sweep_domain.programs(tmp_path, None, ["tests/oracle/spec_walk"])
    names = {s.name for s in found}
    assert "tests/oracle/spec_walk/w_closed_ps.sq" in names
    assert all(n.startswith("tests/oracle/spec_walk/") for n in names)
    assert not any(n.endswith(".csv") or "/lib/" in n for n in names)
    monkeypatch.setattr(sweep_domain, "EVERY_WAY", True)
    text = (ROOT / "tests/oracle/spec_walk/step_clauses.sq").read_text(encoding="utf-8")
    for value in ("8", "0", "inf"):
        verdict, detail, _, _ = sweep_domain.serq_paths(
            text, "step_clauses.sq", {"sets": {"ch": value}}, {"horizon": 2.0}
        )
        assert verdict == "ok", (value, detail)
