"""The spec's deterministic vLLM scenarios (§7, "How the correspondence is checked"), written
as the spec writes them: examples/oracle/*.sq, each a complete program on lib/vllm.sq's
`vllm_request` with the engine's chunk written through lib/vllm.sq's `long_prefill`, so a
request alone takes the whole budget and `let chunk = 0;` is no cap at all.

Every program runs on the step clock (cost 1), so a time is a scheduler step. Per
request: the first-token step (the time of its first `ttft` sample), the last-token
step (`last`; None for a request the pool rejected) and its preemptions (its `resumed`
samples, one per admission, less one); per scenario the pool's preemptions and
rejections and the engine's iterations.

Worked out by hand from the vLLM rules of §7 (the derivations are in `WORKED` below):
self_preemption, chunked_prefill, request_cap, head_of_line, chunk_cap and
serve_newest_first_preempt and serve_newest_first_victim in full; the four six-request scenarios (mixed39 and the
serve orders on it) through step 7, where every request but the last two has its first
token, with the rest the values serq and pyserq 0.1.2 agree on. pyserq 0.1.2 gives the
same numbers on every scenario but two served newest first: where the request served
first preempts itself it serves the older one on in that step, where vLLM's running loop
ends (serve_newest_first_preempt); where the older request preempts the newest, already
served, it panics ("no entry found for key", serve_newest_first_victim).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

import serq

ORACLE = Path(__file__).resolve().parents[2] / "examples" / "oracle"

Outcome = tuple[dict[int, tuple[float | None, float | None, int]], int, int, int]

# name: ({request: (first-token step, last-token step, preemptions)}, pool preemptions,
# rejections, iterations)
EXPECTED: dict[str, Outcome] = {
    "self_preemption": ({0: (1.0, None, 0)}, 1, 1, 26),
    "chunked_prefill": ({0: (1.0, 30.0, 0), 1: (2.0, 31.0, 0), 2: (9.0, 18.0, 0)}, 0, 0, 31),
    "request_cap": (
        {
            0: (1.0, 8.0, 0),
            1: (1.0, 12.0, 0),
            2: (9.0, 13.0, 0),
            3: (13.0, 18.0, 0),
            4: (14.0, 17.0, 0),
        },
        0,
        0,
        18,
    ),
    "head_of_line": (
        {0: (1.0, 30.0, 0), 1: (31.0, 40.0, 0), 2: (31.0, 35.0, 0), 3: (31.0, 35.0, 0)},
        0,
        0,
        40,
    ),
    "chunk_cap": ({0: (5.0, 10.0, 0), 1: (3.0, 8.0, 0), 2: (2.0, 7.0, 0)}, 0, 0, 10),
    "mixed39": (
        {
            0: (2.0, 61.0, 0),
            1: (2.0, 121.0, 0),
            2: (7.0, 46.0, 0),
            3: (6.0, 89.0, 1),
            4: (48.0, 77.0, 0),
            5: (62.0, 161.0, 0),
        },
        1,
        0,
        161,
    ),
    "serve_admission": (
        {
            0: (2.0, 61.0, 0),
            1: (2.0, 121.0, 0),
            2: (7.0, 80.0, 1),
            3: (6.0, 137.0, 1),
            4: (82.0, 111.0, 0),
            5: (81.0, 180.0, 0),
        },
        2,
        0,
        180,
    ),
    "serve_prefill_first": (
        {
            0: (2.0, 61.0, 0),
            1: (2.0, 121.0, 0),
            2: (7.0, 80.0, 1),
            3: (6.0, 137.0, 1),
            4: (82.0, 111.0, 0),
            5: (81.0, 180.0, 0),
        },
        2,
        0,
        180,
    ),
    "serve_newest_first": (
        {
            0: (2.0, 61.0, 0),
            1: (2.0, 121.0, 0),
            2: (7.0, 46.0, 0),
            3: (6.0, 85.0, 0),
            4: (48.0, 77.0, 0),
            5: (62.0, 161.0, 0),
        },
        0,
        0,
        161,
    ),
    "serve_newest_first_preempt": ({0: (1.0, 31.0, 0), 1: (3.0, 53.0, 1)}, 1, 0, 53),
    "serve_newest_first_victim": ({0: (1.0, 30.0, 0), 1: (3.0, 49.0, 1)}, 1, 0, 49),
}

# The reference panics on this one (pyserq 0.1.2, interp.rs: "no entry found for key"),
# and serves the older request on after the newest preempts itself in the other.
REFERENCE_PANICS = {"serve_newest_first_victim"}
NOT_VLLM = {"serve_newest_first_preempt"}

WORKED = {
    "self_preemption": """
        prompt 40, 40 outputs, 4 blocks of 16, budget 64. Step 0: alone, so no cap; the
        hold takes its hit, 0, and the prefill all 40, which grows it to 3 blocks: first
        token at 1. Decode token k reaches position 40 + k at step k; at step 25 it needs a 5th
        block: the victim is the request itself (1 preemption, computed 64). Step 26:
        known = 65 > 64 = the cap, so its reservation is rejected: no last token, 26
        iterations (0..25).""",
    "chunked_prefill": """
        budget 32, no cap. Step 0: r0 takes 20 (first token 1), r1 12 of 24. Step 1: r0
        decodes, r1 its last 12 (first token 2). Step 2: r2 (200 tokens, sent at 2) gets
        30 of the 30 the decodes leave, then 30 a step: 170, 140, ..., 20 left at step 8,
        first token 9; 9 decodes -> last 18. r0's 29 decodes at 1..29 -> 30; r1's at
        2..30 -> 31.""",
    "request_cap": """
        two slots, budget 64. Step 0: r0 (30) and r1 (20) prefill, first tokens 1; r2
        waits for a slot. r0's 7 decodes end at 8: r2 prefills 25 at step 8 (first 9),
        decodes 9..12 (last 13). r1 ends at 12: r3 prefills at 12 (first 13), decodes
        13..17 (last 18). r2 ends at 13: r4 prefills at 13 (first 14), decodes 14..16
        (last 17). 18 iterations.""",
    "head_of_line": """
        10 blocks, budget 256. r0 (100) prefills at 0 into 7 blocks, first token 1, 29
        decodes -> 30. r1 (120, 8 blocks) does not fit beside r0 from step 1 and blocks
        r2 and r3 behind it. At 30 r0 ends; r1, r2 and r3 are admitted in one step,
        evicting r0's cached blocks: first tokens 31. r2, r3: 4 decodes -> 35; r1: 9
        decodes -> 40.""",
    "chunk_cap": """
        budget 64, long_prefill(reqs, 24): never alone. Step 0: r0 24, r1 24. Step 1: r0
        24, r1 24, r2 admitted with 10 of the 16 left (first token 2). Step 2: r0 24, r1
        its last 22 (first 3), r2 decodes. Step 3: r0 24 (4 left). Step 4: r0 4 (first 5).
        Five decodes each: r2 2..6 -> 7, r1 3..7 -> 8, r0 5..9 -> 10.""",
    "serve_newest_first_preempt": """
        5 blocks, budget 32, no cap, served by (-admission). Step 0: r0 (20) alone, 2
        blocks, first token 1. Step 1: r0 decodes; r1 (40) admitted, prefills 31 (2
        blocks). Step 2: newest first, r1 prefills 9 (3 blocks; first token 3),
        r0 decodes: 80 of 80 units. Step 11: r1, served first, needs a 4th block; the
        lifo victim is r1 itself: it is preempted (computed 48, its 3 blocks cached) and
        the running loop ends, so r0 gets nothing at step 11 (the reference serves it).
        r1 cannot come back beside r0 (4 blocks + r0's 2 > 5); r0's growths at 14 and 30
        evict two of r1's cached blocks; r0's 29th decode is at step 30 -> last 31. At 31
        r1 is admitted with its one cached block (hit 16, known 49), prefills 32 then 1,
        first token again at 33, 20 decodes at 33..52 -> last 53. 53 iterations.""",
    "serve_newest_first_victim": """
        as serve_newest_first_preempt on 6 blocks. Step 11: r1 grows to 4 blocks, 96 of
        96. Step 13: r1, served first, decodes within its blocks; r0 then needs a 3rd
        block, and the lifo victim is r1, already scheduled: its token is given back and
        it is preempted at 50 computed (3 blocks cached). r1 (known 51) needs 4 blocks
        beside r0's 3 of 6 and waits; r0 decodes on, 1..29 -> last 30, its growth at 29
        evicting one of r1's blocks. At 30 r1 comes back with a hit of 32, prefills 19
        (first token again at 31) and its 18 remaining decodes at 31..48 -> last 49.""",
    "mixed39": """
        39 blocks, budget 96, long_prefill(reqs, 64). Step 0: r0 alone, no cap: 96 of
        150. Step 1: r0 54 (first token 2), r1 40 of the 42 left (first token 2). Step 3:
        r2 capped at 64 of 200. Step 4: r2 64, r3 30 of 60 (the 4th slot). Step 5: r2 64,
        r3 30 (first token 6). Step 6: r2 8 (first token 7). r4 waits for a slot; the
        four residents' growth fills the 9 free blocks and r3, the newest, is preempted.""",
}


def outcome(report) -> Outcome:
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    admissions: dict[int, int] = defaultdict(int)
    o = report.observe("ttft")  # observed at the first token: its time is the step
    for session, time in zip(o.sessions, o.times, strict=True):
        first.setdefault(session, time)
    o = report.observe("last")
    for session, time in zip(o.sessions, o.times, strict=True):
        last[session] = time
    for session in report.observe("resumed").sessions:
        admissions[session] += 1
    requests = {s: (first.get(s), last.get(s), admissions[s] - 1) for s in sorted(admissions)}
    kv = [p for p in report.pools if p.name == "kv"][0]
    return requests, kv.preemptions, kv.rejected, report.stages[0].iterations


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("fast_forward", [True, False])
def test_scenario_gives_the_outcome_worked_by_hand(name, fast_forward):
    path = ORACLE / f"{name}.sq"
    report = serq.run(serq.compile(str(path)), fast_forward=fast_forward)
    assert outcome(report) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - REFERENCE_PANICS - NOT_VLLM))
def test_scenario_is_the_references(name):
    pyserq = pytest.importorskip("pyserq")
    path = ORACLE / f"{name}.sq"
    assert outcome(pyserq.run(pyserq.compile(str(path)))) == EXPECTED[name]


def test_the_reference_serves_on_after_a_self_preemption():
    """Newest first, r1 preempts itself at step 11; vLLM's running loop ends there, the
    reference's goes on and serves r0 in the same step: r0 ends a step sooner (30, not
    31), and so does r1 (52, not 53), in one iteration fewer."""
    pyserq = pytest.importorskip("pyserq")
    theirs = pyserq.run(pyserq.compile(str(ORACLE / "serve_newest_first_preempt.sq")))
    assert outcome(theirs) == ({0: (1.0, 30.0, 0), 1: (3.0, 52.0, 1)}, 1, 0, 52)


def test_the_reference_panics_on_newest_first_when_the_victim_was_served():
    """Why serve_newest_first_victim has no reference value: pyserq 0.1.2 panics on it."""
    pyserq = pytest.importorskip("pyserq")
    with pytest.raises(BaseException, match="no entry found for key"):
        pyserq.run(pyserq.compile(str(ORACLE / "serve_newest_first_victim.sq")))


def test_every_scenario_is_worked_or_named():
    """The six scenarios of §7 and the four serve orders are all here, each written on
    lib/vllm.sq with the long_prefill chunk; the small ones carry their derivation."""
    programs = {p.stem for p in ORACLE.glob("*.sq")} - {"vllm_request"}
    assert programs == set(EXPECTED)
    for name in EXPECTED:
        text = (ORACLE / f"{name}.sq").read_text()
        assert 'use "../lib/vllm.sq";' in text and "chunk long_prefill(reqs, chunk);" in text
    assert set(WORKED) <= set(EXPECTED)


def test_the_alone_exception_takes_the_whole_budget():
    """mixed39 at step 0: the first request is alone, so long_prefill gives no cap and it
    prefills 96 of its 150 tokens, then 54 at step 1, first token at 2. With a plain
    `chunk 64` it would take 64 and 64 and 22: first token at 3."""
    text = (ORACLE / "mixed39.sq").read_text()
    plain = text.replace("chunk long_prefill(reqs, chunk);", "chunk chunk;")
    report = serq.run(serq.compile(source=plain.replace('"../lib/', f'"{ORACLE.parent}/lib/')))
    o = report.observe("ttft")
    assert dict(zip(o.sessions, o.times, strict=False))[0] == 3.0
    assert EXPECTED["mixed39"][0][0][0] == 2.0
