"""The search of the vLLM scheduler model (tests/oracle/vllm_model.py) against serq and
pyserq 0.1.2 on random scenarios (tests/oracle/vllm_scenarios.py). Run by hand; the CI
runs a sample (tests/oracle/test_vllm_model.py).

    PYTHONPATH=. python scripts/search_vllm_model.py --start 0 --count 300 --out /tmp/vsearch
    PYTHONPATH=. python scripts/search_vllm_model.py --edge ...   (vllm_scenarios.generate_edge)
    PYTHONPATH=. python scripts/search_vllm_model.py --domain ...   (generate_domain: the
        corners of the whole domain drawn often)
    PYTHONPATH=. python scripts/search_vllm_model.py --orders ...   (the running loop newest
        first or prefill first, serQ's `serve by`, the model's Config.order: not vLLM's)

prints a line per scenario that does not agree and a tally; those programs are written to
OUT/<verdict>/s<k>.sq.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracle"))
import vllm_compare  # noqa: E402
import vllm_scenarios  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--out", default="")
    parser.add_argument("--no-reference", action="store_true", help="skip pyserq")
    parser.add_argument("--edge", action="store_true", help="vllm_scenarios.generate_edge")
    parser.add_argument("--domain", action="store_true", help="vllm_scenarios.generate_domain")
    parser.add_argument(
        "--orders", action="store_true", help="serve newest first or prefill first (not vLLM's)"
    )
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="vsearch"))
    tally: collections.Counter[str] = collections.Counter()
    for k in range(args.start, args.start + args.count):
        folder = out / "all"
        folder.mkdir(parents=True, exist_ok=True)
        scenario = _generator(args)(k)
        if args.orders:
            scenario = vllm_scenarios.with_order(k, scenario)
        verdict, sides = vllm_compare.compare(scenario, folder, f"s{k}", not args.no_reference)
        tally[verdict] += 1
        if verdict != "same":
            keep = out / verdict
            keep.mkdir(exist_ok=True)
            (keep / f"s{k}.sq").write_text((folder / f"s{k}.sq").read_text())
            print(k, verdict, _detail(sides), flush=True)
    print(dict(tally), "programs in", out)


def _generator(args: argparse.Namespace) -> Callable[[int], vllm_scenarios.Scenario]:
    """The scenario generator the options name."""
    if args.domain:
        return vllm_scenarios.generate_domain
    return vllm_scenarios.generate_edge if args.edge else vllm_scenarios.generate


def _detail(sides: dict) -> str:
    errors = [f"{s}: {v}" for s, v in sides.items() if isinstance(v, str)]
    if errors:
        return "; ".join(errors)
    lines = []
    for model in ("model", "model-admission"):
        for side in ("serq", "pyserq"):
            if side in sides and sides[side] != sides[model]:
                diff = vllm_compare.first_difference(sides[model], sides[side])
                lines.append(f"{model}/{side}: {diff}")
    return " | ".join(lines)


if __name__ == "__main__":
    main()
