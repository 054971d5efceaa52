"""The compiled path's buffers: the samples of each `observe` and the change points of
each gauge, kept in lists by the generated code and moved to the recorder's typed arrays
a block at a time (one C call a block, where an array's append converts each item)."""

from __future__ import annotations

from struct import pack

from serq.sim.recorder import StatsRecorder

BLOCK = 4096  # samples buffered per observation before they move to the recorder's arrays


class SampleBuffer:
    """The samples of one `observe` not yet in the recorder's arrays: one flat list of
    (time, session, turn, value) rows, each added with one `extend` of a tuple, that
    `flush` splits into the four arrays, a block at a time (one C call a sample, where
    an array's append converts every item on its own)."""

    __slots__ = ("items", "columns")

    def __init__(self, columns: tuple) -> None:
        self.columns = columns
        self.items: list = []

    def flush(self) -> None:
        """Move the buffered samples to the arrays, in order."""
        items = self.items
        n = len(items) // 4
        if not n:
            return
        for i, column in enumerate(self.columns):
            column.frombytes(pack(f"{n}{column.typecode}", *items[i::4]))
        items.clear()


class GaugePoints:
    """The change points of one gauge not yet in the recorder's arrays: two lists (times,
    values) that `flush` moves to the arrays, keeping the last two points, which an
    instant read again may change (`StatsRecorder.gauges`)."""

    __slots__ = ("times", "values", "columns")

    def __init__(self, columns: tuple) -> None:
        self.columns = columns
        self.times: list[float] = []
        self.values: list[float] = []

    def flush(self, keep: int = 2) -> None:
        """Move all but the last `keep` points to the arrays, in order."""
        n = len(self.times) - keep
        if n <= 0:
            return
        for column, items in zip(self.columns, (self.times, self.values), strict=True):
            column.frombytes(pack(f"{n}d", *items[:n]))
            del items[:n]


class Samples:
    """The sample buffers of one run, one per `observe` statistic that has any."""

    def __init__(self, recorder: StatsRecorder) -> None:
        self.recorder = recorder
        self.buffers: dict[int, SampleBuffer] = {}

    def buffer(self, stat: int) -> SampleBuffer:
        found = self.buffers.get(stat)
        if found is None:
            found = self.buffers[stat] = SampleBuffer(self.recorder.samples(stat))
        return found

    def flush(self) -> None:
        for buffer in self.buffers.values():
            buffer.flush()
