"""A workload that can never fit in memory is refused at its `arrive`; a run that runs out
says so at a position, never with a traceback.

`arrive batch(1e9)` built sessions until the process died: under a memory limit, a chain
of `MemoryError`s while the error itself was being printed; without one, swapping until
the system killed it. pyserq 0.1.2 panics alike. A batch or closed population has all its
sessions live at once, each some 900 bytes at least, so one whose count times 500 bytes
exceeds the machine's memory is refused before the run. A `MemoryError` inside a run
lets go of the run's state and is an `E-run` at the workload, with the time and the live
sessions; outside the run's loop, or in the command line, one line.
"""

from __future__ import annotations

import pytest

import serq.sim
from serq import cli
from serq.sim import api as sim_api
from serq.sim import memory
from serq.sim.compiled import CompiledWorld
from serq.sim.world import World

BATCH = """stage s : fifo(1);
workload { arrive SIZE; }
session { run s (1); }
run { horizon 10; }
"""


def _run(text: str, codegen: bool = True):
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    return sim_api.execute(compiled, codegen=codegen)


@pytest.mark.parametrize(
    ("arrival", "refused"),
    [
        ("batch(1e9)", "a batch of 1,000,000,000 sessions"),
        ("closed(1e9)", "a closed population of 1,000,000,000 sessions"),
        ("batch(3e6)", "a batch of 3,000,000 sessions"),
        ("batch(1e6)", None),
        ("closed(1)", None),
        ("poisson(1e5)", None),
    ],
)
def test_a_crowd_beyond_the_memory_is_refused_at_its_arrive(arrival, refused):
    compiled, _ = sim_api.compile_program(BATCH.replace("SIZE", arrival), "t.sq")
    error = memory.too_many_at_once(compiled.program, 2**30)  # a machine of 1 GiB
    if refused is None:
        assert error is None
        return
    assert error.message.startswith(refused + ", all live at once, needs over ")
    assert error.message.endswith("(at least 500 bytes a session), and this machine has 1.0 GiB")
    assert (error.origin.line, error.origin.column) == (2, 12)
    assert memory.too_many_at_once(compiled.program, None) is None  # memory not known


@pytest.mark.parametrize("codegen", [True, False])
def test_the_run_refuses_a_batch_the_machine_cannot_hold(codegen, monkeypatch):
    monkeypatch.setattr(serq.sim, "machine_memory", lambda: 2**30)
    report, said = _run(BATCH.replace("SIZE", "batch(1e9)"), codegen)
    assert report is None
    (d,) = said
    assert (d.code, d.span.line, d.span.column) == ("E-run", 2, 12)
    assert d.message == (
        "a batch of 1,000,000,000 sessions, all live at once, needs over 465.7 GiB of "
        "memory (at least 500 bytes a session), and this machine has 1.0 GiB"
    )


@pytest.mark.parametrize("codegen", [True, False])
def test_a_run_that_runs_out_of_memory_says_when_and_with_how_many_sessions(
    codegen, monkeypatch
):
    for world in (World, CompiledWorld):
        if "run" in vars(world):

            def exhausted(self, horizon, run=world.run):
                run(self, horizon)
                raise MemoryError

            monkeypatch.setattr(world, "run", exhausted)
    report, said = _run(BATCH.replace("SIZE", "batch(3)"), codegen)
    assert report is None
    (d,) = said
    assert (d.code, d.span.line, d.span.column) == ("E-run", 2, 12)
    assert d.message == "the run ran out of memory at simulated time 3 with 0 sessions live"
    assert d.help.startswith("fewer sessions at once")


def test_memory_running_out_after_the_run_is_one_error(monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(sim_api.StatsRecorder, "finish", exhausted)
    report, said = _run(BATCH.replace("SIZE", "batch(3)"))
    assert report is None
    (d,) = said
    assert (d.code, d.message) == ("E-run", "the run ran out of memory")


def test_the_command_line_out_of_memory_is_one_line(monkeypatch, capsys):
    def exhausted(argv):
        raise MemoryError

    monkeypatch.setattr(cli, "_main", exhausted)
    assert cli.main(["check", "x.sq"]) == 1
    assert capsys.readouterr().err == "serq: out of memory\n"
