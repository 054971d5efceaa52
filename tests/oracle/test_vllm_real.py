"""serq against vLLM's own scheduler, request for request.

tests/oracle/vllm_real/*.json hold what vLLM 0.30.0's `Scheduler` (driven step by step
by tests/oracle/vllm_real.py, recorded by scripts/record_vllm_real.py) gave on 611
scenarios of tests/oracle/vllm_scenarios.py (the families `generate`, `generate_edge`,
`generate_domain` and `generate_large`), with the plain long-prefill threshold: per
request the first-
and last-token steps, the preemptions and the tokens the prefix cache gave it at its
first and last admission, and the scheduler steps. vLLM is not needed here: the
outcomes are data.

- The scheduler model (vllm_model.py) gives every outcome, field for field.
- serq runs each scenario's program (lib/vllm.sq's `vllm_request` on the step clock) and
  gives what the program observes (the first and last token, the preemptions, the hit at
  the last admission, the steps), on the generated code with fast-forwarding, and on a
  sample also the interpreter and one iteration at a time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import vllm_compare  # noqa: E402
import vllm_scenarios  # noqa: E402
from vllm_model import Config, Outcome, Result, Scenario, Session, Turn, simulate  # noqa: E402

DATA = HERE / "vllm_real"
FAMILIES = ("plain", "edge", "domain", "large")


def _load(family: str) -> dict:
    return json.loads((DATA / f"{family}.json").read_text())


def decode(data: dict) -> Scenario:
    """A recorded scenario (`scripts/record_vllm_real.encode`)."""
    sessions = tuple(
        Session(at, tuple(Turn(new, out, think, bool(forced)) for new, out, think, forced in turns))
        for at, turns in data["sessions"]
    )
    return Scenario(Config(**data["config"]), sessions)


def decode_result(data: dict) -> Result:
    requests = {(r[0], r[1]): Outcome(*r[2:]) for r in data["requests"]}
    return Result(requests, data["preemptions"], data["rejections"], data["iterations"])


RECORDS = [(family, record) for family in FAMILIES for record in _load(family)["scenarios"]]
IDS = [f"{family}{record['k']}" for family, record in RECORDS]


def test_the_records_are_vllm_0_30_and_the_plain_threshold():
    for family in FAMILIES:
        assert _load(family)["vllm"] == "0.30.0"
    assert len(RECORDS) == 611
    assert all(not decode(record["scenario"]).config.alone for _, record in RECORDS)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_model_is_vllm(family):
    """Every outcome of the model, every field, is vLLM's."""
    for record in _load(family)["scenarios"]:
        scenario = decode(record["scenario"])
        assert simulate(scenario) == decode_result(record["real"]), record["k"]


@pytest.mark.parametrize(("family", "record"), RECORDS, ids=IDS)
def test_serq_is_vllm(family, record, tmp_path):
    scenario = decode(record["scenario"])
    real = vllm_scenarios.comparable(decode_result(record["real"]))
    path = tmp_path / f"{family}{record['k']}.sq"
    path.write_text(vllm_scenarios.program(scenario, tmp_path, path.stem))
    runs = [(True, True)]
    if record["k"] % 7 == 0:  # a sample on the interpreter and one iteration at a time
        runs += [(False, True), (True, False)]
    for codegen, fast_forward in runs:
        ours = vllm_compare.run_serq(path, scenario, codegen, fast_forward)
        assert ours == real, (codegen, fast_forward, _difference(real, ours))


def _difference(real: Result, ours: Result | str) -> str:
    if isinstance(ours, str):
        return ours
    return vllm_compare.first_difference(real, ours)
