"""Record vLLM's own scheduler's outcomes on the scenarios of tests/oracle/vllm_scenarios.py,
as data for tests/oracle/test_vllm_real.py (which needs no vLLM).

Run by hand, in an environment with vLLM installed (not the test suite's: vLLM brings
torch and some hundred packages). On this machine (CPU only, no hub), vLLM 0.30.0 and,
beside it, 0.34.0's own package:

    python -m venv /tmp/vllmenv
    /tmp/vllmenv/bin/pip install vllm==0.30.0
    /tmp/vllmenv/bin/pip uninstall -y torchvision torchaudio torchcodec  # mismatched builds
    /tmp/vllmenv/bin/pip install --no-deps --target /tmp/vllm034 vllm==0.34.0
    /tmp/vllmenv/bin/python scripts/record_vllm_real.py --family plain --count 300
    PYTHONPATH=/tmp/vllm034 /tmp/vllmenv/bin/python scripts/record_vllm_real.py \
        --family plain --count 300 --alone

writes tests/oracle/vllm_real/<vLLM version>/<family>[-<clock>].json.gz. `--clock a100`: each
step lasts what spec §8's fit of the A100 engine says of its batch and sessions send and
think in ticks of 30 ms, instead of the step clock. `--policy priority`: vLLM's priority
policy, each session's priority drawn by `vllm_scenarios.with_priority` (files
`priority-<family>...`; the model knows only FCFS, so it is not compared);
`--policy priority-turn` the same policy with a priority drawn for each turn by
`vllm_scenarios.with_turn_priority` (files `priority-turn-<family>...`). `--alone`: the
long-prefill threshold does not cap a request that is alone (running or waiting as the step begins),
as lib/vllm.sq's `long_prefill` writes it and as vLLM 0.34's scheduler does (0.30's caps
it anyway: record 0.30 without it). A scenario is left out, and counted, when vLLM cannot
run it as the model does: a budget below `max_num_seqs` (vLLM refuses the configuration)
or a request whose prompt needs more blocks than the pool has (the model and serQ refuse
the request; vLLM would keep it waiting for ever). It prints a tally and, for each
recorded scenario where the model (tests/oracle/vllm_model.py) parts from vLLM, the
first difference. `--keep FILE SEEDS --out OUT` copies some scenarios of a recorded file
(the committed files with every token's time are such subsets). Each record also keeps
every request's output tokens' steps (`encode_tokens`: `tokens`, and on a clock of
seconds `ends`), for the inter-token latencies; files recorded before round 20 have
neither, and are read as they are.
scripts/check_vllm_real.py runs serq on a recorded file.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracle"))
import vllm_model  # noqa: E402
import vllm_scenarios  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests" / "oracle" / "vllm_real"
# the step clock, and spec §8's fit of the A100 engine (c = 13.9 ms, d = 41 us, e = 0.138
# us, a = 51.5 us, b = 4.02 ns) with sends and thinks in ticks of 30 ms: the driver sums
# a step's cost as serQ's engine does, in the same order, so every time is the same float
CLOCKS = {
    "steps": vllm_model.STEPS,
    "a100": vllm_model.Clock(0.03, 0.0139, 41e-6, 0.138e-6, 51.5e-6, 4.02e-9),
}
FAMILIES = {
    "plain": vllm_scenarios.generate,
    "edge": vllm_scenarios.generate_edge,
    "domain": vllm_scenarios.generate_domain,
    "large": vllm_scenarios.generate_large,
    "stop": vllm_scenarios.generate_stop,
    "burst": vllm_scenarios.generate_burst,
    # two hand-made scenarios of the priority policy (record with --count 2)
    "victim": vllm_scenarios.scheduled_victim,
}
SIZES = {"victim": 2}  # the families of a fixed number of scenarios, 0 to size - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--family", choices=sorted(FAMILIES), default="plain")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--alone", action="store_true", help="no cap for a request alone")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="steps")
    parser.add_argument(
        "--policy",
        choices=("fcfs", "priority", "priority-turn"),
        default="fcfs",
        help="vLLM's scheduling policy (priority: vllm_scenarios.with_priority, a priority "
        "a session; priority-turn: the priority policy, vllm_scenarios.with_turn_priority, "
        "a priority a turn)",
    )
    parser.add_argument("--out", help="default: tests/oracle/vllm_real/VERSION/FAMILY.json.gz")
    parser.add_argument(
        "--keep",
        nargs=2,
        metavar=("FILE", "SEEDS"),
        help="no recording: write to --out the scenarios SEEDS (k,k,...) of a recorded FILE",
    )
    args = parser.parse_args()
    size = SIZES.get(args.family)
    if size is not None and not 0 <= args.start < args.start + args.count <= size:
        parser.error(
            f"family {args.family} has {size} scenarios, 0 to {size - 1}: "
            f"--start {args.start} --count {args.count} asks for others"
        )
    if args.keep:
        keep(Path(args.keep[0]), {int(k) for k in args.keep[1].split(",")}, Path(args.out))
        return
    try:
        import vllm_real  # vLLM, with the environment it needs here
    except ImportError as e:
        sys.exit(f"record_vllm_real: vLLM cannot be imported here ({e}); see --help")

    tally: Counter[str] = Counter()
    records = []
    for k in range(args.start, args.start + args.count):
        scenario = FAMILIES[args.family](k)
        if scenario.config.policy != "fcfs":
            pass  # a family with priorities of its own (`victim`) keeps them
        elif args.policy == "priority":
            scenario = vllm_scenarios.with_priority(k, scenario)
        elif args.policy == "priority-turn":
            scenario = vllm_scenarios.with_turn_priority(k, scenario)
        scenario = dataclasses.replace(
            scenario, config=dataclasses.replace(scenario.config, alone=args.alone)
        )
        c = scenario.config
        if c.budget < c.max_seqs:
            tally["budget below max_seqs"] += 1
            continue
        fcfs = dataclasses.replace(scenario, config=dataclasses.replace(c, policy="fcfs"))
        if vllm_model.simulate(fcfs).rejections:  # a prompt above the pool: any policy
            tally["a request that can never fit"] += 1
            continue
        clock = CLOCKS[args.clock]
        driver = vllm_real.Driver(scenario, clock)
        real = driver.run()
        # the model knows no policy but FCFS (tests/sim/NOTES.md §47)
        known = clock == vllm_model.STEPS and c.policy == "fcfs"
        model = vllm_model.simulate(scenario) if known else real
        if model != real:
            tally["model differs"] += 1
            print(k, "model differs:", first_difference(model, real), flush=True)
        tally["recorded"] += 1
        record = {"k": k, "scenario": encode(scenario), "real": encode_result(real)}
        record.update(encode_tokens(driver, clock != vllm_model.STEPS))
        records.append(record)
    data = {
        "vllm": vllm_real.VERSION,
        "family": args.family,
        "alone": args.alone,
        **({"policy": "priority"} if args.policy != "fcfs" else {}),
        **({"per_turn": True} if args.policy == "priority-turn" else {}),
        "clock": dataclasses.asdict(CLOCKS[args.clock]),
        "start": args.start,
        "count": args.count,
        "scenarios": records,
    }
    name = args.family if args.clock == "steps" else f"{args.family}-{args.clock}"
    if args.policy != "fcfs":
        name = f"{args.policy}-{name}"
    out = Path(args.out or DATA / vllm_real.VERSION / f"{name}.json.gz")
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, separators=(",", ":")) + "\n"
    out.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(dict(tally), "written to", out)


def keep(path: Path, seeds: set[int], out: Path) -> None:
    """A recorded file's scenarios `seeds` only (a small file to commit), as recorded."""
    data = json.loads(gzip.decompress(path.read_bytes()))
    data["scenarios"] = [r for r in data["scenarios"] if r["k"] in seeds]
    if len(data["scenarios"]) != len(seeds):
        missing = seeds - {r["k"] for r in data["scenarios"]}
        sys.exit(f"record_vllm_real: {path} has no scenario {sorted(missing)}")
    data["kept"] = sorted(seeds)  # of start..start + count
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, separators=(",", ":")) + "\n"
    out.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(len(seeds), "scenarios written to", out, out.stat().st_size, "bytes")


def first_difference(a: vllm_model.Result, b: vllm_model.Result) -> str:
    for key in sorted(set(a.requests) | set(b.requests)):
        if a.requests.get(key) != b.requests.get(key):
            return f"request {key}: {a.requests.get(key)} vs {b.requests.get(key)}"
    return f"totals {(a.preemptions, a.iterations)} vs {(b.preemptions, b.iterations)}"


def encode(scenario: vllm_model.Scenario) -> dict:
    """The scenario as plain data (`decode` in tests/oracle/test_vllm_real.py)."""
    return {
        # what vLLM is configured with (the model's own variants are not the scenario's)
        "config": {
            key: value
            for key, value in dataclasses.asdict(scenario.config).items()
            if key not in ("first_chunk", "one_queue")
            and not (key == "policy" and value == "fcfs")  # as before the policy
        },
        "sessions": [
            [
                s.at,
                [
                    [
                        t.new,
                        t.out,
                        t.think,
                        int(t.forced),
                        *([t.stop] if t.stop or t.priority is not None else []),
                        *([t.priority] if t.priority is not None else []),
                    ]
                    for t in s.turns
                ],
                *([s.priority] if scenario.config.policy != "fcfs" else []),
            ]
            for s in scenario.sessions
        ],
    }


def encode_result(result: vllm_model.Result) -> dict:
    return {
        "requests": [[*key, *dataclasses.astuple(o)] for key, o in result.requests.items()],
        "preemptions": result.preemptions,
        "rejections": result.rejections,
        "iterations": result.iterations,
    }


def encode_tokens(driver: Any, seconds: bool) -> dict:
    """Every request's output tokens, compactly: `tokens`, a row a request, [session, turn,
    d, n, d, n, ...], its tokens' steps as runs of n steps each d after the one before
    (the first d from 0), where a step is the time on the step clock, else an index into
    `ends`, every step's end (so every time is the driver's float). Read back by
    tests/oracle/test_vllm_real.decode_tokens."""
    rows = []
    for info in driver.requests.values():
        row = [info["session"], info["turn"]]
        before = 0
        for key in info["tokens"]:
            d = key - before
            before = key
            if len(row) > 2 and row[-2] == d:
                row[-1] += 1
            else:
                row += [d, 1]
        rows.append(row)
    rows.sort()
    return {"tokens": rows, **({"ends": driver.ends} if seconds else {})}


if __name__ == "__main__":
    main()
