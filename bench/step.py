"""Step engine speed: examples/vllm.sq (vLLM v1 under a multi-turn chat, spec §7) for 1,000
simulated seconds, light and loaded, next to pyserq 0.1.2 (the reference) in one process.

Run by hand from the repository root:

    PYTHONPATH=. python bench/step.py

Each case is compiled once per implementation and run in three rounds in which pyserq,
serq and serq without fast-forwarding take turns (`bench.timing.cpu_best_each`, so that a
slow spell of the machine falls on every side alike); the best run time of each
(compilation excluded) is printed with the ratio serq / pyserq, for serq with
fast-forwarding (the default) and without it, with the share of iterations the
fast-forward skipped and the iterations serq still planned one at a time per turn; then
a cProfile of serq on the loaded case (top 15 by internal time).

The example at its own defaults (Lambda 0.5, 1,000 blocks: issue 18's "example
defaults"), then two workloads, each light and loaded:

- the example as it is: 10 ms per iteration plus 50 us per token, outputs of about 100
  tokens, so about 50 iterations per simulated second and about 80 per turn; the
  per-turn work (admission, prefill chunks, session statements) dominates both
  simulators' time;
- "design rate": the same program at the iteration rate the design note
  (design/step-fast-forward.md) measured for the spec's §7 program, about 590 per
  simulated second with about one resident at light load: 0.8 ms per iteration plus
  0.2 ms per token and outputs of about 1,200 tokens (`--set c_it=0.0008
  --set c_tok=0.0002 --set out_mean=1200`), about 500 iterations per second and 1,300 per turn.

And "fractional": bench/vllm_fractional.sq, the reference's multi-turn program, for its own
300 simulated seconds: token counts drawn without `floor` (prompts of uniform(1000, 3000)
then exp(500), outputs of exp(200) + 1) and the cost `c0 + max(omega + beta * (kv_decode +
kv_prefill), tokens * a)`, about 170,000 iterations; fast-forwarding must skip at least
90% of them (issue 18 item 5).

And "replicas": bench/replicas.sq, four replicas of the example's engine behind a router,
each at the example's default load, for 1,000 simulated seconds: the engines' iterations
interleave, so they are fast-forwarded together (`serq.sim.joint`).
"""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyserq  # noqa: E402

import serq  # noqa: E402
from bench.timing import cpu_best_each  # noqa: E402

PROGRAM = str(Path(__file__).resolve().parents[1] / "examples" / "vllm.sq")
FRACTIONAL = str(Path(__file__).resolve().parent / "vllm_fractional.sq")
REPLICAS = str(Path(__file__).resolve().parent / "replicas.sq")
HORIZON = 1000
# Issue 10's two loads: light (Lambda 0.3, 10,000 blocks) and loaded (Lambda 0.5, 3,000
# blocks, the cache evicts); "heavy" (Lambda 2, 250 blocks) also preempts.
LIGHT = {"Lambda": 0.3, "blocks": 10000}
LOADED = {"Lambda": 0.5, "blocks": 3000}
DESIGN_RATE = {"c_it": 0.0008, "c_tok": 0.0002, "out_mean": 1200}
CASES = {
    "defaults": {},  # the example as it is: Lambda 0.5, 1,000 blocks
    "light": LIGHT,
    "loaded": LOADED,
    "heavy": {"Lambda": 2.0, "blocks": 250},
    "light, design rate": LIGHT | DESIGN_RATE,
    "loaded, design rate": LOADED | DESIGN_RATE,
    "fractional": None,  # FRACTIONAL as it is, for its own horizon
    "replicas": REPLICAS,  # four engines, for HORIZON
}
REPEATS = 3


def compiled(implementation, sets: dict | str | None):
    """`implementation`'s (pyserq's or serq's) program of one case: the example with
    `sets`, FRACTIONAL (None) or the program at a path (a string)."""
    if sets is None:
        return implementation.compile(FRACTIONAL)
    if isinstance(sets, str):
        return implementation.compile(sets, horizon=HORIZON)
    return implementation.compile(PROGRAM, horizon=HORIZON, sets=sets)


def best_runs(sets: dict | None) -> tuple[list[float], object, object]:
    """The best of REPEATS run CPU times of one case for pyserq, serq and serq without
    fast-forwarding, taking turns in each round (`cpu_best_each`), and the last report of
    each implementation."""
    ours, theirs = compiled(serq, sets), compiled(pyserq, sets)
    reports = {}

    def keep(name, run):
        def call(program):
            reports[name] = run(program)

        return call

    times = cpu_best_each(
        [
            (keep("pyserq", pyserq.run), theirs),
            (keep("serq", serq.run), ours),
            (lambda program: serq.run(program, fast_forward=False), ours),
        ],
        REPEATS,
    )
    return times, reports["pyserq"], reports["serq"]


def summary(report) -> str:
    """Iterations, mean residents, preemptions and the mean hit rate, to show both ran the
    same load (summed over the engines and their pools where there are several)."""
    pools = list(report.pools)
    iterations = sum(s.iterations for s in report.stages)
    residents = sum(p.mean_holders for p in pools if p.name.startswith("reqs"))
    preemptions = sum(p.preemptions for p in pools if p.name.startswith("kv"))
    return (
        f"iterations {iterations:>7}  residents {residents:5.2f}  "
        f"preemptions {preemptions:>4}  hit {report.observe('hit_rate').mean:.3f}"
    )


def main() -> None:
    print(f"{PROGRAM} for {HORIZON} s, best of {REPEATS} (CPU time of the run only)")
    print(f"{'case':<20}{'pyserq s':>10}{'serq s':>10}{'ratio':>8}{'one by one':>12}{'ratio':>8}")
    for name, sets in CASES.items():
        (theirs, ours, slow), their_report, our_report = best_runs(sets)
        print(
            f"{name:<20}{theirs:>10.3f}{ours:>10.3f}{ours / theirs:>7.2f}x"
            f"{slow:>12.3f}{slow / theirs:>7.2f}x"
        )
        iterations = sum(s.iterations for s in our_report.stages)
        skipped = sum(s.skipped for s in our_report.stages)
        planned = (iterations - skipped) / max(our_report.turns, 1)
        print(f"  pyserq  {summary(their_report)}")
        print(
            f"  serq    {summary(our_report)}  skipped {skipped / iterations:.1%}"
            f"  planned {planned:.2f} a turn"
        )
    program = serq.compile(PROGRAM, horizon=HORIZON, sets=CASES["loaded"])
    profile = cProfile.Profile()
    profile.runcall(serq.run, program)
    print("\nserq, loaded case: top 15 by internal time")
    pstats.Stats(profile).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
