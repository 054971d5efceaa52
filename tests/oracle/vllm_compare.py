"""The vLLM scheduler model (vllm_model.py) against serq (generated code and interpreter,
fast-forward on and off) and pyserq 0.1.2 on one scenario (vllm_scenarios.py), request
for request; the search over many scenarios is scripts/search_vllm_model.py, its CI
sample tests/oracle/test_vllm_model.py.

`compare(scenario, folder)` writes the program, runs every side and returns each side's
`Result` (or an error string) and a verdict: "same" when all agree, else which sides
part: "admission", "one-queue" or "admission-one-queue" (serq and pyserq agree with the
model once it follows the serQ program's rule at admission, `Config.first_chunk` False,
or takes the head of one free queue in LRU order, `Config.one_queue` True, which vLLM
does not: either is a finding against serq), "serq-paths" (serq's four runs differ among
themselves), "model" (serq and pyserq agree against the model), "serq" (the model and
pyserq against serq), "pyserq" (the model and serq against pyserq), "all" (three ways),
or "<side>-error".
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import differential
import vllm_model
import vllm_scenarios

# The model as vLLM (first) and with the rules where a serQ program or pool could part
# from vLLM (tests/sim/NOTES.md §23, §38): the allocation at admission, one free queue.
VARIANTS: dict[str, dict[str, bool]] = {
    "model": {},
    "model-admission": {"first_chunk": False},
    "model-one-queue": {"one_queue": True},
    "model-admission-one-queue": {"first_chunk": False, "one_queue": True},
}
SERQ_RUNS = {
    "serq": {"codegen": True, "fast_forward": True},
    "serq-interp": {"codegen": False, "fast_forward": True},
    "serq-steps": {"codegen": True, "fast_forward": False},
    "serq-interp-steps": {"codegen": False, "fast_forward": False},
}


def run_serq(
    path: Path,
    scenario: vllm_model.Scenario,
    codegen: bool,
    fast_forward: bool,
    clock: vllm_model.Clock = vllm_model.STEPS,
    figures: bool = False,
) -> Any:
    """serq's Result of the program at `path`, or the error's text; on a clock other than
    the step clock its times exact (the program's are: `record_vllm_real.CLOCKS`). With
    `figures`, (the Result, the report's figures: `vllm_scenarios.report_figures`)."""
    import serq

    try:
        with _engine_gaps() as gaps:
            report = serq.run(serq.compile(str(path), codegen=codegen), fast_forward=fast_forward)
    except Exception as e:  # a refused program or a failed run: a finding, not a crash
        error = f"error: {type(e).__name__}: {str(e)[:200]}"
        return (error, None) if figures else error
    if clock == vllm_model.STEPS:
        plain = differential.outcome(report)
        result = vllm_scenarios.outcome(plain, scenario)
    else:
        plain = _exact(report)
        result = vllm_scenarios.outcome(plain, scenario, clock)
    if not figures:
        return result
    # the engine's inter-token latencies (the stage row's mean), for the report's figures
    # and its percentiles, and every latency the engine counted (`_engine_gaps`)
    plain["mean_itl"] = report.stages[0].mean_itl
    plain["itl_p50"] = report.stages[0].itl_p50
    plain["itl_p99"] = report.stages[0].itl_p99
    plain["itl_gaps"] = [g for g, n in gaps["engine"].items() for _ in range(n)]
    return result, vllm_scenarios.report_figures(plain)


@contextlib.contextmanager
def _engine_gaps() -> Iterator[dict[str, Counter[float]]]:
    """Every inter-token latency each stage counted, by stage name, as the recorder keeps
    them for its stage row (`TokenGaps`: the report gives their mean, p50 and p99 only),
    while the block runs."""
    from serq.sim import recorder

    kept: dict[str, Counter[float]] = {}
    original = recorder.StatsRecorder._stage_row

    def row(self: Any, member: Any, s: Any, end: float, average: Any) -> Any:
        kept[member.name] = Counter(s.itl.merged())
        return original(self, member, s, end, average)

    recorder.StatsRecorder._stage_row = row  # type: ignore[method-assign]
    try:
        yield kept
    finally:
        recorder.StatsRecorder._stage_row = original  # type: ignore[method-assign]


def _exact(report: Any) -> dict[str, Any]:
    """`differential.outcome`'s data with every sample and time as it is."""
    plain = differential.outcome(report)
    for name in plain["observes"]:
        o = report.observe(name)
        plain["observes"][name] = [list(o.sessions), list(o.samples), list(o.times)]
    return plain


def run_pyserq(path: Path, scenario: vllm_model.Scenario, timeout: float = 120.0) -> Any:
    """pyserq 0.1.2's Result of the program at `path` (in a child process), or the error."""
    theirs = differential.reference(str(path), timeout)
    if "error" in theirs:
        return "error: " + theirs["error"]
    return vllm_scenarios.outcome(theirs["ok"], scenario)


def compare(
    scenario: vllm_model.Scenario, folder: Path, name: str = "scenario", reference: bool = True
) -> tuple[str, dict[str, Any]]:
    """(verdict, every side's Result or error) for `scenario`, written to folder/name.sq."""
    path = folder / f"{name}.sq"
    path.write_text(vllm_scenarios.program(scenario, folder, name))
    sides: dict[str, Any] = {}
    for side, changes in VARIANTS.items():
        which = replace(scenario, config=replace(scenario.config, **changes))
        try:
            sides[side] = vllm_scenarios.comparable(vllm_model.simulate(which))
        except RuntimeError as e:
            sides[side] = f"error: {e}"
    for side, how in SERQ_RUNS.items():
        sides[side] = run_serq(path, scenario, **how)
    if reference:
        sides["pyserq"] = run_pyserq(path, scenario)
    return verdict(sides), sides


def verdict(sides: dict[str, Any]) -> str:
    """How the sides part (module docstring)."""
    for side, got in sides.items():
        if isinstance(got, str):
            return f"{side}-error"
    if any(sides[s] != sides["serq"] for s in SERQ_RUNS):
        return "serq-paths"
    model, ours = sides["model"], sides["serq"]
    theirs = sides.get("pyserq", ours)
    if model == ours == theirs:
        return "same"
    for variant in VARIANTS:
        if sides[variant] == ours == theirs:
            return variant.replace("model-", "")
    if ours == theirs:
        return "model"
    if model == theirs:
        return "serq"
    if model == ours:
        return "pyserq"
    return "all"


def first_difference(a: vllm_model.Result, b: vllm_model.Result) -> str:
    """The first request (or total) where two results differ, for a report line."""
    for key in sorted(set(a.requests) | set(b.requests)):
        x, y = a.requests.get(key), b.requests.get(key)
        if x != y:
            return f"request {key}: {x} vs {y}"
    return (
        f"totals (preemptions, rejections, iterations): "
        f"{(a.preemptions, a.rejections, a.iterations)} vs {(b.preemptions, b.rejections, b.iterations)}"
    )
