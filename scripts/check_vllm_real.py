"""serq against vLLM's recorded outcomes (scripts/record_vllm_real.py's files), scenario by
scenario: the search that tests/oracle/test_vllm_real.py pins for the committed files,
for files recorded anywhere (fresh ranges, other clocks, other vLLM versions). Needs no
vLLM.

    PYTHONPATH=. python scripts/check_vllm_real.py /tmp/plain-a100.json.gz [...] [--paths]

prints a line per scenario where serq's program (lib/vllm.sq's `vllm_request`, on the
file's clock) parts from vLLM, with the first request that differs (or, the requests the
same, the first of the report's figures that differs: `vllm_scenarios.FIGURES`, the
time to first token, the finish time, the end-to-end latency, the preemptions, the
prefix-cache hit tokens and the mean inter-token latency as a report gives them; for a
file recorded with every token's time, from round 20 on, also the inter-token latencies'
p50 and p99 as the report gives them and every latency the engine counted, against
vLLM's gaps between a request's consecutive tokens), and a tally per file.
`--paths` also runs the interpreter and one iteration at a time. `--warmup F` compares
only the inter-token latencies, with the report measured from the time of the token F of
the way through a scenario's tokens (a token at the warm-up counts its latency, as the
report counts one), against vLLM's gaps that end at or after it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracle"))
import test_vllm_real  # noqa: E402
import vllm_compare  # noqa: E402
import vllm_scenarios  # noqa: E402
from vllm_model import Clock  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--paths", action="store_true", help="every serq path, not the default")
    parser.add_argument(
        "--warmup",
        type=float,
        help="only the inter-token latencies, measured from a warm-up at the token time "
        "this fraction of the way through a scenario's tokens (files with token times)",
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="vllm-real-"))
    runs = [(True, True)] + ([(False, True), (True, False)] if args.paths else [])
    for path in args.files:
        data = test_vllm_real.load(path)
        clock = Clock(**data["clock"])
        tally: Counter[str] = Counter()
        for record in data["scenarios"]:
            scenario = test_vllm_real.decode(record["scenario"])
            real = vllm_scenarios.comparable(test_vllm_real.decode_result(record["real"]))
            program = folder / f"{data['family']}{record['k']}.sq"
            if args.warmup is not None:
                tally[warmed(program, scenario, clock, record, args.warmup, runs)] += 1
                continue
            program.write_text(vllm_scenarios.program(scenario, folder, program.stem, clock))
            parted = None
            tokens = test_vllm_real.decode_tokens(record)
            if tokens is not None:
                why = test_vllm_real.tokens_difference(
                    test_vllm_real.decode_result(record["real"]), scenario, tokens
                )
                if why is not None:
                    tally["tokens do not fit"] += 1
                    print(f"{path.name} {record['k']}: vLLM's tokens: {why}", flush=True)
            expected = vllm_scenarios.figures(real, scenario, clock, tokens)
            for codegen, fast_forward in runs:
                ours, figures = vllm_compare.run_serq(
                    program, scenario, codegen, fast_forward, clock, figures=True
                )
                if ours != real:
                    why = ours if isinstance(ours, str) else test_vllm_real.difference(real, ours)
                    parted = f"codegen={codegen} fast_forward={fast_forward}: {why}"
                    break
                why = vllm_scenarios.figures_difference(expected, figures)
                if why is not None:
                    parted = f"codegen={codegen} fast_forward={fast_forward}: report {why}"
                    break
            tally["same" if parted is None else "differ"] += 1
            if parted is not None:
                print(f"{path.name} {record['k']}: {parted}", flush=True)
        print(f"{path}: vLLM {data['vllm']}, {dict(tally)}", flush=True)


def warmed(
    program: Path, scenario: Any, clock: Clock, record: dict, fraction: float, runs: list
) -> str:
    """The report's inter-token latencies (mean, p50, p99, every one) with a warm-up at a
    token's time against vLLM's gaps whose later token comes at or after it."""
    tokens = test_vllm_real.decode_tokens(record)
    if tokens is None:
        return "no token times"
    times = sorted(t for ts in tokens.values() for t in ts)
    if not times:
        return "no tokens"
    warmup = times[min(int(fraction * len(times)), len(times) - 1)]
    program.write_text(
        vllm_scenarios.program(scenario, program.parent, program.stem, clock, warmup)
    )
    gaps = vllm_scenarios.token_gaps(tokens, warmup)
    expected = {
        "itl": [sum(gaps) / len(gaps)] if gaps else [],
        "itl_p50": vllm_scenarios.nearest_rank(gaps, 0.5),
        "itl_p99": vllm_scenarios.nearest_rank(gaps, 0.99),
        "itl_gaps": gaps,
    }
    for codegen, fast_forward in runs:
        _, figures = vllm_compare.run_serq(
            program, scenario, codegen, fast_forward, clock, figures=True
        )
        if figures is None:
            print(f"{program.stem}: warm-up {warmup}: {_}", flush=True)
            return "differ"
        why = vllm_scenarios.figures_difference(expected, figures)
        if why is not None:
            print(
                f"{program.stem}: warm-up {warmup}: codegen={codegen} "
                f"fast_forward={fast_forward}: report {why}",
                flush=True,
            )
            return "differ"
    return "same"


if __name__ == "__main__":
    main()
