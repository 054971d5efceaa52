"""Generated deterministic programs, run by serq and by the reference (pyserq 0.1.2).

`generate(seed)` writes a random program of the kernel this simulator covers (pools with
blocks, eviction orders, queue keys, lifo or no preemption; fifo, ps and delay stages and
arrays; batch, closed and constant renewal workloads, a trace; nested holds with reserve,
reuse, cache and lease; grow, load, release, drop, branch, loop, choose; gauges), with no
draw, so the two runs must agree exactly. The generator found most of the ordering rules
the core follows (ps rescheduling after the settle, holders as the reference counts them,
growers that fit passing stalled ones ...). It leaves out the two observations where the
reference is not the oracle: `work(s)` of a ps stage (the reference sums the jobs in a
hash order, so its last bit changes from run to run) and `computed` after preempting a
hold that never loaded (the spec's reading, tests/sim/NOTES.md §1). `SEEDS` are seeds whose
program the reference runs to its horizon (some generated programs preempt themselves
forever at one instant, in both).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from tests.sim.test_core_differential import TURNS_CSV, assert_same_as_reference

pyserq = pytest.importorskip("pyserq", reason="pyserq 0.1.2 (the reference) is not installed")


def generate(seed: int) -> str:
    """A deterministic program drawn from `seed`."""
    rng = random.Random(seed)
    choice, chance = rng.choice, rng.random
    lines: list[str] = []
    pools = []
    for i in range(rng.randint(1, 3)):
        opts = [f"cap {choice([4, 8, 10, 20, 50, 100])};"]
        if chance() < 0.3:
            opts.append(f"block {choice([2, 4, 8])};")
        r = chance()
        if r < 0.4:
            opts.append("evict lru;")
        elif r < 0.7:
            keys = rng.sample(["size", "-size", "age", "-age", "last", "-last", "waiting"], 2)
            opts.append(f"evict by ({', '.join(keys)});")
        if chance() < 0.6:
            opts.append(choice(["preempt none;", "preempt lifo;"]))
        r = chance()
        if r < 0.3:
            opts.append("queue fifo;")
        elif r < 0.6:
            keys = rng.sample(["-waited", "waited", "serial", "-serial", "want", "-want"], 2)
            opts.append(f"queue by ({', '.join(keys)});")
        lines.append(f"pool p{i} {{ {' '.join(opts)} }}")
        pools.append(f"p{i}")
    stages = []
    for i in range(rng.randint(1, 3)):
        kind = choice(["fifo(1)", "fifo(2)", "delay", "ps(1)", "ps(min(present, 2))"])
        family = chance() < 0.2
        lines.append(f"stage s{i}{'[2]' if family else ''} : {kind};")
        stages.append((f"s{i}", family, kind.startswith("ps")))
    arrive = choice(
        [
            f"batch({rng.randint(1, 6)})",
            f"closed({rng.randint(1, 4)})",
            f"renewal({choice(['0.5', '1', '1.5'])})",
        ]
    )
    trace = chance() < 0.25
    if trace:
        lines.append(
            f'workload {{ arrive {arrive}; trace "turns.csv" ordered; '
            "turn { set want = new / 40; } }"
        )
    else:
        lines.append(f"workload {{ arrive {arrive}; }}")
    count = [0]

    def observe(expr: str) -> str:
        count[0] += 1
        return f"observe o{count[0]} = {expr};"

    def stage_ref(any_kind: bool = True) -> str:
        options = [s for s in stages if any_kind or not s[2]] or stages
        name, family, _ = choice(options)
        if not family:
            return name
        return f"{name}[{choice(['0', '1', 'floor(serial / 2) - 2 * floor(serial / 4)'])}]"

    def work() -> str:
        return choice(
            [
                "1",
                "0.5",
                "2",
                "serial * 0.25 + 0.5",
                "0",
                "1 + floor(serial / 2)",
                "3 - floor(serial / 3)",
            ]
        )

    def units() -> str:
        return choice(
            ["1", "2", "want", "want + 1", "serial + 1", "3", f"cachedin({choice(pools)}) + 1"]
        )

    def look(held: list[str]) -> str:
        p = choice(pools)
        exprs = [
            "now",
            f"used({p})",
            f"free({p})",
            f"cachedin({p})",
            f"holders({p})",
            f"queued({p})",
            "serial",
            "turn_no",
            f"queue({stage_ref()})",
            f"busy({stage_ref()})",
            f"work({stage_ref(any_kind=False)})",
        ]
        if held:
            exprs.append("cached")
        chosen = choice(exprs)
        if chosen.startswith("work(") and all(ps for _, _, ps in stages):
            chosen = "now"  # work(s) of a ps stage: the reference's last bit is not stable
        return observe(chosen)

    def block(depth: int, held: list[str], budget: list[int]) -> list[str]:
        out: list[str] = []
        for _ in range(rng.randint(1, 4)):
            if budget[0] <= 0:
                break
            budget[0] -= 1
            r = chance()
            if r < 0.25:
                out.append(f"run {stage_ref()} ({work()});")
            elif r < 0.45 and depth < 3:
                chosen = rng.sample(pools, rng.randint(1, min(2, len(pools))))
                parts = []
                for p in chosen:
                    part = f"{p} ({units()})"
                    if chance() < 0.2:
                        part += f" reserve ({choice(['want', '4', 'want + 2'])})"
                    parts.append(part)
                head = "hold " + ", ".join(parts)
                caching = chance() < 0.6
                if caching and chance() < 0.3:
                    head += f" reuse ({choice(['0', '1', 'want'])})"
                body = block(depth + 1, chosen + held, budget)
                tail = f" cache ({choice(['100', 'want', '3', '0'])})" if caching else ""
                if chance() < 0.15:
                    tail += f" lease {chosen[0]} ({choice(['1', '2.5', 'inf'])})"
                out.append(head + " {\n" + "\n".join(body) + "\n}" + tail + ";")
            elif r < 0.55 and held:
                out.append(f"grow {choice(held)} ({choice(['1', '2', 'want'])});")
            elif r < 0.6 and held:
                out.append(f"load {choice(held)} ({choice(['0', '1'])});")
            elif r < 0.65 and held:
                out.append(f"release {choice(held)};")
            elif r < 0.68:
                out.append(f"drop {choice(pools)};")
            elif r < 0.75 and depth < 3:
                test = choice(["serial == 0", "serial < 2", "want > 2", "now > 2"])
                then, other = block(depth + 1, held, budget), block(depth + 1, held, budget)
                out.append(
                    f"branch ({test}) {{\n"
                    + "\n".join(then)
                    + "\n} else {\n"
                    + "\n".join(other)
                    + "\n}"
                )
            elif r < 0.78:
                out.append(
                    f"choose j in {rng.randint(2, 3)} by ({choice([f'used({pools[0]})', '-j', '0'])});"
                )
                out.append(observe("j"))
            elif r < 0.8 and not held:
                out.append("end;")
            else:
                out.append(look(held))
        return out

    body = ["set want = 1 + floor(serial / 2);", observe("now")]
    if trace:
        body.append("turn;")
    if arrive.startswith("closed"):
        body.append(f"run {stages[0][0]}{'[0]' if stages[0][1] else ''} (1);")
    budget = [rng.randint(4, 14)]
    if chance() < 0.3:
        inner = block(1, [], budget)
        body.append(
            "set rounds = 0;\nloop {\n" + "\n".join(inner) + "\nset rounds = rounds + 1;\n"
            f"run {stage_ref()} (1);\nbranch (rounds >= 2) {{ end; }}\n"
            + ("turn;\n" if trace else "")
            + "}"
        )
    else:
        body += block(0, [], budget)
    body.append(observe("now"))
    lines.append("session {\n" + "\n".join(body) + "\n}")
    if chance() < 0.5:
        p = choice(pools)
        lines.append(f"gauge g = {choice([f'used({p})', f'holders({p})', f'queued({p}) > 0'])};")
    lines.append(f"run {{ horizon {choice([10, 20, 40])}; }}")
    return "\n".join(lines) + "\n"


SEEDS = [seed for seed in range(200) if seed not in (15, 46, 141, 192)]  # those do not link


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_program_runs_as_the_reference(seed: int, tmp_path: Path) -> None:
    path = tmp_path / f"generated_{seed}.sq"
    path.write_text(generate(seed), encoding="utf-8")
    shutil.copy(TURNS_CSV, tmp_path / "turns.csv")
    assert_same_as_reference(path)
