"""serq against vLLM's recorded outcomes (scripts/record_vllm_real.py's files), scenario by
scenario: the search that tests/oracle/test_vllm_real.py pins for the committed files,
for files recorded anywhere (fresh ranges, other clocks, other vLLM versions). Needs no
vLLM.

    PYTHONPATH=. python scripts/check_vllm_real.py /tmp/plain-a100.json.gz [...] [--paths]

prints a line per scenario where serq's program (lib/vllm.sq's `vllm_request`, on the
file's clock) parts from vLLM, with the first request that differs (or, the requests the
same, the first of the report's figures that differs: `vllm_scenarios.FIGURES`, the
time to first token, the finish time, the end-to-end latency, the preemptions, the
prefix-cache hit tokens and the mean inter-token latency as a report gives them), and a
tally per file.
`--paths` also runs the interpreter and one iteration at a time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracle"))
import test_vllm_real  # noqa: E402
import vllm_compare  # noqa: E402
import vllm_scenarios  # noqa: E402
from vllm_model import Clock  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--paths", action="store_true", help="every serq path, not the default")
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
            program.write_text(vllm_scenarios.program(scenario, folder, program.stem, clock))
            parted = None
            expected = vllm_scenarios.figures(real, scenario, clock)
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


if __name__ == "__main__":
    main()
