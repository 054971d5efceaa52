"""Jobs of infinite work: found when a run ends, for a warning.

A `run` whose work evaluates to `inf` is legal (the reference runs it), but the job never
completes. At a fifo stage it keeps a server for the rest of the run and everything
queued behind it waits to the end; at a ps stage it takes a share of the capacity for
ever (but at a rate of inf, where every job present ends at once: `PsStage`); at a delay
the session never comes back. The run goes on, so this is not an error, but it is a way
a run stops moving, and the report's numbers after it describe a stage that no longer
works as written. `find` lists them from what is still pending when the run ends: the
engine's events at time inf (a fifo or delay completion; the generated code and the
interpreter both schedule one per job in service), the finish tags of the ps stages'
jobs, the flows (`run a, b (w)`) with work inf left, and a step engine's runs of inf
tokens (each iteration gives them their tokens; they never end).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from serq import ir
from serq.sim.errors import number
from serq.sim.flows import FlowStage
from serq.sim.stages import FifoStage, PsStage
from serq.sim.step import StepStage

INF = math.inf


@dataclass(frozen=True, slots=True)
class Endless:
    """A job of infinite work still at `stage` when the run ended."""

    stage: int  # its index in the program's stages
    serial: int  # the session's (below 0: a spill's anonymous job)
    since: float  # when it started service (a ps or delay job: when it arrived)
    behind: int = 0  # at a fifo stage, the jobs waiting for a server when the run ended


def find(world: Any) -> list[Endless]:
    """The jobs of infinite work at the stages of `world`."""
    found: dict[int, Endless] = {}
    for entry in world.engine._heap:
        if entry[0] != INF:
            continue
        job = entry[3]
        stage = getattr(job, "at", None)
        if stage is None or not hasattr(job, "serial"):
            continue  # a ps stage's completion, a step iteration, a flow: not a job
        behind = len(stage.waiting) if isinstance(stage, FifoStage) else 0
        found[id(job)] = Endless(stage.index, job.serial, job.started, behind)
    networks = {id(s.network): s.network for s in world.stages if isinstance(s, FlowStage)}
    for network in networks.values():  # a flow of work inf (`run a, b (inf)`) never finishes
        for job, flow in network.flows.items():
            if flow.left == INF:
                found[id(job)] = Endless(flow.stages[0].index, job.serial, job.started)
    for stage in world.stages:
        if isinstance(stage, StepStage):  # a run of inf tokens takes them for ever
            for r in stage.residents:
                if r.remaining == INF:
                    s = r.session
                    found[id(s)] = Endless(stage.index, s.serial, s.started)
            continue
        if not isinstance(stage, PsStage):
            continue  # only a ps stage keeps finish tags
        for tag, _, job in stage.heap:
            if tag == INF:
                found[id(job)] = Endless(stage.index, job.serial, job.started)
    return list(found.values())


def warnings(program: ir.Program, endless: list[Endless]) -> list[tuple[Any, str]]:
    """(origin, message) for each stage that holds jobs of infinite work, naming the first
    of them: the W-stall warnings of `endless`."""
    by_stage: dict[int, list[Endless]] = {}
    for e in sorted(endless, key=lambda e: (e.since, e.serial)):
        by_stage.setdefault(e.stage, []).append(e)
    out = []
    for index, jobs in sorted(by_stage.items()):
        decl = program.stages[index]
        name = decl.name if decl.index is None else f"{decl.name}[{decl.index}]"
        first = jobs[0]
        more = len(jobs) - 1
        whose = "a spill's" if first.serial < 0 else f"session {first.serial}'s"
        what = f"{whose} job of infinite work" + (f" (and {more} more)" if more else "")
        since = f"since t = {number(first.since)}"
        if isinstance(decl.kind, ir.Fifo):
            behind = max(e.behind for e in jobs)
            waits = (
                f", and {behind} job{'s wait' if behind != 1 else ' waits'} behind it to the "
                "end of the run"
                if behind
                else ""
            )
            why = f"stage `{name}` has kept a server for {what} {since}; it never completes{waits}"
        elif isinstance(decl.kind, ir.Step):
            why = f"stage `{name}` has served {what} {since}; it never completes"
        elif isinstance(decl.kind, ir.Ps):
            why = f"stage `{name}` has shared its capacity with {what} {since}; it never completes"
        else:  # a delay: the session never comes back (a spill's job has none)
            gone = "it never completes" if first.serial < 0 else "the session never comes back"
            why = f"stage `{name}` has held {what} {since}; {gone}"
        out.append((decl.origin, why))
    return out
