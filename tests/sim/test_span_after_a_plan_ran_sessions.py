"""A span does not skip the settle that goes on with what a plan's sessions did.

A step engine's plan runs the sessions it admits (spec §3: the stages start after the
settle), so what they do then, joining the queue of a pool no stage serves, arriving at
an engine that has already planned nothing at this instant, or a preemption's release
making room, comes after the pools' retry and the engines' starts; the next event's
settle admits or starts them (pyserq 0.1.2 and 0.1.4 alike). While another engine
decodes, that next event is its iteration's end, which a span skipped: the session
waited for the end of the span, or the next arrival (tests/sim/NOTES.md §65, found by
`fn main` joint g2685: a decoder's request read its KV in a plan and waited at its slot
pool 18 s instead of 0.5). No span starts at an instant a plan admitted or preempted
(`StepStage.extend`).
"""

from __future__ import annotations

import pytest

from serq.sim.api import compile_program, execute

# E decodes 100 tokens from 10 to 60; D admits each later session to `kv` in a plan, and
# the session, past a run of no work, queues at `r`, which has room: it is admitted at
# E's next iteration end, half a second later, as the references have it
PROGRAM = """
pool kv0 {
  cap 1000;
  admit via E;
}
stage E : step {
  budget 10;
  cost 0.5;
  memory kv0;
}
pool kv {
  cap 100;
  admit via D;
}
pool r {
  cap 2;
}
stage D : step {
  budget 10;
  cost 0.5;
  memory kv;
}
stage z : delay;
workload {
  arrive renewal(10);
}
session {
  set t0 = now;
  branch (serial == 0) {
    hold kv0 (10) {
      run E decode (100);
    }
  } else {
    hold kv (10) {
      run z (0);
      hold r (1) {
        observe wait = now - t0;
        run D decode (1);
      }
    }
  }
  observe total = now - t0;
}
run {
  horizon 45;
  warmup 0;
  seed 1;
}
"""

MAIN = """
fn main() {
  pool kv0 {
    cap 1000;
    admit via E;
  }
  stage E : step {
    budget 10;
    cost 0.5;
    memory kv0;
  }
  pool kv {
    cap 100;
    admit via D;
  }
  pool r {
    cap 2;
  }
  stage D : step {
    budget 10;
    cost 0.5;
    memory kv;
  }
  stage z : delay;
  workload {
    arrive renewal(10);
    turn {
      set t0 = now;
    }
    session {
      turn;
    }
  }
  server {
    branch (serial == 0) {
      hold kv0 (cost(kv0, 10)) {
        run E decode (cost(E, 100));
      }
    } else {
      hold kv (cost(kv, 10)) {
        run z (cost(z, 0));
        hold r (cost(r, 1)) {
          observe wait = now - t0;
          run D decode (cost(D, 1));
        }
      }
    }
  }
}
"""

WAYS = [{}, {"codegen": False}, {"fast_forward": False}, {"check_invariants": True}]


@pytest.mark.parametrize("text", [PROGRAM, MAIN], ids=["items", "main"])
@pytest.mark.parametrize("options", WAYS, ids=["default", "interpreter", "stepped", "checked"])
def test_a_session_a_plan_left_at_a_pool_with_room_is_admitted_at_the_next_iteration_end(
    text, options
):
    compiled, diagnostics = compile_program(text, "span.sq", horizon=45, seed=1)
    assert compiled is not None, diagnostics
    report, said = execute(compiled, **options)
    assert report is not None, said
    wait = report.observe("wait")
    assert list(wait.times) == [20.5, 30.5, 40.5]
    assert list(wait.samples) == [0.5, 0.5, 0.5]
    assert report.ended == 3


# the same, but the session admitted in D's plan runs on D2, declared before D: D2 has
# planned at this instant already, and starts at E's next iteration end
ANOTHER_ENGINE = """
pool kv0 {
  cap 1000;
  admit via E;
}
stage E : step {
  budget 10;
  cost 0.5;
  memory kv0;
}
stage D2 : step {
  budget 10;
  cost 0.25;
}
pool kv {
  cap 100;
  admit via D;
}
stage D : step {
  budget 10;
  cost 0.5;
  memory kv;
}
workload {
  arrive renewal(10);
}
session {
  set t0 = now;
  branch (serial == 0) {
    hold kv0 (10) {
      run E decode (100);
    }
  } else {
    hold kv (10) {
      run D2 decode (1);
      observe done = now - t0;
    }
  }
}
run {
  horizon 45;
  warmup 0;
  seed 1;
}
"""


@pytest.mark.parametrize("options", WAYS, ids=["default", "interpreter", "stepped", "checked"])
def test_a_session_a_plan_sent_to_an_engine_that_had_planned_starts_at_the_next_iteration_end(
    options,
):
    compiled, diagnostics = compile_program(ANOTHER_ENGINE, "span.sq")
    assert compiled is not None, diagnostics
    report, said = execute(compiled, **options)
    assert report is not None, said
    done = report.observe("done")
    assert list(done.times) == [20.75, 30.75, 40.75]
    assert list(done.samples) == [0.75, 0.75, 0.75]
