"""A gauge as one line of block characters, for the terminal report.

The interval [warmup, end] is cut into equal slices; each slice shows the gauge's time
average over it, scaled between the lowest and the highest slice.
"""

from __future__ import annotations

import math
from bisect import bisect_right

SPARK_LEVELS = "▁▂▃▄▅▆▇█"
SPARK_WIDTH = 24


def sparkline(
    times: tuple[float, ...],
    values: tuple[float, ...],
    start: float,
    end: float,
    width: int = SPARK_WIDTH,
) -> str:
    """A gauge's time average over each of `width` equal slices of [start, end] as block
    characters, the lowest slice `▁` and the highest `█` (all `▄` when the value is
    constant); empty when there is no interval or no change point."""
    if not times or not end > start or width < 1:
        return ""
    step = (end - start) / width
    averages = []
    for k in range(width):
        low, high = start + k * step, start + (k + 1) * step if k < width - 1 else end
        averages.append(_time_average(times, values, low, high))
    finite = [a for a in averages if math.isfinite(a)]
    if not finite:
        return ""
    least, most = min(finite), max(finite)
    top = len(SPARK_LEVELS) - 1

    def level(a: float) -> str:
        if not math.isfinite(a):
            return " "
        if most == least:
            return SPARK_LEVELS[top // 2]
        return SPARK_LEVELS[round((a - least) / (most - least) * top)]

    return "".join(level(a) for a in averages)


def _time_average(
    times: tuple[float, ...], values: tuple[float, ...], low: float, high: float
) -> float:
    """The average over [low, high] of the step function that is `values[i]` from
    `times[i]` on (NaN before the first change point)."""
    i = bisect_right(times, low) - 1
    if i < 0:
        return math.nan
    total, at = 0.0, low
    while at < high:
        until = times[i + 1] if i + 1 < len(times) and times[i + 1] < high else high
        total += values[i] * (until - at)
        at, i = until, i + 1
    return total / (high - low)
