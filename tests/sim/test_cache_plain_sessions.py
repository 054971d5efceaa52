"""A program whose caches are LRU without a spill makes plain sessions.

An LRU cache keys its entries by the session and reads nothing else of it; an `evict by`
key or a spill reads the state of an entry's owner (`waiting`: is it queued somewhere?),
which only a full session keeps. So the generated code makes full sessions only for
those, and each program here gives the same report on the generated code and on the
interpreter: LRU caches held inline, with blocks, with `reuse` and `cachedin`, sessions
queued at a full pool; and, kept full, keys that read `waiting` and a spill whose
condition reads it.
"""

from __future__ import annotations

import pytest

from tests.sim.both_paths import generated_source, report_json

PROGRAMS = {
    "lru": """
pool kv { cap 300; evict lru; }
stage engine : fifo(1);
workload { arrive poisson(0.8); init { set K = 0; } }
session {
  loop {
    turn;
    set prompt = K + ~uniform(20, 80);
    hold kv (prompt) reuse (K) {
      set c = cached;
      run engine (0.01 * (prompt - c) + ~exp(0.5));
    } cache (prompt + 10);
    observe hit = c;
    set K = prompt + 10;
    branch with (0.6) { } else { end; }
  }
}
run { horizon 600; warmup 0; seed 4; }
""",
    "lru_blocks_cachedin": """
pool kv { cap 256; block 16; evict lru; }
stage engine : ps(1);
workload { arrive poisson(1.2); }
session {
  set before = cachedin(kv);
  hold kv (~uniform(0, 120)) { run engine (~exp(0.6)); } cache (~uniform(-5, 200));
  observe kept = cachedin(kv) - before;
}
run { horizon 500; warmup 0; seed 5; }
""",
    "keys_read_waiting": """
pool kv { cap 200; evict by (-waiting, last); }
stage engine : fifo(1);
stage think : delay;
workload { arrive poisson(1.5); }
session {
  hold kv (~uniform(10, 90)) { run engine (~exp(0.7)); } cache (60);
  run think (~exp(1));
  hold kv (~uniform(40, 120)) reuse (60) {
    observe hit = cached;
    run engine (~exp(0.7));
  } cache (30);
}
run { horizon 500; warmup 0; seed 6; }
""",
    "lru_spill_reads_waiting": """
pool host { cap 400; block 4; evict lru; }
pool kv { cap 120; block 4; evict lru; spill host via link (size / 32) when (waiting == 0); }
stage link : fifo(1);
stage engine : fifo(1);
stage think : delay;
workload { arrive poisson(1.4); }
session {
  hold kv (~uniform(8, 60)) { run engine (~exp(0.6)); } cache (~uniform(0, 90));
  run think (~exp(1));
  hold kv (~uniform(8, 60)) reuse (cachedin(kv)) {
    observe hit = cached;
    run engine (~exp(0.6));
  } cache (10);
  observe host = cachedin(host);
}
run { horizon 400; warmup 0; seed 7; }
""",
}
PLAIN = {
    "lru": True,
    "lru_blocks_cachedin": True,
    "keys_read_waiting": False,
    "lru_spill_reads_waiting": False,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_both_paths_agree(name: str) -> None:
    text = PROGRAMS[name]
    assert report_json(text, codegen=True) == report_json(text, codegen=False)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sessions_are_plain_only_where_nothing_reads_their_state(name: str) -> None:
    source = generated_source(PROGRAMS[name])
    assert ("s.waiter = None" not in source) == PLAIN[name]
