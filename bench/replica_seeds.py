"""The replica's collapse statistics over seeds, serq next to pyserq 0.1.2 (issue 16 item 6).

Run by hand from the repository root (scipy needed, as for the tests):

    PYTHONPATH=. python bench/replica_seeds.py [--lambda 1.7] [--seeds 40]
        [--horizon 400] [--warmup 40] [--replay 3]

Part one runs examples/replica.sq on both implementations for seeds 1..N at the given
load and horizon and prints, per statistic (mean hit rate, mean slot wait, TTFT, mean
live, arrivals, turns, evicted units, preemptions, engine utilisation), each side's
median and mean with the two-sided Mann-Whitney and KS p-values over seeds, then how
many seeds of each side collapse by a few thresholds, with Fisher's exact p.

Part two (--replay K) shows the engines agree on one workload: for the first K seeds of
each side it runs the replica with every draw observed (arrival times, n, o, more and
the think times: the run is the example's, seed for seed), writes that realised
workload as a trace, and replays it through both implementations (all sessions at time
0, each first thinking until its arrival, `ordered`), printing how many turns' hit rate
and TTFT equal the original run's, bit for bit. tests/sim/NOTES.md §12 has the figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyserq  # noqa: E402
from scipy import stats  # noqa: E402

import serq  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "replica.sq"
SIDES = {"serq": serq, "pyserq": pyserq}
STATISTICS = ("hit", "wait", "ttft", "live", "arrivals", "turns", "evicted", "preempt", "util")


def one_run(m, seed: int, horizon: float, warmup: float, sets: dict) -> dict[str, float]:
    """The statistics of one run of the example on implementation `m`."""
    r = m.run(m.compile(str(EXAMPLE), seed=seed, horizon=horizon, warmup=warmup, sets=sets))
    pools = {p.name: p for p in r.pools}
    (engine,) = [s for s in r.stages if s.name == "engine"]
    return {
        "hit": r.observe("hit_rate").mean,
        "wait": pools["reqs"].mean_wait,
        "ttft": r.observe("ttft").mean,
        "live": r.mean_live,
        "arrivals": r.arrivals,
        "turns": r.turns,
        "evicted": pools["kv"].evicted_units,
        "preempt": pools["kv"].preemptions,
        "util": engine.utilization,
    }


def sweep(args: argparse.Namespace) -> None:
    sets = {"Lambda": args.load}
    runs = {
        name: [one_run(m, s, args.horizon, args.warmup, sets) for s in range(1, args.seeds + 1)]
        for name, m in SIDES.items()
    }
    print(f"Lambda {args.load}, horizon {args.horizon}, warmup {args.warmup}, "
          f"seeds 1..{args.seeds} a side")
    for k in STATISTICS:
        ours = [r[k] for r in runs["serq"]]
        theirs = [r[k] for r in runs["pyserq"]]
        mw = stats.mannwhitneyu(ours, theirs, alternative="two-sided").pvalue
        ks = stats.ks_2samp(ours, theirs).pvalue
        print(f"  {k:9s} serq median {stats.scoreatpercentile(ours, 50):12.4f} "
              f"mean {sum(ours) / len(ours):12.4f} | pyserq median "
              f"{stats.scoreatpercentile(theirs, 50):12.4f} mean {sum(theirs) / len(theirs):12.4f}"
              f" | Mann-Whitney p {mw:.3f}, KS p {ks:.3f}")
    for label, test in (
        ("hit rate < 0.05", lambda r: r["hit"] < 0.05),
        ("hit rate < 0.10", lambda r: r["hit"] < 0.10),
        ("slot wait > 2 s", lambda r: r["wait"] > 2),
        ("slot wait > 5 s", lambda r: r["wait"] > 5),
    ):
        a = sum(map(test, runs["serq"]))
        b = sum(map(test, runs["pyserq"]))
        n = args.seeds
        p = stats.fisher_exact([[a, n - a], [b, n - b]]).pvalue
        print(f"  {label}: serq {a}/{n}, pyserq {b}/{n}, Fisher p {p:.3f}")


def probe_source() -> str:
    """The example with every draw observed; its runs are the example's, seed for seed."""
    src = EXAMPLE.read_text()
    for old, new in (
        ("init { set K = 0; }", "init { set K = 0; observe t0 = now; }"),
        ("    set arrived = now;\n",
         "    set arrived = now;\n    observe n_ = n;\n    observe o_ = o;\n"
         "    observe more_ = more;\n"),
        ("branch (more) { run think (~exp(Z)); turn; }",
         "branch (more) { set z = ~exp(Z); observe z_ = z; run think (z); turn; }"),
    ):
        assert old in src, old
        src = src.replace(old, new)
    return src


def replay_source(sessions: int, trace: str) -> str:
    """The example driven by `trace`: every session at 0, thinking until its arrival."""
    src = EXAMPLE.read_text()
    for old, new in (
        ("let Lambda = 0.6;    // sessions per second\n", ""),
        ("  arrive poisson(Lambda);\n  hidden o;\n",
         f'  arrive batch({sessions});\n  trace "{trace}" ordered;\n  hidden out;\n'),
        ("  turn { set n = 50 + floor(~exp(150)); set o = 10 + floor(~exp(60)); "
         "set more = ~bernoulli(0.7); }\n", ""),
        ("session {\n  turn;\n", "session {\n  turn;\n  run think (think);\n"),
        ("set prompt = K + n;", "set prompt = K + new;"),
        ("decode (o - 1)", "decode (out - 1)"),
        ("cache (prompt + o)", "cache (prompt + out)"),
        ("set K = prompt + o;", "set K = prompt + out;"),
        ("branch (more) { run think (~exp(Z)); turn; }",
         "branch (more) { turn; run think (think); }"),
    ):
        assert old in src, old
        src = src.replace(old, new)
    return src


def _table(report, name: str) -> dict[tuple[int, int], float]:
    o = report.observe(name)
    return {(int(s), int(t)): x for s, t, x in zip(o.sessions, o.turns, o.samples, strict=True)}


def replay(args: argparse.Namespace) -> None:
    sets = {"Lambda": args.load}
    probe = probe_source()
    with tempfile.TemporaryDirectory() as tmp:
        for source, m in SIDES.items():
            for seed in range(1, args.replay + 1):
                p = m.compile(source=probe, seed=seed, horizon=args.horizon, warmup=0, sets=sets)
                r = m.run(p)
                t0 = _table(r, "t0")
                arrival = {s: x for (s, _), x in t0.items()}
                n, o, more, z = (_table(r, k) for k in ("n_", "o_", "more_", "z_"))
                rows = []
                for s in sorted(arrival):
                    k, think = 1, arrival[s]
                    while (s, k) in n:
                        rows.append((s, k, n[s, k], o[s, k], think))
                        think = z.get((s, k), 1e9)  # past the horizon: cut off there
                        k += 1
                    if k == 1 or more[s, k - 1] == 1.0:  # a turn the horizon cut off
                        rows.append((s, k, 50.0, 10.0, think))
                trace = Path(tmp) / f"{source}_{seed}.csv"
                trace.write_text("session,turn,new,out,think\n" + "".join(
                    f"{s},{k},{a!r},{b!r},{c!r}\n" for s, k, a, b, c in rows))
                program = Path(tmp) / f"{source}_{seed}.sq"
                program.write_text(replay_source(len(arrival), str(trace)))
                hit, ttft = _table(r, "hit_rate"), _table(r, "ttft")
                for name, other in SIDES.items():
                    q = other.run(other.compile(str(program), horizon=args.horizon, warmup=0))
                    h, t = _table(q, "hit_rate"), _table(q, "ttft")
                    same_h = sum(h.get(k) == v for k, v in hit.items())
                    same_t = sum(t.get(k) == v for k, v in ttft.items())
                    print(f"  {source}'s workload, seed {seed}, replayed on {name}: hit rate "
                          f"{same_h}/{len(hit)} turns equal, TTFT {same_t}/{len(ttft)} "
                          f"(turns replayed {len(h)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lambda", dest="load", type=float, default=1.7)
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--horizon", type=float, default=400.0)
    ap.add_argument("--warmup", type=float, default=40.0)
    ap.add_argument("--replay", type=int, default=0)
    args = ap.parse_args()
    if args.seeds:
        sweep(args)
    if args.replay:
        replay(args)


if __name__ == "__main__":
    main()
