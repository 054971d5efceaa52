"""serq against vLLM's own scheduler, request for request.

tests/oracle/vllm_real/<version>/*.json.gz hold what vLLM's `Scheduler` (driven step by
step by tests/oracle/vllm_real.py, recorded by scripts/record_vllm_real.py) gave on 611
scenarios of tests/oracle/vllm_scenarios.py (the families `generate`, `generate_edge`,
`generate_domain` and `generate_large`), each: per request the first- and last-token
steps, the preemptions and the tokens the prefix cache gave it at its first and last
admission, and the scheduler steps. vLLM 0.30.0 caps a prefill by the long-prefill
threshold always (the scenarios' programs write the plain `chunk`); vLLM 0.34.0 not
when the request is alone, as lib/vllm.sq's `long_prefill` writes it (the spec's
programs). vLLM is not needed here: the outcomes are data.

- The scheduler model (vllm_model.py) gives every outcome, field for field.
- serq runs each scenario's program (lib/vllm.sq's `vllm_request` on the step clock) and
  gives what the program observes (the first and last token, the preemptions, the hit at
  the last admission, the steps), on the generated code with fast-forwarding, and on a
  sample also the interpreter and one iteration at a time.
"""

from __future__ import annotations

import gzip
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
FILES = sorted(DATA.glob("*/*.json.gz"))
VERSIONS = {"0.30.0": False, "0.34.0": True}  # the version: whether a request alone is capped


def _load(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


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


RECORDS = [(path, record) for path in FILES for record in _load(path)["scenarios"]]
IDS = [f"{path.parent.name}-{path.name.split('.')[0]}{record['k']}" for path, record in RECORDS]


def test_the_records_are_both_versions_each_with_its_rule():
    assert {path.parent.name for path in FILES} == set(VERSIONS)
    for path in FILES:
        data = _load(path)
        assert data["vllm"] == path.parent.name
        assert data["alone"] is VERSIONS[data["vllm"]]
        assert all(decode(r["scenario"]).config.alone is data["alone"] for r in data["scenarios"])
    assert len(RECORDS) == 2 * 611


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}-{p.name}" for p in FILES])
def test_the_model_is_vllm(path):
    """Every outcome of the model, every field, is vLLM's."""
    for record in _load(path)["scenarios"]:
        scenario = decode(record["scenario"])
        assert simulate(scenario) == decode_result(record["real"]), record["k"]


@pytest.mark.parametrize(("path", "record"), RECORDS, ids=IDS)
def test_serq_is_vllm(path, record, tmp_path):
    scenario = decode(record["scenario"])
    real = vllm_scenarios.comparable(decode_result(record["real"]))
    program = tmp_path / f"{path.name.split('.')[0]}{record['k']}.sq"
    program.write_text(vllm_scenarios.program(scenario, tmp_path, program.stem))
    runs = [(True, True)]
    if record["k"] % 7 == 0:  # a sample on the interpreter and one iteration at a time
        runs += [(False, True), (True, False)]
    for codegen, fast_forward in runs:
        ours = vllm_compare.run_serq(program, scenario, codegen, fast_forward)
        assert ours == real, (codegen, fast_forward, _difference(real, ours))


def _difference(real: Result, ours: Result | str) -> str:
    if isinstance(ours, str):
        return ours
    return vllm_compare.first_difference(real, ours)
