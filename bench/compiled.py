"""The compiled event path against the interpreter and pyserq 0.1.2, shape by shape.

Run by hand from the repository root (pyserq 0.1.2 installed):

    PYTHONPATH=. python bench/compiled.py [--customers N] [--repeat R] [--only NAME]

Each shape runs to the horizon that brings about N customers (100,000 by default), in
one process with both simulators: serq's interpreter (`codegen=False`), serq's compiled
path (the default) and pyserq. Compiling is outside the timing; a run is
`pyserq.run(...)` or `serq.run(...)`, report included. It prints the least CPU time
(`time.process_time`) of R runs (3 by default) of each, and each serq time over pyserq's.
The straight shapes (`mm1`, `ps`, `mm1_init_end`) are `straight.py`'s own (issue 18 item 2).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import serq  # noqa: E402
from bench.timing import cpu_best_each  # noqa: E402

RUN = "run {{ horizon {horizon}; warmup 10; seed 1; }}\n"

# name: (program text without its run block, customers per unit of time)
SHAPES = {
    "mm1": (
        """stage server : fifo(1);
workload { arrive poisson(0.8); }
session {
  set arrived = now;
  run server (~exp(1));
  observe sojourn = now - arrived;
}
""",
        0.8,
    ),
    "ps": (
        """stage cpu : ps(1);
workload { arrive poisson(0.6); }
session {
  set arrived = now;
  run cpu (~h2(1, 9));
  observe sojourn = now - arrived;
}
gauge jobs = queue(cpu) + busy(cpu);
""",
        0.6,
    ),
    "mm1_init_end": (
        """stage server : fifo(1);
workload { arrive poisson(0.8); init { set t0 = now; } }
session {
  run server (~exp(1));
  observe sojourn = now - t0;
  end;
}
""",
        0.8,
    ),
    "fifo2": (
        """stage server : fifo(2);
workload { arrive poisson(1.6); }
session {
  set arrived = now;
  run server (~exp(1));
  observe sojourn = now - arrived;
}
""",
        1.6,
    ),
    "tandem": (
        """stage a : fifo(1);
stage b : fifo(1);
workload { arrive poisson(0.8); }
session {
  set arrived = now;
  run a (~exp(1));
  run b (~exp(1.1));
  observe sojourn = now - arrived;
}
""",
        0.8,
    ),
    "pool_hold": (
        """pool slots { cap 4; }
stage server : fifo(1);
workload { arrive poisson(0.8); }
session {
  set arrived = now;
  hold slots (1) {
    run server (~exp(1));
  }
  observe sojourn = now - arrived;
}
""",
        0.8,
    ),
    "branch": (
        """stage a : fifo(1);
stage b : fifo(1);
workload { arrive poisson(0.8); }
session {
  set arrived = now;
  branch with (0.5) {
    run a (~exp(0.5));
  } else {
    run b (~exp(0.5));
  }
  observe sojourn = now - arrived;
}
""",
        0.8,
    ),
    "closed_think": (
        """stage server : fifo(1);
stage think : delay;
workload { arrive closed(5); }
session {
  loop {
    run think (~exp(4));
    set asked = now;
    run server (~exp(1));
    observe response = now - asked;
  }
}
""",
        0.8,
    ),
    "turns_loop": (
        """stage server : fifo(1);
stage think : delay;
workload {
  arrive poisson(0.25);
  turn { set more = turn_no < 3 ? 1 : 0; }
}
session {
  turn;
  loop {
    set asked = now;
    run server (~exp(1));
    observe response = now - asked;
    branch (more) { run think (~exp(2)); turn; } else { end; }
  }
}
""",
        0.75,
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=float, default=1e5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", action="append", help="run only these shapes")
    args = parser.parse_args()
    import pyserq

    print(f"pyserq {pyserq.__version__}, serq {serq.__version__}, CPU best of {args.repeat}")
    head = ("shape", "pyserq s", "interp s", "compiled s", "interp", "compiled", "gain")
    print("{:<13} {:>9} {:>9} {:>10} {:>7} {:>8} {:>6}".format(*head))
    ratios = []
    for name, (text, rate) in SHAPES.items():
        if args.only and name not in args.only:
            continue
        source = text + RUN.format(horizon=round(args.customers / rate))
        sides = [
            (pyserq.run, pyserq.compile(source=source)),
            (serq.run, serq.compile(source=source, codegen=False)),
            (serq.run, serq.compile(source=source)),
        ]
        theirs, interp, ours = cpu_best_each(sides, args.repeat)
        ratios.append(ours / theirs)
        print(
            f"{name:<13} {theirs:>9.3f} {interp:>9.3f} {ours:>10.3f} {interp / theirs:>6.1f}x "
            f"{ours / theirs:>7.1f}x {interp / ours:>5.2f}x"
        )
    if ratios:
        median, worst = statistics.median(ratios), max(ratios)
        print(f"compiled over pyserq: median {median:.1f}x, worst {worst:.1f}x")


if __name__ == "__main__":
    main()
